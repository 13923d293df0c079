"""Anthropic Messages: request and response bodies, and the event stream.

Shapes follow ``anthropic.types`` (``Message``, ``RawMessageStreamEvent``); the tests
parse our output with the real SDK. Tool results travel in a user message as
``tool_result`` blocks, with an ``is_error`` flag the other formats lack.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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

PATH = "/v1/messages"
_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_FINISH: dict[str, FinishReason] = {v: k for k, v in _STOP.items()}  # type: ignore[misc]


def declaration(tool: ToolDecl) -> dict[str, Any]:
    """``{name, description, input_schema}``; the toolkit declares with this too."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": dict(tool.parameters),
    }


def declarations(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [declaration(t) for t in tools]


def _input_of(call: ToolCallPart) -> Any:
    """The ``input`` object; arguments that are not JSON are passed on as text, unchanged."""
    try:
        return call.parsed_arguments()
    except ValueError:
        return call.arguments


def _blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for c in message.tool_calls:
        blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": _input_of(c)})
    for r in message.tool_results:
        blocks.append(
            {
                "type": "tool_result",
                "tool_use_id": r.call_id,
                "content": r.output,
                "is_error": r.is_error,
            }
        )
    return blocks


def build_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDecl] = (),
    *,
    stream: bool = False,
    max_tokens: int = 1024,
) -> dict[str, Any]:
    wire: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m)
        if wire and wire[-1]["role"] == role:  # the API wants roles to alternate
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": wire}
    system = system_text(list(messages))
    if system:
        body["system"] = system
    if tools:
        body["tools"] = declarations(tools)
    if stream:
        body["stream"] = True
    return body


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    parts = [as_mapping(p, "content block") for p in as_list(content, "content")]
    return "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


def _call_of(block: Mapping[str, Any]) -> ToolCallPart:
    raw = block.get("input", {})
    text = raw if isinstance(raw, str) else json.dumps(raw)
    return ToolCallPart(str(block.get("id", "")), str(block.get("name", "")), text)


def parse_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    expect(isinstance(body.get("model"), str), "'model' must be a string")
    messages: list[Message] = []
    system = body.get("system")
    if system:
        messages.append(Message("system", _text_of(system)))
    names: dict[str, str] = {}
    for raw in as_list(body.get("messages"), "'messages'"):
        m = as_mapping(raw, "message")
        raw_role = m.get("role")
        expect(raw_role in ("user", "assistant"), f"unknown message role {raw_role!r}")
        role: Role = "assistant" if raw_role == "assistant" else "user"
        content = m.get("content")
        if isinstance(content, str):
            messages.append(Message(role, content))
            continue
        blocks = [as_mapping(b, "content block") for b in as_list(content, "content")]
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text") or None
        calls = tuple(_call_of(b) for b in blocks if b.get("type") == "tool_use")
        names.update((c.id, c.name) for c in calls)
        results = tuple(
            ToolResultPart(
                str(b.get("tool_use_id", "")),
                _text_of(b.get("content")),
                bool(b.get("is_error", False)),
                names.get(str(b.get("tool_use_id", "")), ""),
            )
            for b in blocks
            if b.get("type") == "tool_result"
        )
        if results:
            messages.append(Message("tool", tool_results=results))
            if text:
                messages.append(Message("user", text))
        else:
            messages.append(Message(role, text, calls))
    tools = tuple(
        ToolDecl(
            str(t.get("name", "")),
            str(t.get("description", "")),
            dict(t.get("input_schema") or {"type": "object", "properties": {}}),
        )
        for t in (as_mapping(x, "tool") for x in body.get("tools") or [])
    )
    return Request(
        body["model"],
        tuple(messages),
        tools,
        bool(body.get("stream")),
        "anthropic",
        body,
        settings(body),
    )


def settings(body: Mapping[str, Any]) -> Settings:
    """``tool_choice`` (``auto``/``any``/``tool``/``none``, with
    ``disable_parallel_tool_use``), ``max_tokens``, and structured outputs:
    ``output_config.format`` (or the beta's top-level ``output_format``) of type
    ``json_schema``."""
    raw = body.get("tool_choice")
    choice: str | None = None
    parallel: bool | None = None
    if isinstance(raw, Mapping):
        kind = raw.get("type")
        choice = {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))
        if kind == "tool":
            choice = str(raw.get("name", ""))
        if raw.get("disable_parallel_tool_use") is True:
            parallel = False
    limit = body.get("max_tokens")
    config = body.get("output_config")
    fmt = config.get("format") if isinstance(config, Mapping) else None
    if fmt is None:
        fmt = body.get("output_format")
    schema = fmt.get("schema") if isinstance(fmt, Mapping) else None
    structured = isinstance(fmt, Mapping) and fmt.get("type") == "json_schema"
    return Settings(
        tool_choice=choice,
        parallel_tool_calls=parallel,
        max_tokens=limit if isinstance(limit, int) else None,
        response_format="json_schema" if structured else None,
        response_schema=schema if structured and isinstance(schema, Mapping) else None,
    )


def build_response(
    turn: Turn,
    *,
    model: str,
    id: str = "msg_fake",
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _blocks(turn.as_message()),
        "stop_reason": _STOP[turn.finish],
        "stop_sequence": None,
        "usage": {
            "input_tokens": turn.usage.input_tokens,
            "output_tokens": turn.usage.output_tokens,
        },
    }


def stream_events(
    turn: Turn,
    *,
    model: str,
    id: str = "msg_fake",
    fragment: int = 8,
    request: Mapping[str, Any] | None = None,
) -> list[bytes]:
    """message_start, then per block content_block_start / deltas (``text_delta`` or
    ``input_json_delta`` with ``partial_json``) / content_block_stop, then message_delta
    with the stop reason and message_stop."""
    start = build_response(Turn(usage=Usage(turn.usage.input_tokens, 1)), model=model, id=id)
    start.update(content=[], stop_reason=None)
    events = [encode_sse({"type": "message_start", "message": start}, "message_start")]
    index = 0

    def emit(kind: str, payload: dict[str, Any]) -> None:
        events.append(encode_sse({"type": kind, "index": index, **payload}, kind))

    if turn.text:
        emit("content_block_start", {"content_block": {"type": "text", "text": ""}})
        for piece in split_text(turn.text, stream_fragment(len(turn.text), fragment)):
            emit("content_block_delta", {"delta": {"type": "text_delta", "text": piece}})
        emit("content_block_stop", {})
        index += 1
    for call in turn.tool_calls:
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        emit("content_block_start", {"content_block": block})
        size = stream_fragment(len(call.arguments), fragment)
        for piece in split_text(call.arguments, size) if call.arguments else []:
            emit(
                "content_block_delta",
                {"delta": {"type": "input_json_delta", "partial_json": piece}},
            )
        emit("content_block_stop", {})
        index += 1
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": _STOP[turn.finish], "stop_sequence": None},
        "usage": {"output_tokens": turn.usage.output_tokens},
    }
    events.append(encode_sse(delta, "message_delta"))
    events.append(encode_sse({"type": "message_stop"}, "message_stop"))
    return events


def _usage(raw: object) -> Usage:
    if not isinstance(raw, Mapping):
        return Usage()
    return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0))


def parse_response(body: Mapping[str, Any]) -> Turn:
    expect(body.get("type") == "message", f"expected a message, got type {body.get('type')!r}")
    blocks = [as_mapping(b, "content block") for b in as_list(body.get("content"), "content")]
    text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text") or None
    calls = tuple(_call_of(b) for b in blocks if b.get("type") == "tool_use")
    finish = _FINISH.get(str(body.get("stop_reason")), "stop")
    return Turn(text, calls, finish, _usage(body.get("usage")))


def accumulate(events: Iterable[SSEEvent]) -> Turn:
    """Rebuild the turn, joining ``partial_json`` fragments per block index."""
    blocks: dict[int, dict[str, Any]] = {}
    finish: FinishReason | None = None
    usage = Usage()
    stopped = False
    for event in events:
        data = as_mapping(event.json(), "event")
        kind = data.get("type")
        if kind == "error":
            raise WireError(f"error in stream: {error_message(data)}")
        if kind == "message_start":
            usage = _usage(as_mapping(data.get("message"), "message").get("usage"))
        elif kind == "content_block_start":
            block = dict(as_mapping(data.get("content_block"), "content_block"))
            block["parts"] = []
            blocks[int(data.get("index", 0))] = block
        elif kind == "content_block_delta":
            found = blocks.get(int(data.get("index", 0)))
            expect(found is not None, "content_block_delta before its content_block_start")
            assert found is not None
            block = found
            delta = as_mapping(data.get("delta"), "delta")
            block["parts"].append(delta.get("text") or delta.get("partial_json") or "")
        elif kind == "message_delta":
            reason = as_mapping(data.get("delta"), "delta").get("stop_reason")
            finish = _FINISH.get(str(reason), "stop")
            out = _usage(data.get("usage"))
            usage = Usage(usage.input_tokens, out.output_tokens)
        elif kind == "message_stop":
            stopped = True
            break
    if not stopped or finish is None:
        raise TruncatedStream("the Anthropic stream ended before message_delta and message_stop")
    text = "".join(
        "".join(b["parts"]) for _, b in sorted(blocks.items()) if b.get("type") == "text"
    )
    calls = tuple(
        ToolCallPart(str(b.get("id", "")), str(b.get("name", "")), "".join(b["parts"]))
        for _, b in sorted(blocks.items())
        if b.get("type") == "tool_use"
    )
    return Turn(text or None, calls, finish, usage)


def read_stream(lines: Iterable[str]) -> Turn:
    return accumulate(decode_sse(lines))


def error_body(status: int, message: str) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }
    kind = kinds.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def error_message(body: object) -> str:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return str(body["error"].get("message", body["error"]))
    return json.dumps(body) if not isinstance(body, str) else body
