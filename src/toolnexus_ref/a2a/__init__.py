"""A2A both ways: a remote agent's skills as Tools, and any Tools served as an A2A agent.

Needs the ``a2a`` extra (the ``a2a-sdk`` package); everything else in
``toolnexus_ref`` works without it, and nothing imports this package unless the
A2A source is used.
"""

from __future__ import annotations

try:
    import a2a as _a2a  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised where the extra is missing
    raise ImportError('A2A support needs the a2a SDK: pip install "pytest-toolnexus[a2a]"') from exc

from ._card import CardError, CardReading, card_problems, read_card, reading_of
from ._probe import CancelProbe, probe_cancel, task_state
from ._server import LoopbackAgent, agent_app, agent_card, serve_loopback, tools_agent_app
from ._source import A2ASource, open_agent
from ._tool import READ_ONLY_TAGS, A2ATool, build_request, exposed_name, open_client

__all__ = [
    "READ_ONLY_TAGS",
    "A2ASource",
    "A2ATool",
    "CancelProbe",
    "CardError",
    "CardReading",
    "LoopbackAgent",
    "agent_app",
    "agent_card",
    "build_request",
    "card_problems",
    "exposed_name",
    "open_agent",
    "open_client",
    "probe_cancel",
    "read_card",
    "reading_of",
    "serve_loopback",
    "task_state",
    "tools_agent_app",
]
