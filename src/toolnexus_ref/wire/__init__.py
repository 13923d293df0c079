"""The three wire formats a model speaks, over one neutral conversation model.

``openai`` (Chat Completions), ``anthropic`` (Messages) and ``gemini``
(generateContent) each build and parse request bodies, response bodies and
server-sent event streams. The fakes and the reference host loop share them, so
what one writes the other reads, and the real SDKs read both.
"""

from __future__ import annotations

from types import ModuleType

from . import anthropic, gemini, openai
from ._model import (
    FinishReason,
    Message,
    Request,
    Role,
    ToolCallPart,
    ToolDecl,
    ToolResultPart,
    TruncatedStream,
    Turn,
    Usage,
    WireError,
)
from ._sse import SSEEvent, decode_sse, encode_sse

__all__ = [
    "PROVIDERS",
    "FinishReason",
    "Message",
    "Request",
    "Role",
    "SSEEvent",
    "ToolCallPart",
    "ToolDecl",
    "ToolResultPart",
    "TruncatedStream",
    "Turn",
    "Usage",
    "WireError",
    "anthropic",
    "decode_sse",
    "encode_sse",
    "gemini",
    "openai",
    "wire_for",
]

#: The wire formats by provider name.
PROVIDERS: dict[str, ModuleType] = {"openai": openai, "anthropic": anthropic, "gemini": gemini}


def wire_for(provider: str) -> ModuleType:
    """The module for a provider name, with a clear error for an unknown one."""
    try:
        return PROVIDERS[provider]
    except KeyError:
        raise ValueError(
            f"unknown provider {provider!r}; expected one of {', '.join(sorted(PROVIDERS))}"
        ) from None
