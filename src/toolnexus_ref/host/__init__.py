"""The reference host: a client per wire format and the loop that runs tools for a model."""

from __future__ import annotations

from ._clients import LLM, AnthropicClient, GeminiClient, HTTPClient, OpenAIClient
from ._errors import ProviderError, ProviderRequestError
from ._loop import HostLoop, run_loop
from ._transcript import CallRecord, StopReason, Transcript

__all__ = [
    "LLM",
    "AnthropicClient",
    "CallRecord",
    "GeminiClient",
    "HTTPClient",
    "HostLoop",
    "OpenAIClient",
    "ProviderError",
    "ProviderRequestError",
    "StopReason",
    "Transcript",
    "run_loop",
]
