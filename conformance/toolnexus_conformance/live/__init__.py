"""The live engine: each tool explored once, every live check judged from what it saw.

A map of the room. ``_explorations`` is the door: the runner asks it for a tool's
``Observation``, and it explores the tools of a run many at a time under one
concurrency bound. ``_explorer`` explores one tool: it builds argument strategies,
runs one hypothesis search per stream (``_search``, on the long-lived threads of
``_workers``), and makes the single-call probes (``_probes``: cancellations, a
deadline, a cancelled task). Every call to a tool goes through ``_calls``, which
bounds it whatever the tool does. ``_observation`` holds what the exploration
saw, which the checks in ``checks/`` judge. Async tools and MCP sessions live on
the one background event loop of ``_loop``.

Arrows point into the shared floor below (``_model``, ``_options``, ``_subject``,
``_safety``, ``arguments``), never up to the runner or the process room.
"""
