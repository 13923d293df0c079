"""OpenAI Chat Completions: request and response bodies, and the chunk stream.

Shapes follow ``openai.types.chat`` (``ChatCompletion``, ``ChatCompletionChunk``);
the tests parse our output with the real SDK.
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

PATH = "/v1/chat/completions"
_CREATED = 1_700_000_000  # fixed, so that transcripts and snapshots are stable


def declaration(tool: ToolDecl, *, strict: bool = False) -> dict[str, Any]:
    """``{"type": "function", "function": {name, description, parameters}}``; the
    toolkit declares with this function too."""
    function: dict[str, Any] = {
        "name": tool.name,
        "description": tool.description,
        "parameters": dict(tool.parameters),
    }
    if strict:
        function["strict"] = True
    return {"type": "function", "function": function}


def declarations(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [declaration(t) for t in tools]


def _message_to_wire(message: Message) -> list[dict[str, Any]]:
    if message.tool_results:
        return [
            {"role": "tool", "tool_call_id": r.call_id, "content": r.output}
            for r in message.tool_results
        ]
    out: dict[str, Any] = {"role": message.role, "content": message.text}
    if message.tool_calls:
        out["tool_calls"] = [_call_to_wire(c) for c in message.tool_calls]
    elif out["content"] is None:
        out["content"] = ""
    return [out]


def _call_to_wire(call: ToolCallPart) -> dict[str, Any]:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": call.arguments},
    }


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
    }
    if tools:
        body["tools"] = declarations(tools)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def _content_text(content: object) -> str | None:
    if content is None or isinstance(content, str):
        return content
    parts = as_list(content, "message.content")
    texts = [str(as_mapping(p, "content part").get("text", "")) for p in parts]
    return "".join(texts)


def _parse_call(raw: object) -> ToolCallPart:
    call = as_mapping(raw, "tool_call")
    function = as_mapping(call.get("function"), "tool_call.function")
    arguments = function.get("arguments", "")
    expect(isinstance(arguments, str), "tool_call.function.arguments must be a string")
    return ToolCallPart(str(call.get("id", "")), str(function.get("name", "")), arguments)


def parse_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    expect(isinstance(body.get("model"), str), "'model' must be a string")
    messages: list[Message] = []
    pending: dict[str, str] = {}
    for raw in as_list(body.get("messages"), "'messages'"):
        m = as_mapping(raw, "message")
        role = m.get("role")
        if role == "tool":
            call_id = str(m.get("tool_call_id", ""))
            result = ToolResultPart(
                call_id, _content_text(m.get("content")) or "", False, pending.get(call_id, "")
            )
            messages.append(Message("tool", tool_results=(result,)))
        elif role in ("system", "developer"):
            messages.append(Message("system", _content_text(m.get("content"))))
        elif role in ("user", "assistant"):
            calls = tuple(_parse_call(c) for c in m.get("tool_calls") or [])
            pending.update((c.id, c.name) for c in calls)
            messages.append(Message(role, _content_text(m.get("content")), calls))
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
        bool(body.get("stream")),
        "openai",
        body,
        settings(body),
    )


def settings(body: Mapping[str, Any]) -> Settings:
    """``tool_choice``, ``parallel_tool_calls``, ``max_completion_tokens`` (or the older
    ``max_tokens``), ``response_format`` and ``stream_options.include_usage``."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        choice = str(as_mapping(choice.get("function") or {}, "tool_choice.function").get("name"))
    fmt = body.get("response_format")
    kind = schema = None
    if isinstance(fmt, Mapping) and fmt.get("type") in ("json_object", "json_schema"):
        kind = str(fmt["type"])
        if kind == "json_schema":
            schema = as_mapping(fmt.get("json_schema") or {}, "json_schema").get("schema")
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    parallel = body.get("parallel_tool_calls")
    options = body.get("stream_options")
    return Settings(
        tool_choice=choice if isinstance(choice, str) else None,
        parallel_tool_calls=parallel if isinstance(parallel, bool) else None,
        max_tokens=limit if isinstance(limit, int) else None,
        response_format=kind,
        response_schema=schema if isinstance(schema, Mapping) else None,
        stream_usage=isinstance(options, Mapping) and options.get("include_usage") is True,
    )


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def build_response(
    turn: Turn,
    *,
    model: str,
    id: str = "chatcmpl-fake",
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.text, "refusal": None}
    if turn.tool_calls:
        message["tool_calls"] = [_call_to_wire(c) for c in turn.tool_calls]
    asked = request or {}
    n = asked.get("n")
    count = n if isinstance(n, int) and n > 1 else 1
    logprobs = (
        _logprobs(turn.text or "", asked.get("top_logprobs")) if asked.get("logprobs") else None
    )
    return {
        "id": id,
        "object": "chat.completion",
        "created": _CREATED,
        "model": model,
        # ``n`` asks for that many choices: the same turn in each
        "choices": [
            {"index": i, "message": message, "finish_reason": turn.finish, "logprobs": logprobs}
            for i in range(count)
        ],
        "usage": _usage(turn.usage),
    }


def _logprobs(text: str, top: object) -> dict[str, Any]:
    """``logprobs: true``: each word (with its leading space) a token, certain (0.0)."""
    import re

    tokens = re.findall(r"\s*\S+|\s+", text)
    wanted = top if isinstance(top, int) and top > 0 else 0
    return {
        "content": [
            {
                "token": t,
                "logprob": 0.0,
                "bytes": list(t.encode()),
                "top_logprobs": [{"token": t, "logprob": 0.0, "bytes": list(t.encode())}][:wanted],
            }
            for t in tokens
        ],
        "refusal": None,
    }


def stream_events(
    turn: Turn,
    *,
    model: str,
    id: str = "chatcmpl-fake",
    fragment: int = 8,
    request: Mapping[str, Any] | None = None,
) -> list[bytes]:
    """The SSE body the API sends: a role chunk, text and argument fragments, the finish
    chunk, a usage chunk, then ``data: [DONE]``. Given the ``request``, the usage chunk
    comes only when it asked for one (``stream_options.include_usage``), as the API does."""
    with_usage = request is None or settings(request).stream_usage

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return encode_sse(
            {
                "id": id,
                "object": "chat.completion.chunk",
                "created": _CREATED,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
                ],
            }
        )

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if turn.text:
        size = stream_fragment(len(turn.text), fragment)
        events += [chunk({"content": piece}) for piece in split_text(turn.text, size)]
    for index, call in enumerate(turn.tool_calls):
        head = {"index": index, "id": call.id, "type": "function"}
        events.append(
            chunk({"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]})
        )
        size = stream_fragment(len(call.arguments), fragment)
        for piece in split_text(call.arguments, size) if call.arguments else []:
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, turn.finish))
    if with_usage:
        events.append(
            encode_sse(
                {
                    "id": id,
                    "object": "chat.completion.chunk",
                    "created": _CREATED,
                    "model": model,
                    "choices": [],
                    "usage": _usage(turn.usage),
                }
            )
        )
    events.append(encode_sse("[DONE]"))
    return events


def _finish(value: object) -> FinishReason | None:
    if value in ("stop", "tool_calls", "length"):
        return value
    return None if value is None else "stop"


def _parse_usage(raw: object) -> Usage:
    if not isinstance(raw, Mapping):
        return Usage()
    return Usage(int(raw.get("prompt_tokens") or 0), int(raw.get("completion_tokens") or 0))


def parse_response(body: Mapping[str, Any]) -> Turn:
    choices = as_list(body.get("choices"), "'choices'")
    expect(bool(choices), "'choices' is empty")
    choice = as_mapping(choices[0], "choice")
    message = as_mapping(choice.get("message"), "choice.message")
    calls = tuple(_parse_call(c) for c in message.get("tool_calls") or [])
    return Turn(
        _content_text(message.get("content")),
        calls,
        _finish(choice.get("finish_reason")),
        _parse_usage(body.get("usage")),
    )


def accumulate(events: Iterable[SSEEvent]) -> Turn:
    """Rebuild the turn from chunks, joining argument fragments per ``index``."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: FinishReason | None = None
    usage = Usage()
    done = False
    for event in events:
        if event.data == "[DONE]":
            done = True
            break
        data = as_mapping(event.json(), "chunk")
        if "error" in data:
            raise WireError(f"error in stream: {error_message(data)}")
        if data.get("usage"):
            usage = _parse_usage(data["usage"])
        for raw in data.get("choices") or []:
            choice = as_mapping(raw, "choice")
            delta = as_mapping(choice.get("delta") or {}, "delta")
            if delta.get("content"):
                text.append(delta["content"])
            for part in delta.get("tool_calls") or []:
                slot = calls.setdefault(
                    int(part.get("index", 0)), {"id": "", "name": "", "args": []}
                )
                if part.get("id"):
                    slot["id"] = part["id"]
                fn = part.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                if fn.get("arguments"):
                    slot["args"].append(fn["arguments"])
            if choice.get("finish_reason") is not None:
                finish = _finish(choice["finish_reason"])
    if not done or finish is None:
        raise TruncatedStream("the OpenAI stream ended before its finish chunk and [DONE]")
    parts = tuple(
        ToolCallPart(s["id"], s["name"], "".join(s["args"])) for _, s in sorted(calls.items())
    )
    return Turn("".join(text) if text else None, parts, finish, usage)


def read_stream(lines: Iterable[str]) -> Turn:
    return accumulate(decode_sse(lines))


def error_body(status: int, message: str) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_exceeded",
    }
    kind = kinds.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def error_message(body: object) -> str:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return str(body["error"].get("message", body["error"]))
    return json.dumps(body) if not isinstance(body, str) else body
