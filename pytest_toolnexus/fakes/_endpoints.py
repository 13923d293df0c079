"""The endpoints agents call besides chat: embeddings, token counts, model lists and
Ollama's other routes. Each answers as its provider does, in JSON (never an HTML
error page), deterministically; ``/api/generate`` is served from the fake's script.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolnexus_ref.wire import Message, Request, Turn, WireError
from toolnexus_ref.wire import anthropic as anthropic_wire
from toolnexus_ref.wire import gemini as gemini_wire

from ._embeddings import as_base64
from ._replies import ErrorReply, HangReply, TruncatedReply
from ._settings import estimate_tokens, estimate_usage

if TYPE_CHECKING:
    from ._core import FakeLLM
    from ._http import HTTPReply

__all__ = ["endpoint"]

_CREATED = "2026-01-01T00:00:00Z"
_GEMINI = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<method>embedContent|batchEmbedContents|countTokens)$"
)


def endpoint(fake: FakeLLM, method: str, path: str, data: Any) -> HTTPReply | None:
    """The answer for a non-chat endpoint, or ``None`` when ``path`` is none of them."""
    method = method.upper()
    if method == "GET":
        get = _GETS.get(path.rstrip("/"))
        if get is not None:
            return get(fake, data)
        match = re.search(r"/v1/models/(?P<id>[^/]+)$", path)
        if match:
            return _json(200, _openai_model(match["id"]))
        return None
    for suffix, post in _POSTS:
        if path.endswith(suffix):
            return post(fake, data)
    found = _GEMINI.search(path)
    if found is None:
        return None
    return _gemini(fake, found["model"], found["method"], data)


def _json(status: int, data: object, content_type: str = "application/json") -> HTTPReply:
    from ._http import HTTPReply

    return HTTPReply(status, {"content-type": content_type}, [json.dumps(data).encode()])


def _body(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise WireError("the request body must be a JSON object")
    return data


def _texts(value: Any) -> list[str]:
    """An embeddings input as texts: a string, strings, or token ids (as their JSON)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
        return [json.dumps(value)]
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v) for v in value]
    raise WireError("'input' must be a string or a list")


def _openai_model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "toolnexus-fake"}


# -- OpenAI --------------------------------------------------------------------------
def _openai_embeddings(fake: FakeLLM, data: Any) -> HTTPReply:
    body = _body(data)
    texts = _texts(body.get("input"))
    dimensions = body.get("dimensions")
    vectors = [fake.embed(t, dimensions if isinstance(dimensions, int) else None) for t in texts]
    encode = body.get("encoding_format") == "base64"
    tokens = sum(estimate_tokens(t) for t in texts)
    return _json(
        200,
        {
            "object": "list",
            "data": [
                {"object": "embedding", "index": i, "embedding": as_base64(v) if encode else v}
                for i, v in enumerate(vectors)
            ],
            "model": str(body.get("model") or fake.model),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        },
    )


def _openai_models(fake: FakeLLM, data: Any) -> HTTPReply:
    return _json(200, {"object": "list", "data": [_openai_model(fake.model)]})


# -- Anthropic -----------------------------------------------------------------------
def _anthropic_count(fake: FakeLLM, data: Any) -> HTTPReply:
    request = anthropic_wire.parse_request(_body(data))
    return _json(200, {"input_tokens": _input_tokens(request)})


def _input_tokens(request: Request) -> int:
    """What the fake's own usage would report as input for this request."""
    return estimate_usage(request, Turn("")).input_tokens


# -- Gemini --------------------------------------------------------------------------
def _gemini(fake: FakeLLM, model: str, method: str, data: Any) -> HTTPReply:
    body = _body(data)
    if method == "countTokens":
        inner = body.get("generateContentRequest") or body
        request = gemini_wire.parse_request(_body(inner), model=model, stream=False)
        count = _input_tokens(request)
        return _json(
            200,
            {
                "totalTokens": count,
                "promptTokensDetails": [{"modality": "TEXT", "tokenCount": count}],
            },
        )
    asks = body.get("requests") if method == "batchEmbedContents" else [body]
    vectors = []
    for ask in asks if isinstance(asks, list) else []:
        ask = _body(ask)
        parts = (ask.get("content") or {}).get("parts") or []
        text = "".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))
        size = ask.get("outputDimensionality")
        vectors.append({"values": fake.embed(text, size if isinstance(size, int) else None)})
    if method == "embedContent":
        return _json(200, {"embedding": vectors[0] if vectors else {"values": []}})
    return _json(200, {"embeddings": vectors})


# -- Ollama --------------------------------------------------------------------------
_DETAILS = {
    "parent_model": "",
    "format": "gguf",
    "family": "fake",
    "families": ["fake"],
    "parameter_size": "1B",
    "quantization_level": "Q4_0",
}


def _ollama_tags(fake: FakeLLM, data: Any) -> HTTPReply:
    model = {
        "name": fake.model,
        "model": fake.model,
        "modified_at": _CREATED,
        "size": 1,
        "digest": "0" * 64,
        "details": _DETAILS,
    }
    return _json(200, {"models": [model]})


def _ollama_version(fake: FakeLLM, data: Any) -> HTTPReply:
    return _json(200, {"version": "0.12.0"})


def _ollama_show(fake: FakeLLM, data: Any) -> HTTPReply:
    return _json(
        200,
        {
            "modelfile": f"# FakeLLM {fake.model}",
            "parameters": "",
            "template": "{{ .Prompt }}",
            "details": _DETAILS,
            "model_info": {
                "general.architecture": "fake",
                "fake.context_length": 8192,
                "fake.embedding_length": fake.dimensions,
            },
            "capabilities": ["completion", "tools", "embedding"],
            "modified_at": _CREATED,
        },
    )


def _ollama_embed(fake: FakeLLM, data: Any) -> HTTPReply:
    body = _body(data)
    texts = _texts(body.get("input"))
    size = body.get("dimensions")
    vectors = [fake.embed(t, size if isinstance(size, int) else None) for t in texts]
    return _json(
        200,
        {
            "model": str(body.get("model") or fake.model),
            "embeddings": vectors,
            "total_duration": 0,
            "load_duration": 0,
            "prompt_eval_count": sum(estimate_tokens(t) for t in texts),
        },
    )


def _ollama_embeddings(fake: FakeLLM, data: Any) -> HTTPReply:
    """The older ``/api/embeddings``: one ``prompt``, one ``embedding``."""
    body = _body(data)
    return _json(200, {"embedding": fake.embed(str(body.get("prompt") or ""))})


def _ollama_generate(fake: FakeLLM, data: Any) -> HTTPReply:
    from ._http import HTTPReply

    body = _body(data)
    model = str(body.get("model") or fake.model)
    stream = body.get("stream") is not False  # Ollama streams unless told not to
    messages = [Message("system", str(body["system"]))] if body.get("system") else []
    messages.append(Message("user", str(body.get("prompt") or "")))
    served = fake.serve_request(Request(model, tuple(messages), (), stream, "ollama", body))
    reply = served.reply
    if isinstance(reply, ErrorReply):
        return _json(reply.status, {"error": reply.message})
    if isinstance(reply, HangReply):
        return HTTPReply(200, hang=reply.limit)
    turn = reply.turn if isinstance(reply, TruncatedReply) else reply
    text = turn.text or ""
    done = {
        "model": model,
        "created_at": _CREATED,
        "done": True,
        "done_reason": "length" if turn.finish == "length" else "stop",
        "context": [],
        "total_duration": 0,
        "prompt_eval_count": turn.usage.input_tokens,
        "eval_count": turn.usage.output_tokens,
    }
    if not stream:
        answer = _json(200, {**done, "response": text})
        answer.delay = served.delay
        return answer
    size = max(1, fake.fragment)
    lines = [
        json.dumps(
            {"model": model, "created_at": _CREATED, "response": text[i : i + size], "done": False}
        ).encode()
        + b"\n"
        for i in range(0, len(text), size)
    ]
    if isinstance(reply, TruncatedReply):
        lines = lines[: reply.keep]
    else:
        lines.append(json.dumps({**done, "response": ""}).encode() + b"\n")
    return HTTPReply(200, {"content-type": "application/x-ndjson"}, lines, delay=served.delay)


_GETS: dict[str, Callable[[FakeLLM, Any], HTTPReply]] = {
    "/v1/models": _openai_models,
    "/models": _openai_models,
    "/api/tags": _ollama_tags,
    "/api/version": _ollama_version,
}
_POSTS: tuple[tuple[str, Callable[[FakeLLM, Any], HTTPReply]], ...] = (
    ("/api/embeddings", _ollama_embeddings),
    ("/embeddings", _openai_embeddings),
    ("/messages/count_tokens", _anthropic_count),
    ("/api/generate", _ollama_generate),
    ("/api/show", _ollama_show),
    ("/api/embed", _ollama_embed),
)
