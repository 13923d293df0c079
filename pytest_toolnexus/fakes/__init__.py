"""Fake LLMs that speak the real wire formats: scripted, schema-driven, adversarial.

Plain classes, usable without pytest::

    fake = FakeLLM([tool_calls(("add", {"a": 1, "b": 2})), text("3")])
    with fake.serve() as server:          # or: with fake.respx(): ...
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x")
        ...
    fake.verify()
"""

from __future__ import annotations

from ._behaviours import (
    ADVERSARIAL_KINDS,
    Adversarial,
    Behaviour,
    FunctionBehaviour,
    SchemaDriven,
    Script,
)
from ._core import FakeLLM
from ._replies import ErrorReply, Reply, TruncatedReply, call, error, text, tool_calls, truncated
from ._respx import HOSTS, mount_respx, respx_mock
from ._server import FakeLLMServer

__all__ = [
    "ADVERSARIAL_KINDS",
    "HOSTS",
    "Adversarial",
    "Behaviour",
    "ErrorReply",
    "FakeLLM",
    "FakeLLMServer",
    "FunctionBehaviour",
    "Reply",
    "SchemaDriven",
    "Script",
    "TruncatedReply",
    "call",
    "error",
    "mount_respx",
    "respx_mock",
    "text",
    "tool_calls",
    "truncated",
]
