"""One HTTP request to a fake, in any wire format, to one HTTP reply."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolnexus_ref.wire import Request, WireError, route

from ._endpoints import endpoint
from ._reasoning import ScriptedTurn, dress_response, dress_stream
from ._record import Recording
from ._replies import ErrorReply, HangReply, TruncatedReply
from ._threads import Continued, continued, remembers

if TYPE_CHECKING:
    from toolnexus_ref.wire import Provider, WireFormat

    from ._core import FakeLLM, Served

__all__ = ["HTTPReply", "handle"]


@dataclass(slots=True)
class HTTPReply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    #: seconds to wait before answering (latency injection)
    delay: float = 0.0
    #: hold the request (until the client gives up, at most this long) and send nothing
    hang: float | None = None

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    @property
    def streaming(self) -> bool:
        return self.headers.get("content-type") in ("text/event-stream", "application/x-ndjson")


def _json_reply(status: int, data: object, headers: dict[str, str] | None = None) -> HTTPReply:
    return HTTPReply(
        status, {"content-type": "application/json", **(headers or {})}, [json.dumps(data).encode()]
    )


def error_reply(wire: WireFormat, reply: ErrorReply) -> HTTPReply:
    headers = {} if reply.retry_after is None else {"retry-after": f"{reply.retry_after:g}"}
    body = wire.error_body(reply.status, reply.message)
    error = body.get("error")
    if reply.param and isinstance(error, dict) and "param" in error:
        error["param"] = reply.param
    return _json_reply(reply.status, body, headers)


def handle(
    fake: FakeLLM,
    method: str,
    path: str,
    body: bytes,
    *,
    query: str = "",
    headers: Mapping[str, str] | None = None,
    origin: str | None = None,
) -> HTTPReply:
    """``origin`` is where the request was sent (respx mode), for a recording fake."""
    if isinstance(fake.behaviour, Recording) and not _replayed(fake.behaviour, method, path, body):
        return _recorded(fake, fake.behaviour, method, path, body, query, headers, origin)
    found = route(path)
    if found is None or method.upper() != "POST":
        try:
            answer = endpoint(fake, method, path, json.loads(body) if body else None)
        except (ValueError, WireError) as exc:
            message = f"FakeLLM could not parse the {method} {path} request: {exc}"
            return _json_reply(400, {"error": {"message": message}})
        if answer is not None:
            return answer
        return _json_reply(404, {"error": {"message": f"FakeLLM serves no {method} {path}"}})
    row = found.provider
    wire = row.wire
    data: object = None
    try:
        data = json.loads(body or b"null")
        if not isinstance(data, dict):
            raise WireError("the request body must be a JSON object")
        request = wire.parse_request(data, model=found.model, stream=found.stream)
    except (ValueError, WireError) as exc:
        # the provider refuses a body it cannot read; so does the fake, and records it
        given = data if isinstance(data, dict) else {}
        model = str(given.get("model") or found.model or "")
        shell = Request(model, (), (), False, row.name, given)
        message = f"FakeLLM could not parse the request: {exc}"
        return error_reply(wire, fake.refuse(shell, "malformed_request", message))
    whole = continued(fake, row.name, data, request)
    if isinstance(whole, Continued):
        refused = fake.refuse(
            request, whole.rule, whole.message, param=whole.param, status=whole.status
        )
        answer = error_reply(wire, refused)
        if row.name == "anthropic":  # the SDK reads what to do from error.details
            shown = json.loads(answer.body)
            shown["error"]["details"] = {"error_code": whole.rule}
            answer.chunks = [json.dumps(shown).encode()]
        return answer
    request = whole
    served = fake.serve_request(request)
    answer = _chat_reply(fake, row, wire, data, request, served)
    # the id the SDKs expose as ``_request_id``, for logs that quote it
    answer.headers[_REQUEST_ID.get(row.name, "x-request-id")] = f"req_fake{served.number}"
    return answer


_REQUEST_ID = {"anthropic": "request-id"}


def _chat_reply(
    fake: FakeLLM,
    row: Provider,
    wire: WireFormat,
    data: dict[str, Any],
    request: Request,
    served: Served,
) -> HTTPReply:
    reply, n = served.reply, served.number
    if isinstance(reply, HangReply):
        return HTTPReply(200, hang=reply.limit)
    if isinstance(reply, ErrorReply):
        return replace(error_reply(wire, reply), delay=served.delay)
    turn = reply.turn if isinstance(reply, TruncatedReply) else reply
    id = _reply_id(row.name, n)
    if remembers(row.name, data):
        # as the API does: only a stored response (a thread's reply) can be continued
        fake.remember(id, (*request.messages, turn.as_message()), request.tools)
    if request.stream:
        events = wire.stream_events(
            turn, model=request.model, id=id, fragment=fake.fragment, request=data
        )
        if isinstance(turn, ScriptedTurn):
            events = dress_stream(row.name, events, turn, data, fake.fragment)
        if isinstance(reply, TruncatedReply):
            events = events[: min(reply.keep, len(events) - 1)]  # never the final event
        headers = {"content-type": row.stream_type, "cache-control": "no-cache"}
        return HTTPReply(200, headers, events, delay=served.delay)
    payload = wire.build_response(turn, model=request.model, id=id, request=data)
    if isinstance(turn, ScriptedTurn):
        payload = dress_response(row.name, payload, turn, data)
    if isinstance(reply, TruncatedReply):
        raw = json.dumps(payload).encode()
        return HTTPReply(200, {"content-type": "application/json"}, [raw[: len(raw) // 2]])
    return replace(_json_reply(200, payload), delay=served.delay)


def _replayed(recording: Recording, method: str, path: str, body: bytes) -> bool:
    """A model request a recording answers from its cassette (``new_episodes``)."""
    found = route(path)
    if found is None or method.upper() != "POST":
        return False
    try:
        data = json.loads(body or b"null")
        if not isinstance(data, dict):
            return False
        request = found.provider.wire.parse_request(data, model=found.model, stream=found.stream)
    except (ValueError, WireError):
        return False
    return recording.replays(request)


def _recorded(
    fake: FakeLLM,
    recording: Recording,
    method: str,
    path: str,
    body: bytes,
    query: str,
    headers: Mapping[str, str] | None,
    origin: str | None,
) -> HTTPReply:
    """Forward to the real API, answer with what it said, keep the turn."""
    try:
        url = recording.origin_for(path, origin) + path + (f"?{query}" if query else "")
        status, got, payload = recording.forward(method, url, body, dict(headers or {}))
    except (OSError, ValueError) as exc:
        message = f"FakeLLM recording could not reach the real API: {exc}"
        recording.errors.append(message)
        return _json_reply(502, {"error": {"message": message}})
    request, turn = recording.keep(path, body, status, payload)
    if request is not None:
        text = payload.decode("utf-8", "replace")[:500]
        fake.observe(request, turn if turn is not None else ErrorReply(status, text))
    kept = {k.lower(): v for k, v in got.items() if k.lower() in ("content-type", "retry-after")}
    return HTTPReply(status, kept, [payload])


def _reply_id(provider: str, n: int) -> str:
    prefix = {"openai": "chatcmpl-fake", "responses": "resp_fake", "anthropic": "msg_fake"}
    return f"{prefix.get(provider, 'fake')}{n}"
