"""Scripted reasoning and hosted-tool items, in each provider's own shape.

The neutral ``Turn`` carries text and calls only; a scripted turn may also carry the
model's reasoning (``Reasoning``) and, on the Responses API, the items of tools the
provider ran itself (``HostedCall``). The wire formats build the reply without them;
this module puts them in where the provider does, whole or streamed:

- Anthropic: ``thinking`` blocks with a ``signature`` (``redacted_thinking`` with
  ``data``) before the text, streamed as ``thinking_delta`` and ``signature_delta``;
  only when the request enables thinking, as the API answers.
- Responses: ``reasoning`` output items (summary, ``encrypted_content``) and hosted
  items such as ``web_search_call``, streamed with their own events.
- Gemini: ``thought: true`` text parts (when ``includeThoughts`` is asked) and a
  ``thoughtSignature`` on the first function call (or the last text part).
- Chat Completions: ``reasoning_content``, the field DeepSeek and vLLM's
  OpenAI-compatible servers send (OpenAI's own API sends only the token count).
- Ollama: ``message.thinking`` (unless the request says ``think: false``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolnexus_ref.wire import Turn
from toolnexus_ref.wire._model import split_text, stream_fragment
from toolnexus_ref.wire._sse import encode_sse

__all__ = [
    "HostedCall",
    "Reasoning",
    "ScriptedTurn",
    "dress_response",
    "dress_stream",
    "reasoning_violation",
    "signature_for",
]


@dataclass(frozen=True, slots=True)
class Reasoning:
    """What the model thought before answering.

    ``text`` is the thinking (Anthropic), the summary (Responses), the thought part
    (Gemini), ``reasoning_content`` (Chat Completions) or ``thinking`` (Ollama).
    ``redacted`` sends only the opaque part (Anthropic ``redacted_thinking``, an empty
    Responses summary, a bare Gemini signature). ``signature`` defaults to one made
    from the text, the same every run."""

    text: str = ""
    redacted: bool = False
    signature: str | None = None

    @property
    def opaque(self) -> str:
        return self.signature or signature_for(self.text)


@dataclass(frozen=True, slots=True)
class HostedCall:
    """An item of a tool the provider ran itself (Responses API): ``web_search_call``,
    ``file_search_call``, ... ``fields`` are the item's own (``action``, ``queries``);
    ``tool`` is the tool type the request must offer for it."""

    type: str
    tool: str
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ScriptedTurn(Turn):
    """A turn with reasoning and hosted-tool items besides its text and calls."""

    reasoning: tuple[Reasoning, ...] = ()
    hosted: tuple[HostedCall, ...] = ()


def signature_for(text: str) -> str:
    """A base64 signature for ``text``: opaque, deterministic, checkable."""
    digest = hashlib.sha256(b"toolnexus-fake-reasoning\x00" + text.encode()).digest()
    return base64.b64encode(digest).decode()


def _extras(turn: Turn) -> tuple[tuple[Reasoning, ...], tuple[HostedCall, ...]]:
    if isinstance(turn, ScriptedTurn):
        return turn.reasoning, turn.hosted
    return (), ()


def reasoning_violation(
    turn: Turn, provider: str, request: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(rule, why) when the request forbids the turn's reasoning or hosted items."""
    reasoning, hosted = _extras(turn)
    if reasoning and provider == "anthropic" and not _anthropic_thinks(request):
        return "thinking_not_enabled", (
            "the reply has thinking blocks, but the request does not enable thinking "
            "(thinking={'type': 'enabled', 'budget_tokens': ...}); the API sends none then"
        )
    if hosted and provider != "responses":
        return "hosted_tool_not_offered", (
            f"hosted-tool items ({hosted[0].type}) exist only on the Responses API"
        )
    offered = {str(t.get("type")) for t in request.get("tools") or [] if isinstance(t, Mapping)}
    for item in hosted:
        if not ({item.tool, f"{item.tool}_preview"} | _dated(item.tool, offered)) & offered:
            return "hosted_tool_not_offered", (
                f"the reply has a {item.type} item, but the request offers no "
                f"{item.tool!r} tool (tools=[{{'type': '{item.tool}'}}])"
            )
    return None


def _dated(tool: str, offered: set[str]) -> set[str]:
    """``web_search_2025_08_26`` and the like: dated versions of a hosted tool."""
    return {o for o in offered if o.startswith(tool + "_")}


def _anthropic_thinks(request: Mapping[str, Any]) -> bool:
    thinking = request.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") not in (None, "disabled")


def _anthropic_omits(request: Mapping[str, Any]) -> bool:
    thinking = request.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("display") == "omitted"


# -- whole replies -------------------------------------------------------------------
def dress_response(
    provider: str, payload: dict[str, Any], turn: Turn, request: Mapping[str, Any]
) -> dict[str, Any]:
    """``payload`` (built by the wire) with the turn's reasoning and hosted items."""
    reasoning, hosted = _extras(turn)
    if not reasoning and not hosted:
        return payload
    if provider == "anthropic":
        blocks = [_anthropic_block(r, request) for r in reasoning]
        payload["content"] = blocks + payload["content"]
    elif provider == "responses":
        items = [_reasoning_item(payload["id"], i, r, request) for i, r in enumerate(reasoning)]
        items += [_hosted_item(payload["id"], i, h) for i, h in enumerate(hosted)]
        payload["output"] = items + payload["output"]
        _responses_usage(payload.get("usage"), reasoning)
    elif provider == "gemini":
        content = payload["candidates"][0]["content"]
        content["parts"] = _gemini_parts(content["parts"], reasoning, request)
        payload.setdefault("usageMetadata", {})["thoughtsTokenCount"] = _tokens(reasoning)
    elif provider == "openai":
        shown = _joined(reasoning)
        for choice in payload["choices"]:
            if shown:
                choice["message"] = {**choice["message"], "reasoning_content": shown}
        _openai_usage(payload.get("usage"), reasoning)
    elif provider == "ollama":
        shown = _joined(reasoning)
        if shown and request.get("think") is not False:
            payload["message"]["thinking"] = shown
    return payload


def _joined(reasoning: Sequence[Reasoning]) -> str:
    return "\n\n".join(r.text for r in reasoning if not r.redacted and r.text)


def _tokens(reasoning: Sequence[Reasoning]) -> int:
    return sum(max(1, -(-len(r.text) // 4)) for r in reasoning)


def _anthropic_block(r: Reasoning, request: Mapping[str, Any]) -> dict[str, Any]:
    if r.redacted:
        return {"type": "redacted_thinking", "data": r.opaque}
    shown = "" if _anthropic_omits(request) else r.text
    return {"type": "thinking", "thinking": shown, "signature": r.opaque}


def _summary_asked(request: Mapping[str, Any]) -> bool:
    asked = request.get("reasoning")
    return isinstance(asked, Mapping) and asked.get("summary") not in (None, "none")


def _reasoning_item(
    response_id: str, index: int, r: Reasoning, request: Mapping[str, Any], *, done: bool = True
) -> dict[str, Any]:
    summary = (
        [{"type": "summary_text", "text": r.text}]
        if done and r.text and not r.redacted and _summary_asked(request)
        else []
    )
    return {
        "type": "reasoning",
        "id": f"rs_{response_id.removeprefix('resp_')}_{index}",
        "summary": summary,
        "encrypted_content": r.opaque,
        "status": "completed" if done else "in_progress",
    }


def _hosted_item(
    response_id: str, index: int, h: HostedCall, *, done: bool = True
) -> dict[str, Any]:
    prefix = "".join(word[0] for word in h.type.split("_")[:2])  # ws_, fs_, ...
    return {
        "type": h.type,
        "id": f"{prefix}_{response_id.removeprefix('resp_')}_{index}",
        **h.fields,
        "status": "completed" if done else "in_progress",
    }


def _responses_usage(usage: Any, reasoning: Sequence[Reasoning]) -> None:
    if isinstance(usage, dict) and reasoning:
        usage["output_tokens_details"] = {"reasoning_tokens": _tokens(reasoning)}


def _openai_usage(usage: Any, reasoning: Sequence[Reasoning]) -> None:
    if isinstance(usage, dict) and reasoning:
        details = dict(usage.get("completion_tokens_details") or {})
        details["reasoning_tokens"] = _tokens(reasoning)
        usage["completion_tokens_details"] = details


def _gemini_parts(
    parts: list[dict[str, Any]], reasoning: Sequence[Reasoning], request: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Thought parts first (when asked for), the signature on the first call, else on
    the last part, as Gemini 2.5 and 3 send it."""
    if not reasoning:
        return parts
    thoughts = [
        {"text": r.text, "thought": True}
        for r in reasoning
        if _gemini_thoughts_asked(request) and not r.redacted and r.text
    ]
    out = [dict(p) for p in parts]
    signed = next((p for p in out if "functionCall" in p), out[-1] if out else None)
    if signed is None:
        signed = {"text": ""}
        out.append(signed)
    signed["thoughtSignature"] = reasoning[-1].opaque
    return thoughts + out


def _gemini_thoughts_asked(request: Mapping[str, Any]) -> bool:
    config = request.get("generationConfig") or request.get("generation_config") or {}
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    return bool(thinking.get("includeThoughts") or thinking.get("include_thoughts"))


# -- streamed replies ----------------------------------------------------------------
def _data(event: bytes) -> Any:
    """The JSON of one encoded SSE event (the wires encode one data line each)."""
    for line in event.decode().split("\n"):
        if line.startswith("data: "):
            return json.loads(line[6:])
    raise ValueError("an SSE event without data")


def dress_stream(
    provider: str,
    events: list[bytes],
    turn: Turn,
    request: Mapping[str, Any],
    fragment: int,
) -> list[bytes]:
    """``events`` (built by the wire) with the reasoning and hosted items streamed in."""
    reasoning, hosted = _extras(turn)
    if not reasoning and not hosted:
        return events
    if provider == "anthropic":
        return _anthropic_stream(events, reasoning, request, fragment)
    if provider == "responses":
        return _responses_stream(events, reasoning, hosted, request, fragment)
    if provider == "gemini":
        return _gemini_stream(events, reasoning, request, fragment)
    if provider == "openai":
        return _openai_stream(events, reasoning, fragment)
    if provider == "ollama":
        return _ollama_stream(events, reasoning, request, fragment)
    return events


def _anthropic_stream(
    events: list[bytes], reasoning: Sequence[Reasoning], request: Mapping[str, Any], fragment: int
) -> list[bytes]:
    shift = len(reasoning)
    out = [events[0]]  # message_start
    for index, r in enumerate(reasoning):

        def emit(kind: str, payload: dict[str, Any], index: int = index) -> None:
            out.append(encode_sse({"type": kind, "index": index, **payload}, kind))

        block = _anthropic_block(r, request)
        if r.redacted:
            emit("content_block_start", {"content_block": block})
        else:
            emit(
                "content_block_start", {"content_block": {**block, "thinking": "", "signature": ""}}
            )
            shown = block["thinking"]
            for piece in split_text(shown, stream_fragment(len(shown), fragment)) if shown else []:
                emit(
                    "content_block_delta", {"delta": {"type": "thinking_delta", "thinking": piece}}
                )
            emit(
                "content_block_delta",
                {"delta": {"type": "signature_delta", "signature": block["signature"]}},
            )
        emit("content_block_stop", {})
    for event in events[1:]:
        data = _data(event)
        if "index" in data:
            data["index"] += shift
            event = encode_sse(data, str(data["type"]))
        out.append(event)
    return out


def _responses_stream(
    events: list[bytes],
    reasoning: Sequence[Reasoning],
    hosted: Sequence[HostedCall],
    request: Mapping[str, Any],
    fragment: int,
) -> list[bytes]:
    decoded = [_data(e) for e in events]
    response_id = str(decoded[0]["response"]["id"])
    added: list[dict[str, Any]] = []

    def emit(kind: str, **payload: Any) -> None:
        added.append({"type": kind, **payload})

    for index, r in enumerate(reasoning):
        item = _reasoning_item(response_id, index, r, request)
        where = {"output_index": index, "item_id": item["id"]}
        emit(
            "response.output_item.added",
            output_index=index,
            item=_reasoning_item(response_id, index, r, request, done=False),
        )
        for s, part in enumerate(item["summary"]):
            text = part["text"]
            emit(
                "response.reasoning_summary_part.added",
                **where,
                summary_index=s,
                part={"type": "summary_text", "text": ""},
            )
            for piece in split_text(text, stream_fragment(len(text), fragment)):
                emit("response.reasoning_summary_text.delta", **where, summary_index=s, delta=piece)
            emit("response.reasoning_summary_text.done", **where, summary_index=s, text=text)
            emit("response.reasoning_summary_part.done", **where, summary_index=s, part=part)
        emit("response.output_item.done", output_index=index, item=item)
    for offset, h in enumerate(hosted):
        index = len(reasoning) + offset
        item = _hosted_item(response_id, offset, h)
        where = {"output_index": index, "item_id": item["id"]}
        emit(
            "response.output_item.added",
            output_index=index,
            item=_hosted_item(response_id, offset, h, done=False),
        )
        steps = ("in_progress", "searching", "completed") if "search" in h.type else ()
        for step in steps:
            emit(f"response.{h.type}.{step}", **where)
        emit("response.output_item.done", output_index=index, item=item)
    shift = len(reasoning) + len(hosted)
    final = decoded[-1]["response"]
    dress_response("responses", final, turn_with(reasoning, hosted), request)
    for data in decoded[2:]:
        if "output_index" in data:
            data["output_index"] += shift
    merged = decoded[:2] + added + decoded[2:]
    out = []
    for number, data in enumerate(merged):
        data["sequence_number"] = number
        out.append(encode_sse(data, str(data["type"])))
    return out


def turn_with(reasoning: Sequence[Reasoning], hosted: Sequence[HostedCall]) -> ScriptedTurn:
    """An empty turn carrying only these extras (to dress a final event's response)."""
    return ScriptedTurn(reasoning=tuple(reasoning), hosted=tuple(hosted))


def _gemini_stream(
    events: list[bytes], reasoning: Sequence[Reasoning], request: Mapping[str, Any], fragment: int
) -> list[bytes]:
    decoded = [_data(e) for e in events]
    template = decoded[0]
    thoughts = []
    if _gemini_thoughts_asked(request):
        for r in reasoning:
            if r.redacted or not r.text:
                continue
            for piece in split_text(r.text, stream_fragment(len(r.text), fragment)):
                chunk = {
                    **template,
                    "candidates": [
                        {
                            "content": {
                                "role": "model",
                                "parts": [{"text": piece, "thought": True}],
                            },
                            "index": 0,
                        }
                    ],
                }
                chunk.pop("usageMetadata", None)
                thoughts.append(chunk)
    # the signature rides on the first call's chunk, else on the last chunk
    target = next((d for d in decoded if any("functionCall" in p for p in _parts(d))), decoded[-1])
    parts = _parts(target)
    signed = next((p for p in parts if "functionCall" in p), parts[-1] if parts else None)
    if signed is not None:
        signed["thoughtSignature"] = reasoning[-1].opaque
    decoded[-1].setdefault("usageMetadata", {})["thoughtsTokenCount"] = _tokens(reasoning)
    return [encode_sse(d) for d in thoughts + decoded]


def _parts(chunk: Mapping[str, Any]) -> list[dict[str, Any]]:
    candidates = chunk.get("candidates") or [{}]
    parts: list[dict[str, Any]] = (candidates[0].get("content") or {}).get("parts") or []
    return parts


def _openai_stream(
    events: list[bytes], reasoning: Sequence[Reasoning], fragment: int
) -> list[bytes]:
    first = _data(events[0])
    shown = _joined(reasoning)
    added = []
    for piece in split_text(shown, stream_fragment(len(shown), fragment)) if shown else []:
        chunk = {
            **first,
            "choices": [{**first["choices"][0], "delta": {"reasoning_content": piece}}],
        }
        added.append(encode_sse(chunk))
    out = [events[0], *added]
    for event in events[1:]:
        if event.startswith(b"data: {") and b'"usage"' in event:
            data = _data(event)
            _openai_usage(data.get("usage"), reasoning)
            event = encode_sse(data)
        out.append(event)
    return out


def _ollama_stream(
    events: list[bytes], reasoning: Sequence[Reasoning], request: Mapping[str, Any], fragment: int
) -> list[bytes]:
    shown = _joined(reasoning)
    if not shown or request.get("think") is False:
        return events
    first = json.loads(events[0])
    lines = []
    for piece in split_text(shown, stream_fragment(len(shown), fragment)):
        line = {**first, "message": {"role": "assistant", "content": "", "thinking": piece}}
        line["done"] = False
        for key in ("done_reason", "total_duration", "eval_count", "prompt_eval_count"):
            line.pop(key, None)
        lines.append((json.dumps(line, separators=(",", ":")) + "\n").encode())
    return lines + events


# -- what an agent must send back ----------------------------------------------------
_THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
_SIGNATURE_DOCS = "https://ai.google.dev/gemini-api/docs/thought-signatures"


def signed_calls(turn: Turn, provider: str) -> dict[str, tuple[Reasoning, ...]]:
    """The calls of a served turn whose reasoning the agent must send back with them
    (Anthropic thinking blocks, a Gemini thought signature), by call id."""
    reasoning, _ = _extras(turn)
    if not reasoning or provider not in ("anthropic", "gemini"):
        return {}
    return {c.id: reasoning for c in turn.tool_calls}


def passback_refusal(
    signed: Mapping[str, tuple[Reasoning, ...]], provider: str, body: Mapping[str, Any]
) -> tuple[str, str, str] | None:
    """(rule, message, param) when the request drops or alters reasoning the fake sent
    with a call, as the provider refuses it; ``None`` otherwise."""
    if not signed:
        return None
    if provider == "anthropic" and _anthropic_thinks(body):
        return _anthropic_passback(signed, body)
    if provider == "gemini":
        return _gemini_passback(signed, body)
    return None


def _blocks(content: object) -> list[Mapping[str, Any]]:
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping)]


def _anthropic_passback(
    signed: Mapping[str, tuple[Reasoning, ...]], body: Mapping[str, Any]
) -> tuple[str, str, str] | None:
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        blocks = _blocks(message.get("content"))
        issued = [
            r
            for b in blocks
            if b.get("type") == "tool_use"
            for r in signed.get(str(b.get("id")), ())
        ]
        if not issued:
            continue
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "thinking":
                ok = any(
                    not r.redacted
                    and block.get("signature") == r.opaque
                    and block.get("thinking") in (r.text, "")
                    for r in issued
                )
            elif kind == "redacted_thinking":
                ok = any(r.redacted and block.get("data") == r.opaque for r in issued)
            else:
                continue
            if not ok:
                where = f"messages.{i}.content.{j}"
                return (
                    "thinking_signature",
                    f"{where}: Invalid `signature` in `{kind}` block",
                    where,
                )
        first = blocks[0].get("type") if blocks else None
        if i == last and first not in ("thinking", "redacted_thinking"):
            where = f"messages.{i}.content.0.type"
            return (
                "thinking_block_missing",
                f"{where}: Expected `thinking` or `redacted_thinking`, but found `{first}`. "
                "When `thinking` is enabled, a final `assistant` message must start with a "
                "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` "
                "blocks). We recommend you include thinking blocks from previous turns. To "
                "avoid this requirement, disable `thinking`. Please consult our documentation "
                f"at {_THINKING_DOCS}",
                where,
            )
    return None


def _gemini_passback(
    signed: Mapping[str, tuple[Reasoning, ...]], body: Mapping[str, Any]
) -> tuple[str, str, str] | None:
    for i, content in enumerate(c for c in body.get("contents") or [] if isinstance(c, Mapping)):
        if content.get("role") != "model":
            continue
        calls = [p for p in _blocks(content.get("parts")) if "functionCall" in p]
        if not calls:
            continue
        call = calls[0]["functionCall"]
        issued = signed.get(str(call.get("id"))) if isinstance(call, Mapping) else None
        if not issued:
            continue
        given = calls[0].get("thoughtSignature") or calls[0].get("thought_signature")
        name = call.get("name")
        where = f"contents[{i}].parts"
        if not given:
            return (
                "thought_signature_missing",
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead "
                f"to degraded model performance. Additional data, function call `{name}` , "
                f"position {i + 1}. Please refer to {_SIGNATURE_DOCS} for more details.",
                where,
            )
        if given != issued[-1].opaque:
            return (
                "thought_signature",
                f"Thought signature is not valid (function call `{name}`, position {i + 1}).",
                where,
            )
    return None
