"""What a fake model can answer: a turn, a provider error, or a stream cut short."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from toolnexus_ref.wire import ToolCallPart, Turn, Usage

__all__ = [
    "ErrorReply",
    "Reply",
    "TruncatedReply",
    "call",
    "error",
    "text",
    "tool_calls",
    "truncated",
]

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """An HTTP error as the provider sends it (its own error body shape)."""

    status: int
    message: str = ""
    retry_after: float | None = None

    def describe(self) -> str:
        extra = f", Retry-After {self.retry_after:g}" if self.retry_after is not None else ""
        return f"error {self.status}{extra}"


@dataclass(frozen=True, slots=True)
class TruncatedReply:
    """A streamed turn whose stream stops after ``keep`` events (no final event).

    Served without streaming, it is a body cut in half: the client cannot parse it.
    """

    turn: Turn
    keep: int = 2

    def describe(self) -> str:
        return f"truncated stream of {describe(self.turn)}"


Reply = Turn | ErrorReply | TruncatedReply


@dataclass(frozen=True, slots=True)
class _Pending:
    """A call whose id is given when the fake serves it, so that ids stay unique."""

    name: str
    arguments: Any = field(default_factory=dict)


def text(value: str, *, usage: Usage | None = None) -> Turn:
    """A final answer."""
    return Turn(value, (), "stop", usage or Usage(10, len(value.split()) or 1))


def call(name: str, args: Any = None, *, id: str | None = None) -> ToolCallPart:
    """One tool call; ``args`` as data (dumped to JSON) or raw text (sent as is)."""
    return ToolCallPart.of(id or f"call_{next(_ids)}", name, {} if args is None else args)


def tool_calls(*calls: ToolCallPart | tuple[str, Any] | str, text: str | None = None) -> Turn:
    """A turn asking for one or several calls: ``call(...)``, ``("name", args)`` or ``"name"``."""
    parts = []
    for item in calls:
        if isinstance(item, ToolCallPart):
            parts.append(item)
        elif isinstance(item, str):
            parts.append(call(item))
        else:
            parts.append(call(item[0], item[1]))
    if not parts:
        raise ValueError("tool_calls() needs at least one call")
    return Turn(text, tuple(parts), "tool_calls", Usage(10, 5 * len(parts)))


def error(status: int, message: str = "", *, retry_after: float | None = None) -> ErrorReply:
    """A provider error, e.g. ``error(429, retry_after=1)`` or ``error(500)``."""
    if not 400 <= status <= 599:
        raise ValueError(f"an error reply needs a 4xx or 5xx status, got {status}")
    return ErrorReply(
        status, message or _DEFAULT_MESSAGES.get(status, f"fake error {status}"), retry_after
    )


def truncated(turn: Turn, *, keep: int = 2) -> TruncatedReply:
    return TruncatedReply(turn, keep)


_DEFAULT_MESSAGES = {
    429: "Rate limit reached (fake)",
    500: "Internal server error (fake)",
    503: "Overloaded (fake)",
}


def describe(reply: Reply) -> str:
    """One line for failure messages."""
    if isinstance(reply, ErrorReply | TruncatedReply):
        return reply.describe()
    if reply.tool_calls:
        shown = ", ".join(f"{c.name}({_short(c.arguments)})" for c in reply.tool_calls)
        return f"tool calls: {shown}"
    return f"text {_short(json.dumps(reply.text))}"


def _short(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."
