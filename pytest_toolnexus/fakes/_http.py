"""One HTTP request to a fake, in any wire format, to one HTTP reply."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING

from toolnexus_ref.wire import Turn, WireError, anthropic, gemini, openai

from ._replies import ErrorReply, TruncatedReply

if TYPE_CHECKING:
    from ._core import FakeLLM

__all__ = ["HTTPReply", "handle"]

_GEMINI = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
)


@dataclass(slots=True)
class HTTPReply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


def _json_reply(status: int, data: object, headers: dict[str, str] | None = None) -> HTTPReply:
    return HTTPReply(
        status, {"content-type": "application/json", **(headers or {})}, [json.dumps(data).encode()]
    )


def route(path: str) -> tuple[str, ModuleType, str | None, bool] | None:
    """(provider, wire module, model from the path, streaming from the path) or ``None``."""
    if path.endswith("/chat/completions"):
        return "openai", openai, None, False
    if path.endswith("/messages"):
        return "anthropic", anthropic, None, False
    match = _GEMINI.search(path)
    if match:
        return "gemini", gemini, match["model"], match["method"] == "streamGenerateContent"
    return None


def handle(fake: FakeLLM, method: str, path: str, body: bytes) -> HTTPReply:
    found = route(path)
    if found is None or method.upper() != "POST":
        return _json_reply(404, {"error": {"message": f"FakeLLM serves no {method} {path}"}})
    provider, wire, model, stream = found
    try:
        data = json.loads(body or b"null")
        if not isinstance(data, dict):
            raise WireError("the request body must be a JSON object")
        if provider == "gemini":
            request = gemini.parse_request(data, model=model or "", stream=stream)
        else:
            request = wire.parse_request(data)
    except (ValueError, WireError) as exc:
        return _json_reply(400, wire.error_body(400, f"FakeLLM could not parse the request: {exc}"))
    reply = fake.reply_for(request)
    n = len(fake.requests)
    if isinstance(reply, ErrorReply):
        headers = {} if reply.retry_after is None else {"retry-after": f"{reply.retry_after:g}"}
        return _json_reply(reply.status, wire.error_body(reply.status, reply.message), headers)
    turn = reply.turn if isinstance(reply, TruncatedReply) else reply
    if request.stream:
        events = _events(provider, turn, request.model, n, fake.fragment)
        if isinstance(reply, TruncatedReply):
            events = events[: min(reply.keep, len(events) - 1)]  # never the final event
        return HTTPReply(
            200, {"content-type": "text/event-stream", "cache-control": "no-cache"}, events
        )
    payload = _body(provider, turn, request.model, n)
    if isinstance(reply, TruncatedReply):
        raw = json.dumps(payload).encode()
        return HTTPReply(200, {"content-type": "application/json"}, [raw[: len(raw) // 2]])
    return _json_reply(200, payload)


def _events(provider: str, turn: Turn, model: str, n: int, fragment: int) -> list[bytes]:
    if provider == "openai":
        return openai.stream_events(turn, model=model, id=f"chatcmpl-fake{n}", fragment=fragment)
    if provider == "anthropic":
        return anthropic.stream_events(turn, model=model, id=f"msg_fake{n}", fragment=fragment)
    return gemini.stream_events(turn, model=model, fragment=fragment)


def _body(provider: str, turn: Turn, model: str, n: int) -> dict[str, object]:
    if provider == "openai":
        return openai.build_response(turn, model=model, id=f"chatcmpl-fake{n}")
    if provider == "anthropic":
        return anthropic.build_response(turn, model=model, id=f"msg_fake{n}")
    return gemini.build_response(turn, model=model)
