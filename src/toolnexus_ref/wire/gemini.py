"""Gemini generateContent: request and response bodies, and the SSE stream.

The model is named in the URL (``/v1beta/models/{model}:generateContent``, and
``:streamGenerateContent?alt=sse`` for streaming), not in the body. Gemini sends a
function call whole in one chunk rather than in argument fragments, and carries
results as ``functionResponse`` parts with an ``output`` or ``error`` key.

The API parses proto JSON, so it accepts a field as ``functionCall`` or
``function_call``; the ``google-genai`` SDK sends a mix (``parameters_json_schema``,
and ``max_items``/``any_of`` inside a ``parameters`` Schema), so the parser takes both
spellings. A ``parameters`` Schema (OpenAPI subset, ``type: "OBJECT"``) is recorded as
JSON Schema so a declaration looks the same whichever field carried it.
"""

from __future__ import annotations

import json
import re
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
    split_text,
    stream_fragment,
    system_text,
)
from ._sse import SSEEvent, decode_sse, encode_sse

__all__ = [
    "PATH",
    "STREAM_PATH",
    "accumulate",
    "build_request",
    "build_response",
    "declarations",
    "error_body",
    "error_message",
    "function_declaration",
    "json_schema_of",
    "parse_request",
    "parse_response",
    "path_for",
    "read_stream",
    "stream_events",
]

PATH = "/v1beta/models/{model}:generateContent"
STREAM_PATH = "/v1beta/models/{model}:streamGenerateContent"


def path_for(model: str, *, stream: bool = False) -> str:
    return (STREAM_PATH if stream else PATH).format(model=model) + ("?alt=sse" if stream else "")


def declarations(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    """One ``tools`` entry wrapping every declaration, as the API expects.

    Schemas go out as ``parametersJsonSchema``: tools declare JSON Schema, and
    Gemini's ``parameters`` takes only its OpenAPI subset (an
    ``additionalProperties``, which every native tool has, is a 400 there).
    """
    if not tools:
        return []
    return [{"functionDeclarations": [function_declaration(t) for t in tools]}]


def function_declaration(tool: ToolDecl, *, json_schema: bool = True) -> dict[str, Any]:
    """One ``FunctionDeclaration``, the single source for the wire and the toolkit:
    the schema under ``parametersJsonSchema`` (real JSON Schema), or under
    ``parameters`` (Gemini's OpenAPI subset) when ``json_schema=False``."""
    key = "parametersJsonSchema" if json_schema else "parameters"
    return {"name": tool.name, "description": tool.description, key: dict(tool.parameters)}


def _args_of(call: ToolCallPart) -> Any:
    try:
        return call.parsed_arguments()
    except ValueError:
        return call.arguments  # not JSON: passed on unchanged, for the host to refuse


def _parts(message: Message) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.text:
        parts.append({"text": message.text})
    for c in message.tool_calls:
        fc: dict[str, Any] = {"name": c.name, "args": _args_of(c)}
        if c.id:
            fc["id"] = c.id
        parts.append({"functionCall": fc})
    for r in message.tool_results:
        fr: dict[str, Any] = {
            "name": r.name,
            "response": {"error" if r.is_error else "output": r.output},
        }
        if r.call_id:
            fr["id"] = r.call_id
        parts.append({"functionResponse": fr})
    return parts


def build_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolDecl] = (),
    *,
    stream: bool = False,
) -> dict[str, Any]:
    """The body; ``model`` and ``stream`` go in the URL (see ``path_for``)."""
    del model, stream
    contents = [
        {"role": "model" if m.role == "assistant" else "user", "parts": _parts(m)}
        for m in messages
        if m.role != "system"
    ]
    body: dict[str, Any] = {"contents": contents}
    system = system_text(list(messages))
    if system:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    if tools:
        body["tools"] = declarations(tools)
    return body


def _field(data: Mapping[str, Any], name: str) -> Any:
    """``data[name]`` under its camelCase name or its proto snake_case name."""
    if name in data:
        return data[name]
    return data.get(_snake(name))


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _has(part: Mapping[str, Any], name: str) -> bool:
    return name in part or _snake(name) in part


def json_schema_of(schema: object) -> object:
    """A Gemini ``Schema`` (upper-case ``type``, proto key spellings, ``nullable``) as
    JSON Schema; property names, ``enum``, ``default`` and ``example`` values are kept."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for raw_key, value in schema.items():
        key = _camel(str(raw_key))
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {name: json_schema_of(sub) for name, sub in value.items()}
        elif key == "items":
            out[key] = json_schema_of(value)
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [json_schema_of(sub) for sub in value]
        else:
            out[key] = value
    if out.pop("nullable", False) is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _declared_parameters(decl: Mapping[str, Any]) -> dict[str, Any]:
    schema = _field(decl, "parametersJsonSchema")
    if schema is None:
        schema = json_schema_of(_field(decl, "parameters"))
    if not schema:
        return {"type": "object", "properties": {}}
    return dict(as_mapping(schema, "parameters"))


def _call_of(part: Mapping[str, Any]) -> ToolCallPart:
    fc = as_mapping(_field(part, "functionCall"), "functionCall")
    raw = fc.get("args", {})
    text = raw if isinstance(raw, str) else json.dumps(raw)
    return ToolCallPart(str(fc.get("id", "")), str(fc.get("name", "")), text)


def parse_request(
    body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
) -> Request:
    """The body of a request whose URL named ``model`` and (by its method) ``stream``."""
    messages: list[Message] = []
    system = _field(body, "systemInstruction")
    if isinstance(system, Mapping):
        system_value = "".join(str(p.get("text", "")) for p in system.get("parts") or [])
        messages.append(Message("system", system_value))
    for raw in as_list(body.get("contents"), "'contents'"):
        content = as_mapping(raw, "content")
        parts = [as_mapping(p, "part") for p in as_list(content.get("parts"), "parts")]
        text = "".join(str(p["text"]) for p in parts if "text" in p) or None
        calls = tuple(_call_of(p) for p in parts if _has(p, "functionCall"))
        results = []
        for p in parts:
            if _has(p, "functionResponse"):
                fr = as_mapping(_field(p, "functionResponse"), "functionResponse")
                response = fr.get("response") or {}
                is_error = (
                    isinstance(response, Mapping)
                    and "error" in response
                    and "output" not in response
                )
                value = (
                    response.get("error" if is_error else "output", response)
                    if isinstance(response, Mapping)
                    else response
                )
                output = value if isinstance(value, str) else json.dumps(value)
                results.append(
                    ToolResultPart(str(fr.get("id", "")), output, is_error, str(fr.get("name", "")))
                )
        if results:
            messages.append(Message("tool", tool_results=tuple(results)))
        else:
            if content.get("role") == "model":
                messages.append(Message("assistant", text, calls))
            else:
                messages.append(Message("user", text, calls))
    tools = []
    for entry in body.get("tools") or []:
        for d in _field(as_mapping(entry, "tool"), "functionDeclarations") or []:
            decl = as_mapping(d, "functionDeclaration")
            tools.append(
                ToolDecl(
                    str(decl.get("name", "")),
                    str(decl.get("description", "")),
                    _declared_parameters(decl),
                )
            )
    return Request(
        model or "", tuple(messages), tuple(tools), bool(stream), "gemini", body, settings(body)
    )


def settings(body: Mapping[str, Any]) -> Settings:
    """``toolConfig.functionCallingConfig`` (``AUTO``/``ANY``/``NONE``, with
    ``allowedFunctionNames``) and ``generationConfig`` (``maxOutputTokens``,
    ``responseMimeType``, ``responseSchema``/``responseJsonSchema``)."""
    tool_config = _field(body, "toolConfig")
    choice: str | None = None
    if isinstance(tool_config, Mapping):
        calling = _field(tool_config, "functionCallingConfig")
        if isinstance(calling, Mapping):
            mode = str(calling.get("mode", "")).upper()
            allowed = _field(calling, "allowedFunctionNames") or []
            choice = {"AUTO": "auto", "ANY": "required", "NONE": "none"}.get(mode)
            if mode == "ANY" and isinstance(allowed, list) and len(allowed) == 1:
                choice = str(allowed[0])
    generation = _field(body, "generationConfig")
    limit = kind = schema = None
    if isinstance(generation, Mapping):
        limit = _field(generation, "maxOutputTokens")
        if _field(generation, "responseMimeType") == "application/json":
            kind = "json_object"
            schema = _field(generation, "responseJsonSchema")
            if schema is None and _field(generation, "responseSchema") is not None:
                schema = json_schema_of(_field(generation, "responseSchema"))
            if isinstance(schema, Mapping):
                kind = "json_schema"
    return Settings(
        tool_choice=choice,
        max_tokens=limit if isinstance(limit, int) else None,
        response_format=kind,
        response_schema=schema if isinstance(schema, Mapping) else None,
    )


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }


def _finish_wire(turn: Turn) -> str:
    return "MAX_TOKENS" if turn.finish == "length" else "STOP"


def build_response(
    turn: Turn,
    *,
    model: str,
    id: str = "",
    request: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": _parts(turn.as_message())},
                "finishReason": _finish_wire(turn),
                "index": 0,
            }
        ],
        "usageMetadata": _usage(turn.usage),
        "modelVersion": model,
        **({"responseId": id} if id else {}),
    }


def stream_events(
    turn: Turn,
    *,
    model: str,
    id: str = "",
    fragment: int = 8,
    request: Mapping[str, Any] | None = None,
) -> list[bytes]:
    """One chunk per text fragment, one per whole function call; the last carries the
    finish reason and usage."""
    chunks: list[list[dict[str, Any]]] = []
    if turn.text:
        size = stream_fragment(len(turn.text), fragment)
        chunks += [[{"text": piece}] for piece in split_text(turn.text, size)]
    chunks += [_parts(Message("assistant", tool_calls=(c,))) for c in turn.tool_calls]
    if not chunks:
        chunks = [[{"text": ""}]]
    events = []
    for i, parts in enumerate(chunks):
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        body: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
        if id:
            body["responseId"] = id
        if i == len(chunks) - 1:
            candidate["finishReason"] = _finish_wire(turn)
            body["usageMetadata"] = _usage(turn.usage)
        events.append(encode_sse(body))
    return events


def _finish(reason: object, has_calls: bool) -> FinishReason:
    if reason == "MAX_TOKENS":
        return "length"
    return "tool_calls" if has_calls else "stop"


def _parse_usage(raw: object) -> Usage:
    if not isinstance(raw, Mapping):
        return Usage()
    return Usage(int(raw.get("promptTokenCount") or 0), int(raw.get("candidatesTokenCount") or 0))


def _candidate_parts(body: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], object]:
    candidates = as_list(body.get("candidates") or [], "'candidates'")
    if not candidates:
        return [], None
    candidate = as_mapping(candidates[0], "candidate")
    content = candidate.get("content") or {}
    parts = [as_mapping(p, "part") for p in as_mapping(content, "content").get("parts") or []]
    return parts, candidate.get("finishReason")


def _answer_texts(parts: Iterable[Mapping[str, Any]]) -> list[str]:
    """The text parts of the answer: a thinking model's ``thought: true`` parts are not.

    Gemini sends its thought summaries (``includeThoughts``) as text parts flagged
    ``thought``; joined in, they would read as the model's reply to the user.
    """
    return [str(p["text"]) for p in parts if "text" in p and not p.get("thought")]


def parse_response(body: Mapping[str, Any]) -> Turn:
    if "error" in body:
        raise WireError(f"error body: {error_message(body)}")
    parts, reason = _candidate_parts(body)
    text = "".join(_answer_texts(parts)) or None
    calls = tuple(_call_of(p) for p in parts if "functionCall" in p)
    return Turn(text, calls, _finish(reason, bool(calls)), _parse_usage(body.get("usageMetadata")))


def accumulate(events: Iterable[SSEEvent]) -> Turn:
    text: list[str] = []
    calls: list[ToolCallPart] = []
    reason: object = None
    usage = Usage()
    for event in events:
        body = as_mapping(event.json(), "chunk")
        if "error" in body:
            raise WireError(f"error in stream: {error_message(body)}")
        parts, finish = _candidate_parts(body)
        text += _answer_texts(parts)
        calls += [_call_of(p) for p in parts if "functionCall" in p]
        if body.get("usageMetadata"):
            usage = _parse_usage(body["usageMetadata"])
        if finish is not None:
            reason = finish
    if reason is None:
        raise TruncatedStream("the Gemini stream ended before a chunk with finishReason")
    return Turn("".join(text) or None, tuple(calls), _finish(reason, bool(calls)), usage)


def read_stream(lines: Iterable[str]) -> Turn:
    return accumulate(decode_sse(lines))


_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}


def error_message(body: object) -> str:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        return str(body["error"].get("message", body["error"]))
    return json.dumps(body) if not isinstance(body, str) else body
