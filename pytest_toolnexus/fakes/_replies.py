"""What a fake model can answer: a turn, a provider error, a stream cut short, a slow
reply or no reply at all."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolnexus_ref.wire import ToolCallPart, Turn, Usage

from ._reasoning import HostedCall, Reasoning, ScriptedTurn

__all__ = [
    "AUTO_ID",
    "ESTIMATED",
    "DelayedReply",
    "ErrorReply",
    "HangReply",
    "Reply",
    "TruncatedReply",
    "call",
    "delayed",
    "error",
    "file_search",
    "hang",
    "text",
    "tool_calls",
    "truncated",
    "web_search",
]

#: The id of a call built without one: the fake gives it ``call_<n>`` when it serves
#: the call, counting per fake, so ids do not depend on which tests ran before.
AUTO_ID = "\x00auto"
#: The usage of a turn built without one: the fake estimates it from the request and
#: the reply (about four characters a token), as a provider would count.
ESTIMATED = Usage(-1, -1)


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """An HTTP error as the provider sends it (its own error body shape)."""

    status: int
    message: str = ""
    retry_after: float | None = None
    #: the request field the error is about (OpenAI's ``error.param``)
    param: str | None = None
    #: why the fake refused the request, when it did so as the provider would
    rule: str | None = None

    def describe(self) -> str:
        extra = f", Retry-After {self.retry_after:g}" if self.retry_after is not None else ""
        if self.rule:
            return f"refused ({self.rule}): {_short(self.message, 100)}"
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


@dataclass(frozen=True, slots=True)
class DelayedReply:
    """``reply``, served after ``seconds`` (latency injection)."""

    reply: Turn | ErrorReply | TruncatedReply
    seconds: float

    def describe(self) -> str:
        return f"{describe(self.reply)} after {self.seconds:g}s"


@dataclass(frozen=True, slots=True)
class HangReply:
    """No reply at all: the fake holds the request until the client gives up (its
    timeout), so the code under test meets a real timeout."""

    #: the longest the fake holds a loopback request when the client never gives up
    limit: float = 30.0

    def describe(self) -> str:
        return "no reply (hangs until the client times out)"


Reply = Turn | ErrorReply | TruncatedReply | DelayedReply | HangReply


Thinking = str | Reasoning | Sequence[str | Reasoning] | None


def text(
    value: str,
    *,
    usage: Usage | None = None,
    reasoning: Thinking = None,
    hosted: Sequence[HostedCall] = (),
) -> Turn:
    """A final answer; ``usage`` defaults to an estimate made when it is served.

    ``reasoning`` is what the model thought first (text, or ``Reasoning`` for a
    signature or a redacted block), sent in the provider's own shape; ``hosted`` are
    the items of tools the provider ran itself (``web_search(...)``, Responses API)."""
    return _turn(Turn(value, (), "stop", usage or ESTIMATED), reasoning, hosted)


def _turn(turn: Turn, reasoning: Thinking, hosted: Sequence[HostedCall]) -> Turn:
    if reasoning is None and not hosted:
        return turn
    if reasoning is None:
        thoughts: tuple[Reasoning, ...] = ()
    elif isinstance(reasoning, str | Reasoning):
        thoughts = (_reasoning(reasoning),)
    else:
        thoughts = tuple(_reasoning(r) for r in reasoning)
    return ScriptedTurn(
        turn.text, turn.tool_calls, turn.finish_reason, turn.usage, thoughts, tuple(hosted)
    )


def _reasoning(value: str | Reasoning) -> Reasoning:
    return Reasoning(value) if isinstance(value, str) else value


def web_search(query: str, *, sources: Sequence[str] = (), tool: str = "web_search") -> HostedCall:
    """A ``web_search_call`` item (Responses API): the provider searched for ``query``.
    The request must offer the ``web_search`` tool (or ``tool``, e.g. its preview)."""
    action: dict[str, Any] = {"type": "search", "query": query, "queries": [query]}
    if sources:
        action["sources"] = [{"type": "url", "url": url} for url in sources]
    return HostedCall("web_search_call", tool, {"action": action})


def file_search(*queries: str, results: Sequence[Mapping[str, Any]] | None = None) -> HostedCall:
    """A ``file_search_call`` item (Responses API); the request must offer ``file_search``.
    ``results`` (``{"file_id", "filename", "score", "text"}`` each) only when the request
    includes ``file_search_call.results``, as the API sends them."""
    return HostedCall(
        "file_search_call",
        "file_search",
        {"queries": list(queries), "results": None if results is None else list(results)},
    )


def call(name: str, args: Any = None, *, id: str | None = None) -> ToolCallPart:
    """One tool call; ``args`` as data (dumped to JSON) or raw text (sent as is).

    Without ``id`` the fake names it when serving it (``call_1``, ``call_2``, ... per
    fake), so snapshots do not depend on test order."""
    return ToolCallPart.of(id or AUTO_ID, name, {} if args is None else args)


def tool_calls(
    *calls: ToolCallPart | tuple[str, Any] | str,
    text: str | None = None,
    usage: Usage | None = None,
    reasoning: Thinking = None,
    hosted: Sequence[HostedCall] = (),
) -> Turn:
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
    return _turn(Turn(text, tuple(parts), "tool_calls", usage or ESTIMATED), reasoning, hosted)


def delayed(reply: Turn | ErrorReply | TruncatedReply, seconds: float) -> DelayedReply:
    """Serve ``reply`` after ``seconds``."""
    if seconds < 0:
        raise ValueError(f"a delay must be >= 0 seconds, got {seconds}")
    return DelayedReply(reply, seconds)


def hang(*, limit: float = 30.0) -> HangReply:
    """Never answer: the client's own timeout must end the request."""
    return HangReply(limit)


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
    if isinstance(reply, ErrorReply | TruncatedReply | DelayedReply | HangReply):
        return reply.describe()
    if reply.tool_calls:
        shown = ", ".join(f"{c.name}({_short(c.arguments)})" for c in reply.tool_calls)
        return f"tool calls: {shown}"
    return f"text {_short(json.dumps(reply.text))}"


def _short(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."
