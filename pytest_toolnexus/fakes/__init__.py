"""Fake LLMs that speak the real wire formats: scripted, schema-driven, adversarial.

Plain classes, usable without pytest::

    fake = FakeLLM([tool_calls(("add", {"a": 1, "b": 2})), text("3")])
    with fake.serve() as server:          # or: with fake.respx(): ...
        client = openai.OpenAI(base_url=server.openai_base_url, api_key="x")
        ...
    fake.verify()
"""

from __future__ import annotations

from toolnexus_ref.wire import Usage

from ._behaviours import (
    ADVERSARIAL_KINDS,
    POSSIBLE_KINDS,
    Adversarial,
    Behaviour,
    FunctionBehaviour,
    SchemaDriven,
    Script,
    Verdict,
)
from ._cassette import Cassette, Replay, conversation_shape
from ._core import FakeLLM
from ._reasoning import HostedCall, Reasoning, ScriptedTurn, signature_for
from ._record import NewEpisodes, Recorder, Recording
from ._refusals import RULES, Refusal
from ._replies import (
    DelayedReply,
    ErrorReply,
    HangReply,
    Reply,
    TruncatedReply,
    call,
    delayed,
    error,
    file_search,
    hang,
    text,
    tool_calls,
    truncated,
    web_search,
)
from ._respx import HOSTS, FakeRouter, mount_respx, respx_mock
from ._server import FakeLLMServer, MountedFake

__all__ = [
    "ADVERSARIAL_KINDS",
    "HOSTS",
    "POSSIBLE_KINDS",
    "RULES",
    "Adversarial",
    "Behaviour",
    "Cassette",
    "DelayedReply",
    "ErrorReply",
    "FakeLLM",
    "FakeLLMServer",
    "FakeRouter",
    "FunctionBehaviour",
    "HangReply",
    "HostedCall",
    "MountedFake",
    "NewEpisodes",
    "Reasoning",
    "Recorder",
    "Recording",
    "Refusal",
    "Replay",
    "Reply",
    "SchemaDriven",
    "ScriptedTurn",
    "Script",
    "TruncatedReply",
    "Usage",
    "Verdict",
    "call",
    "conversation_shape",
    "delayed",
    "error",
    "file_search",
    "hang",
    "mount_respx",
    "respx_mock",
    "signature_for",
    "text",
    "tool_calls",
    "truncated",
    "web_search",
]
