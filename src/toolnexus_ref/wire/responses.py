"""OpenAI Responses API (``POST /v1/responses``): request and response bodies, and the
typed event stream.

Shapes follow ``openai.types.responses`` (``Response``, ``ResponseStreamEvent``); the
tests parse our output with the real SDK and drive it with the Agents SDK, pydantic-ai
and LangChain. Tools are declared flat (``{"type": "function", "name", ...}``), calls
come back as ``function_call`` output items with a ``call_id``, and results go in as
``function_call_output`` input items. ``instructions`` is the system prompt.
``previous_response_id`` names a stored conversation: the wire only reads it; the
server side (a fake) resolves it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._model import (
    FinishReason,
    Message,
    Request,
    Settings,
    ToolCallPart,
    ToolDecl,
    ToolResultPart,
    TruncatedStream,
    Turn,
    Usage,
    WireError,
    as_list,
    as_mapping,
    expect,
    split_text,
    stream_fragment,
    system_text,
)
from ._sse import SSEEvent, decode_sse, encode_sse

__all__ = [
    "PATH",
    "accumulate",
    "build_request",
    "build_response",
    "declaration",
    "declarations",
    "error_body",
    "error_message",
    "parse_request",
    "parse_response",
    "read_stream",
    "stream_events",
]

PATH = "/v1/responses"
_CREATED = 1_700_000_000  # fixed, so that transcripts and snapshots are stable


def declaration(tool: ToolDecl, *, strict: bool = False) -> dict[str, Any]:
    """``{"type": "function", name, description, parameters, strict}``, flat."""
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": dict(tool.parameters),
        "strict": strict,
    }


def declarations(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [declaration(t) for t in tools]


def _input_items(message: Message) -> list[dict[str, Any]]:
    if message.tool_results:
        return [
            {"type": "function_call_output", "call_id": r.call_id, "output": r.output}
            for r in message.tool_results
        ]
    items: list[dict[str, Any]] = []
    if message.text or not message.tool_calls:
        items.append({"type": "message", "role": message.role, "content": message.text or ""})
    for c in message.tool_calls:
        items.append(
            {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
        )
    return items


def build_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDecl] = (),
    *,
    stream: bool = False,
) -> dict[str, Any]:
    """The whole conversation as ``input`` (stateless: ``store`` is off)."""
    body: dict[str, Any] = {
        "model": model,
        "input": [i for m in messages if m.role != "system" for i in _input_items(m)],
        "store": False,
    }
    system = system_text(list(messages))
    if system:
        body["instructions"] = system
    if tools:
        body["tools"] = declarations(tools)
    if stream:
        body["stream"] = True
    return body


def _content_text(content: object) -> str | None:
    if content is None or isinstance(content, str):
        return content
    parts = [as_mapping(p, "content part") for p in as_list(content, "message.content")]
    return "".join(str(p.get("text", "")) for p in parts if "text" in p)


def _output_text(output: object) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return _content_text(output) or ""
    return json.dumps(output)


def parse_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """The request's own input; a ``previous_response_id`` is left for the server."""
    expect(isinstance(body.get("model"), str), "'model' must be a string")
    messages: list[Message] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append(Message("system", instructions))
    raw_input = body.get("input")
    items = [{"role": "user", "content": raw_input}] if isinstance(raw_input, str) else raw_input
    names: dict[str, str] = {}
    for raw in as_list(items or [], "'input'"):
        item = as_mapping(raw, "input item")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            text = _content_text(item.get("content"))
            if role in ("system", "developer"):
                messages.append(Message("system", text))
            elif role in ("user", "assistant"):
                messages.append(Message(role, text))
            else:
                raise WireError(f"unknown message role {role!r}")
        elif kind == "function_call":
            arguments = item.get("arguments", "")
            expect(isinstance(arguments, str), "function_call.arguments must be a string")
            call = ToolCallPart(str(item.get("call_id", "")), str(item.get("name", "")), arguments)
            names[call.id] = call.name
            last = messages[-1] if messages else None
            if last is not None and last.role == "assistant":
                messages[-1] = Message("assistant", last.text, (*last.tool_calls, call))
            else:
                messages.append(Message("assistant", None, (call,)))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id", ""))
            result = ToolResultPart(
                call_id, _output_text(item.get("output")), False, names.get(call_id, "")
            )
            last = messages[-1] if messages else None
            if last is not None and last.role == "tool":
                messages[-1] = Message("tool", tool_results=(*last.tool_results, result))
            else:
                messages.append(Message("tool", tool_results=(result,)))
        # reasoning items, item references and built-in tool items carry no turn of ours
    tools = tuple(
        ToolDecl(
            str(t.get("name", "")),
            str(t.get("description") or ""),
            dict(t.get("parameters") or {"type": "object", "properties": {}}),
        )
        for t in (as_mapping(x, "tool") for x in body.get("tools") or [])
        if t.get("type") == "function"
    )
    return Request(
        body["model"],
        tuple(messages),
        tools,
        bool(body.get("stream")),
        "responses",
        body,
        _settings(body),
    )


def _settings(body: Mapping[str, Any]) -> Settings:
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        choice = str(choice.get("name", "")) if choice.get("type") == "function" else "required"
    fmt = as_mapping(body.get("text") or {}, "text").get("format")
    kind = schema = None
    if isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema"):
        kind = str(fmt["type"])
        schema = fmt.get("schema") if kind == "json_schema" else None
    limit = body.get("max_output_tokens")
    parallel = body.get("parallel_tool_calls")
    return Settings(
        tool_choice=choice if isinstance(choice, str) else None,
        parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
        max_tokens=limit if isinstance(limit, int) else None,
        response_format=kind,
        response_schema=schema if isinstance(schema, Mapping) else None,
    )


# -- responses ----------------------------------------------------------------------
def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [] if status == "in_progress" else [_text_part(text)]
    return {
        "type": "message",
        "id": item_id,
        "status": status,
        "role": "assistant",
        "content": content,
    }


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _call_item(item_id: str, call: ToolCallPart, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call.id,
        "name": call.name,
        "arguments": "" if status == "in_progress" else call.arguments,
        "status": status,
    }


def _items(turn: Turn, id: str) -> list[dict[str, Any]]:
    suffix = id.removeprefix("resp_")
    items = []
    if turn.text:
        items.append(_message_item(f"msg_{suffix}", turn.text))
    for index, call in enumerate(turn.tool_calls):
        items.append(_call_item(f"fc_{suffix}_{index}", call))
    return items


def build_response(
    turn: Turn,
    *,
    model: str,
    id: str = "resp_fake",
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``Response``; ``request`` (the body) supplies the echoed fields the API repeats."""
    echo = request or {}
    incomplete = turn.finish == "length"
    return {
        "id": id,
        "object": "response",
        "created_at": _CREATED,
        "status": "incomplete" if incomplete else "completed",
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": echo.get("instructions"),
        "max_output_tokens": echo.get("max_output_tokens"),
        "model": model,
        "output": _items(turn, id),
        "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "previous_response_id": echo.get("previous_response_id"),
        "temperature": 1.0,
        "text": echo.get("text") or {"format": {"type": "text"}},
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": list(echo.get("tools") or []),
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": _usage(turn.usage),
        "metadata": {},
        "store": echo.get("store", True),
    }


def stream_events(
    turn: Turn,
    *,
    model: str,
    id: str = "resp_fake",
    fragment: int = 8,
    request: Mapping[str, Any] | None = None,
) -> list[bytes]:
    """The event sequence the API sends: ``response.created``, ``response.in_progress``,
    then per output item ``output_item.added``, its content events and
    ``output_item.done``, then ``response.completed`` (``response.incomplete`` when cut
    by ``max_output_tokens``). Every event has a ``sequence_number``."""
    final = build_response(turn, model=model, id=id, request=request)
    events: list[bytes] = []

    def emit(kind: str, **payload: Any) -> None:
        events.append(encode_sse({"type": kind, "sequence_number": len(events), **payload}, kind))

    start = {**final, "status": "in_progress", "output": [], "incomplete_details": None}
    start["usage"] = None
    emit("response.created", response=start)
    emit("response.in_progress", response=start)
    for index, item in enumerate(final["output"]):
        where = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            emit(
                "response.output_item.added",
                output_index=index,
                item=_message_item(item["id"], "", "in_progress"),
            )
            text = str(turn.text)
            emit("response.content_part.added", **where, content_index=0, part=_text_part(""))
            for piece in split_text(text, stream_fragment(len(text), fragment)):
                emit(
                    "response.output_text.delta", **where, content_index=0, delta=piece, logprobs=[]
                )
            emit("response.output_text.done", **where, content_index=0, text=text, logprobs=[])
            emit("response.content_part.done", **where, content_index=0, part=_text_part(text))
        else:
            call = ToolCallPart(item["call_id"], item["name"], item["arguments"])
            emit(
                "response.output_item.added",
                output_index=index,
                item=_call_item(item["id"], call, "in_progress"),
            )
            size = stream_fragment(len(call.arguments), fragment)
            for piece in split_text(call.arguments, size) if call.arguments else []:
                emit("response.function_call_arguments.delta", **where, delta=piece)
            emit(
                "response.function_call_arguments.done",
                **where,
                name=call.name,
                arguments=call.arguments,
            )
        emit("response.output_item.done", output_index=index, item=item)
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    emit(kind, response=final)
    return events


def _parse_usage(raw: object) -> Usage:
    if not isinstance(raw, Mapping):
        return Usage()
    return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0))


def parse_response(body: Mapping[str, Any]) -> Turn:
    if body.get("error"):
        raise WireError(f"error body: {error_message(body)}")
    texts: list[str] = []
    calls: list[ToolCallPart] = []
    for raw in as_list(body.get("output") or [], "'output'"):
        item = as_mapping(raw, "output item")
        if item.get("type") == "message":
            texts.append(_content_text(item.get("content")) or "")
        elif item.get("type") == "function_call":
            calls.append(
                ToolCallPart(
                    str(item.get("call_id", "")),
                    str(item.get("name", "")),
                    str(item.get("arguments", "")),
                )
            )
    finish: FinishReason = "tool_calls" if calls else "stop"
    if body.get("status") == "incomplete":
        finish = "length"
    return Turn("".join(texts) or None, tuple(calls), finish, _parse_usage(body.get("usage")))


def accumulate(events: Iterable[SSEEvent]) -> Turn:
    """The turn from the final ``response.completed`` (or ``incomplete``) event."""
    for event in events:
        data = as_mapping(event.json(), "event")
        kind = data.get("type")
        if kind == "error":
            raise WireError(f"error in stream: {data.get('message')}")
        if kind == "response.failed":
            raise WireError(f"response failed: {error_message(data.get('response'))}")
        if kind in ("response.completed", "response.incomplete"):
            return parse_response(as_mapping(data.get("response"), "response"))
    raise TruncatedStream("the Responses stream ended before response.completed")


def read_stream(lines: Iterable[str]) -> Turn:
    return accumulate(decode_sse(lines))


def error_body(status: int, message: str, *, param: str | None = None) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
    kind = kinds.get(status, "server_error" if status >= 500 else "invalid_request_error")
    code = "rate_limit_exceeded" if status == 429 else None
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_message(body: object) -> str:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return str(body["error"].get("message", body["error"]))
    return json.dumps(body) if not isinstance(body, str) else body
