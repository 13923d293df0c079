"""The wire formats a model speaks, over one neutral conversation model.

``openai`` (Chat Completions), ``responses`` (the OpenAI Responses API),
``anthropic`` (Messages), ``gemini`` (generateContent) and ``ollama`` (``/api/chat``)
each implement ``WireFormat``: request and response bodies, streams and error bodies.
``PROVIDERS`` is the table of where each lives. The fakes and the reference host loop
share them, so what one writes the other reads, and the real SDKs read both.
"""

from __future__ import annotations

from . import anthropic, gemini, ollama, openai, responses
from ._format import WireFormat
from ._model import (
    FinishReason,
    Message,
    Request,
    Role,
    Settings,
    ToolCallPart,
    ToolDecl,
    ToolResultPart,
    TruncatedStream,
    Turn,
    Usage,
    WireError,
)
from ._providers import PROVIDERS, Provider, Route, provider, route
from ._sse import SSEEvent, decode_sse, encode_sse

__all__ = [
    "PROVIDERS",
    "FinishReason",
    "Message",
    "Provider",
    "Request",
    "Role",
    "Route",
    "SSEEvent",
    "Settings",
    "ToolCallPart",
    "ToolDecl",
    "ToolResultPart",
    "TruncatedStream",
    "Turn",
    "Usage",
    "WireError",
    "WireFormat",
    "anthropic",
    "decode_sse",
    "encode_sse",
    "gemini",
    "ollama",
    "openai",
    "provider",
    "responses",
    "route",
    "wire_for",
]


def wire_for(name: str) -> WireFormat:
    """The wire format for a provider name, with a clear error for an unknown one."""
    return provider(name).wire
