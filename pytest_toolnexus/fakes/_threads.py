"""Server-held conversations: what a request that names an earlier reply means.

The Responses API continues from ``previous_response_id``; Anthropic's message threads
(``thread: {"type": "create"}``, then ``{"type": "continue", "previous_message_id"}``)
hold the system prompt and tools the thread was created with, and a ``continue`` sends
only the new turn. The fake keeps each served reply's conversation under its id, and
rebuilds the whole conversation before the behaviour sees the request, so a script,
a replay or a check reads the same ``Request`` whichever way the client sent it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from toolnexus_ref.wire import Message, Request, ToolResultPart

if TYPE_CHECKING:
    from ._core import FakeLLM

__all__ = ["Continued", "continued", "remembers"]


class Continued:
    """A request that continues a conversation the fake does not hold."""

    def __init__(self, rule: str, message: str, param: str, status: int) -> None:
        self.rule, self.message, self.param, self.status = rule, message, param, status


def continued(
    fake: FakeLLM, provider: str, data: dict[str, Any], request: Request
) -> Request | Continued:
    """``request`` with the held conversation in front, or why there is none."""
    if provider == "responses":
        previous = data.get("previous_response_id")
        if previous is None:
            return request
        held = fake.conversation(str(previous))
        if held is None:
            return Continued(
                "previous_response_not_found",
                f"Previous response with id '{previous}' not found.",
                "previous_response_id",
                400,
            )
        return replace(request, messages=_named((*held[0], *request.messages)))
    thread = data.get("thread") if provider == "anthropic" else None
    if not isinstance(thread, dict) or thread.get("type") != "continue":
        return request
    previous = str(thread.get("previous_message_id"))
    held = fake.conversation(previous)
    if held is None:
        return Continued(
            "thread_not_found",
            f"No thread state was found for previous_message_id '{previous}'. Replay the "
            'full conversation with thread: {"type": "create"}.',
            "thread.previous_message_id",
            404,
        )
    messages, tools = held
    # a continue may not send the create-only fields: they come from the thread; the
    # provider's checks read the raw body, where the new turn answers the held reply
    raw = dict(request.raw)
    raw["messages"] = [*_last_reply(messages), *(raw.get("messages") or [])]
    return replace(request, messages=_named((*messages, *request.messages)), tools=tools, raw=raw)


def _last_reply(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """The held conversation's last reply as Anthropic blocks (its calls are what the
    new turn's results answer)."""
    if not messages or messages[-1].role != "assistant":
        return []
    last = messages[-1]
    blocks: list[dict[str, Any]] = [{"type": "text", "text": last.text}] if last.text else []
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": {}} for c in last.tool_calls
    ]
    return [{"role": "assistant", "content": blocks}]


def remembers(provider: str, data: dict[str, Any]) -> bool:
    """Whether the reply to this request can be continued from."""
    if provider == "responses":
        return data.get("store") is not False
    thread = data.get("thread") if provider == "anthropic" else None
    return isinstance(thread, dict) and thread.get("type") in ("create", "continue")


def _named(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Results sent in a later turn name their calls from the held history."""
    names = {c.id: c.name for m in messages for c in m.tool_calls}
    out = []
    for m in messages:
        if m.tool_results and any(not r.name for r in m.tool_results):
            results = tuple(
                r
                if r.name
                else ToolResultPart(r.call_id, r.output, r.is_error, names.get(r.call_id, ""))
                for r in m.tool_results
            )
            m = replace(m, tool_results=results)
        out.append(m)
    return tuple(out)
