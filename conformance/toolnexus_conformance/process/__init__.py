"""The process side: where a target's code runs when it is not pytest's process.

A map of the room. ``_isolation`` is the session's half: ``TargetWorker`` starts
and watches one worker process per Python target, ``IsolatedExplorations`` hands
it tools to explore and turns what comes back (or a process that died) into
verdicts. ``_worker`` is the worker's half, run as ``python -m
toolnexus_conformance.process._worker``: it imports the target once and forks a
process per tool, which explores and judges that tool through the runner's public
``plan``/``run_check`` functions. ``_declared`` carries the target's declarations
from the worker to the session as plain data, so the static checks judge them
without the target's code ever running in the session's process. ``_pool`` bounds
the workers alive at once (loading or exploring), stopping idle ones to make room.
``_forkserver`` is the warm template every worker of a session is forked from,
each fork joining its own target's sandbox (``_sandbox``), so the warm-up is paid
once a session rather than once a target. ``_target`` is ``check_target``, the same
isolated run for scripts. ``_early`` starts MCP stdio servers, in the sandbox, before
the MCP SDK is imported, for the transport to adopt.

Arrows point one way: this room imports the runner and the live engine; neither
imports it back (the pytest plugin and ``check_target`` are its only callers).
"""
