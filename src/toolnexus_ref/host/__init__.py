"""The reference host: a client per wire format and the loop that runs tools for a model."""

from __future__ import annotations

from ._clients import (
    CLIENTS,
    LLM,
    AnthropicClient,
    GeminiClient,
    HTTPClient,
    OllamaClient,
    OpenAIClient,
    ResponsesClient,
)
from ._errors import ProviderError, ProviderRequestError
from ._loop import HostLoop, run_loop
from ._transcript import CallRecord, StopReason, Transcript

__all__ = [
    "CLIENTS",
    "LLM",
    "AnthropicClient",
    "CallRecord",
    "GeminiClient",
    "HTTPClient",
    "HostLoop",
    "OllamaClient",
    "OpenAIClient",
    "ProviderError",
    "ProviderRequestError",
    "ResponsesClient",
    "StopReason",
    "Transcript",
    "run_loop",
]
