"""Ollama's native chat API (``POST /api/chat``): bodies and the NDJSON stream.

Ollama streams by default (``"stream": false`` asks for one body), one JSON object a
line, the last with ``"done": true`` and the token counts. Tool calls carry arguments
as a JSON object and no id; a result goes back as a ``tool`` message naming the tool
(``tool_name``). Errors are ``{"error": "..."}``. Shapes follow the ``ollama`` Python
client's ``ChatResponse``.
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
)

__all__ = [
    "PATH",
    "build_request",
    "build_response",
    "declarations",
    "error_body",
    "error_message",
    "parse_request",
    "parse_response",
    "read_stream",
    "stream_events",
]

PATH = "/api/chat"
_CREATED_AT = "2023-11-14T22:13:20Z"  # fixed, so that transcripts and snapshots are stable


def declarations(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
            },
        }
        for t in tools
    ]


def _args_of(call: ToolCallPart) -> Any:
    try:
        return call.parsed_arguments()
    except ValueError:
        return call.arguments  # not JSON: passed on unchanged, for the host to refuse


def _message_to_wire(message: Message) -> list[dict[str, Any]]:
    if message.tool_results:
        return [
            {"role": "tool", "content": r.output, "tool_name": r.name} for r in message.tool_results
        ]
    out: dict[str, Any] = {"role": message.role, "content": message.text or ""}
    if message.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": c.name, "arguments": _args_of(c)}} for c in message.tool_calls
        ]
    return [out]


def build_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDecl] = (),
    *,
    stream: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [w for m in messages for w in _message_to_wire(m)],
        "stream": stream,
    }
    if tools:
        body["tools"] = declarations(tools)
    return body


def _calls_of(raw: object) -> tuple[ToolCallPart, ...]:
    """Calls as sent; the wire has no ids, so theirs are empty (a host names them)."""
    calls = []
    for item in as_list(raw or [], "tool_calls"):
        fn = as_mapping(as_mapping(item, "tool_call").get("function"), "tool_call.function")
        arguments = fn.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        call_id = str(as_mapping(item, "tool_call").get("id") or "")
        calls.append(ToolCallPart(call_id, str(fn.get("name", "")), text))
    return tuple(calls)


def parse_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """A ``tool`` message answers the oldest unanswered call of its ``tool_name``."""
    expect(isinstance(body.get("model"), str), "'model' must be a string")
    messages: list[Message] = []
    unanswered: list[ToolCallPart] = []
    for raw in as_list(body.get("messages"), "'messages'"):
        m = as_mapping(raw, "message")
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else None
        if role == "tool":
            name = str(m.get("tool_name") or m.get("name") or "")
            match = next((c for c in unanswered if c.name == name), None)
            if match is not None:
                unanswered.remove(match)
            result = ToolResultPart(match.id if match else "", text or "", False, name)
            last = messages[-1] if messages else None
            if last is not None and last.role == "tool":
                messages[-1] = Message("tool", tool_results=(*last.tool_results, result))
            else:
                messages.append(Message("tool", tool_results=(result,)))
        elif role in ("system", "user", "assistant"):
            calls = _calls_of(m.get("tool_calls"))
            unanswered.extend(calls)
            messages.append(Message(role, text, calls))
        else:
            raise WireError(f"unknown message role {role!r}")
    tools = []
    for raw in body.get("tools") or []:
        fn = as_mapping(as_mapping(raw, "tool").get("function"), "tool.function")
        tools.append(
            ToolDecl(
                str(fn.get("name", "")),
                str(fn.get("description", "")),
                dict(fn.get("parameters") or {"type": "object", "properties": {}}),
            )
        )
    return Request(
        body["model"],
        tuple(messages),
        tuple(tools),
        body.get("stream", True) is not False,
        "ollama",
        body,
        settings(body),
    )


def settings(body: Mapping[str, Any]) -> Settings:
    """``options.num_predict`` and ``format`` (``"json"`` or a JSON schema)."""
    options = body.get("options")
    limit = options.get("num_predict") if isinstance(options, Mapping) else None
    fmt = body.get("format")
    kind = "json_schema" if isinstance(fmt, Mapping) else "json_object" if fmt == "json" else None
    return Settings(
        max_tokens=limit if isinstance(limit, int) and limit >= 0 else None,
        response_format=kind,
        response_schema=fmt if isinstance(fmt, Mapping) else None,
    )


def _message(turn: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
    if turn.tool_calls:
        out["tool_calls"] = [
            {"function": {"name": c.name, "arguments": _args_of(c)}} for c in turn.tool_calls
        ]
    return out


def _done(turn: Turn, model: str) -> dict[str, Any]:
    return {
        "model": model,
        "created_at": _CREATED_AT,
        "done": True,
        "done_reason": "length" if turn.finish == "length" else "stop",
        "total_duration": 1_000_000,
        "load_duration": 0,
        "prompt_eval_count": turn.usage.input_tokens,
        "prompt_eval_duration": 500_000,
        "eval_count": turn.usage.output_tokens,
        "eval_duration": 500_000,
    }


def build_response(
    turn: Turn,
    *,
    model: str,
    id: str = "",
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    done = _done(turn, model)
    return {"model": model, "created_at": _CREATED_AT, "message": _message(turn), **done}


def stream_events(
    turn: Turn,
    *,
    model: str,
    id: str = "",
    fragment: int = 8,
    request: Mapping[str, Any] | None = None,
) -> list[bytes]:
    """NDJSON lines: text pieces, one line with every tool call, then the ``done`` line."""

    def line(message: dict[str, Any], **extra: Any) -> bytes:
        data = {"model": model, "created_at": _CREATED_AT, "message": message, "done": False}
        return (json.dumps({**data, **extra}, separators=(",", ":")) + "\n").encode()

    lines = []
    if turn.text:
        size = stream_fragment(len(turn.text), fragment)
        lines += [line({"role": "assistant", "content": p}) for p in split_text(turn.text, size)]
    if turn.tool_calls:
        lines.append(line({**_message(Turn(None, turn.tool_calls)), "content": ""}))
    lines.append(line({"role": "assistant", "content": ""}, **_done(turn, model)))
    return lines


def _usage(body: Mapping[str, Any]) -> Usage:
    return Usage(int(body.get("prompt_eval_count") or 0), int(body.get("eval_count") or 0))


def _finish(body: Mapping[str, Any], has_calls: bool) -> FinishReason:
    if body.get("done_reason") == "length":
        return "length"
    return "tool_calls" if has_calls else "stop"


def parse_response(body: Mapping[str, Any]) -> Turn:
    if "error" in body:
        raise WireError(f"error body: {error_message(body)}")
    message = as_mapping(body.get("message"), "message")
    calls = _calls_of(message.get("tool_calls"))
    text = message.get("content") or None
    return Turn(text, calls, _finish(body, bool(calls)), _usage(body))


def read_stream(lines: Iterable[str]) -> Turn:
    text: list[str] = []
    calls: list[ToolCallPart] = []
    for raw in lines:
        if not raw.strip():
            continue
        data = as_mapping(json.loads(raw), "stream line")
        if "error" in data:
            raise WireError(f"error in stream: {error_message(data)}")
        message = as_mapping(data.get("message") or {}, "message")
        if message.get("content"):
            text.append(str(message["content"]))
        calls += _calls_of(message.get("tool_calls"))
        if data.get("done") is True:
            return Turn(
                "".join(text) or None, tuple(calls), _finish(data, bool(calls)), _usage(data)
            )
    raise TruncatedStream("the Ollama stream ended before its done line")


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": message}


def error_message(body: object) -> str:
    if isinstance(body, Mapping) and "error" in body:
        error = body["error"]
        return error if isinstance(error, str) else json.dumps(error)
    return json.dumps(body) if not isinstance(body, str) else body
