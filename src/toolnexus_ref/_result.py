"""The result of a tool call: text for the model, an error flag, and metadata for hosts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolResult", "coerce_result", "is_result_like"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What every tool call ends in, success or failure.

    A failing tool returns ``ToolResult.error(...)`` instead of raising, so that the
    model reads what went wrong and can act on it. ``metadata`` is for the host, not
    the model: well-known keys are ``retryable`` (bool), ``error_type`` (str),
    ``cancelled`` (bool) and ``timeout`` (seconds).
    """

    output: str
    is_error: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def ok(cls, output: str, metadata: Mapping[str, Any] | None = None) -> ToolResult:
        return cls(output, False, dict(metadata or {}))

    @classmethod
    def error(
        cls,
        message: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        retryable: bool | None = None,
    ) -> ToolResult:
        meta = dict(metadata or {})
        if retryable is not None:
            meta["retryable"] = retryable
        return cls(message, True, meta)

    @property
    def retryable(self) -> bool:
        return bool(self.metadata.get("retryable", False))


def is_result_like(value: object) -> bool:
    """Duck-typed results from other libraries: anything with ``output`` and ``is_error``."""
    return isinstance(value, ToolResult) or (
        hasattr(value, "output") and hasattr(value, "is_error")
    )


def coerce_result(value: Any) -> ToolResult:
    """Turn a duck-typed result into a ``ToolResult``; raise ``TypeError`` for anything else.

    Only the shape is adapted here; a result whose ``output`` is not text stays a
    contract violation that the conformance checks report, so this raises rather
    than guessing.
    """
    if isinstance(value, ToolResult):
        return value
    if not is_result_like(value):
        raise TypeError(
            f"a tool must return a result with 'output' and 'is_error', got {type(value).__name__}"
        )
    output = value.output
    is_error = value.is_error
    metadata = getattr(value, "metadata", None)
    if not isinstance(output, str):
        raise TypeError(f"result.output must be str, got {type(output).__name__}")
    if not isinstance(is_error, bool):
        raise TypeError(f"result.is_error must be bool, got {type(is_error).__name__}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(f"result.metadata must be a mapping or None, got {type(metadata).__name__}")
    return ToolResult(output, is_error, dict(metadata or {}))
