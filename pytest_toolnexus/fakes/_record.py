"""Recording: a loopback proxy between a client and the real API that writes what the
model said into a cassette.

Point the SDK's base URL at the recorder; it forwards each request unchanged (the
client's key included, in memory only) to the upstream API, hands the answer back
unchanged, and keeps the conversation's shape and the parsed reply. On ``stop()`` the
cassette is written: turns only, never a header, so never a key.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from toolnexus_ref.wire import Request, Turn, WireError, route

from ._base_urls import BaseUrls
from ._cassette import Cassette, conversation_shape

__all__ = ["NewEpisodes", "Recorder", "Recording"]

#: Request headers that belong to the hop, not to the request.
_HOP = {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}


class _ProxyHandler(BaseHTTPRequestHandler):
    server: _ProxyServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        upstream = self.server.recorder.upstream + self.path
        response = self.server.recorder.http.post(upstream, content=body, headers=headers)
        payload = response.content
        self.server.recorder.keep(self.path.split("?", 1)[0], body, response.status_code, payload)
        self.send_response(response.status_code)
        for key in ("content-type", "retry-after"):
            if key in response.headers:
                self.send_header(key, response.headers[key])
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        return


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    recorder: Recorder


class Recorder(BaseUrls):
    """``with Recorder("session.yaml", upstream="https://api.openai.com") as rec:`` then
    give the SDK ``base_url=rec.openai_base_url`` (or ``anthropic_base_url``, ...).

    ``upstream`` is the API's origin, without a path: requests keep theirs.
    """

    def __init__(self, path: str | Path, *, upstream: str, timeout: float = 120.0) -> None:
        import httpx

        self.path = Path(path)
        self.upstream = upstream.rstrip("/")
        self.cassette = Cassette()
        self.errors: list[str] = []
        self.http = httpx.Client(timeout=timeout)
        self._lock = threading.Lock()
        self._server = _ProxyServer(("127.0.0.1", 0), _ProxyHandler)
        self._server.recorder = self
        self._thread: threading.Thread | None = None

    def keep(self, path: str, body: bytes, status: int, payload: bytes) -> None:
        """Parse one exchange into a cassette turn; an error answer is not a turn."""
        found = route(path)
        if found is None or status >= 400:
            return
        wire = found.provider.wire
        try:
            request = wire.parse_request(json.loads(body), model=found.model, stream=found.stream)
            if request.stream:
                turn = wire.read_stream(payload.decode("utf-8").splitlines())
            else:
                turn = wire.parse_response(json.loads(payload))
        except (ValueError, WireError) as exc:
            self.errors.append(f"{path}: could not read the exchange: {exc}")
            return
        with self._lock:
            self.cassette.add(request, turn)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Recorder:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.01},
                name="toolnexus-recorder",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the proxy and write the cassette."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(5.0)
            self._thread = None
        self._server.server_close()
        self.http.close()
        self.cassette.save(self.path)

    def __enter__(self) -> Recorder:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class Recording:
    """The behaviour of a fake that records: each request goes to the real API
    unchanged (its key included, in memory only), the answer comes back unchanged, and
    the conversation's shape with the parsed reply goes into the cassette, written by
    ``save()``. ``upstream`` is the API's origin; without it a request goes to the host
    it was sent to (respx mode), or to the provider's default host (loopback mode)."""

    def __init__(self, path: str | Path, *, upstream: str | None = None, timeout: float = 120.0):
        self.path = Path(path)
        self.upstream = upstream.rstrip("/") if upstream else None
        self.timeout = timeout
        self.cassette = Cassette()
        self.errors: list[str] = []

    def next(self, request: Any) -> Turn | None:
        return None  # never asked: handle() forwards instead

    def replays(self, request: Request) -> bool:
        """Whether ``request`` is answered from a cassette rather than forwarded."""
        return False

    def pending(self) -> list[str]:
        return list(self.errors)

    def origin_for(self, path: str, origin: str | None) -> str:
        if self.upstream:
            return self.upstream
        if origin:
            return origin
        found = route(path)
        if found is None:
            raise ValueError(f"no upstream for {path}: give toolnexus_llm(upstream=...)")
        base = found.provider.base_url
        scheme, _, rest = base.partition("://")
        return f"{scheme}://{rest.split('/', 1)[0]}"

    def forward(
        self, method: str, url: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """One exchange with the real API, through urllib: respx and aioresponses patch
        httpx and aiohttp, so the forwarded request is not served by the fake itself."""
        import urllib.error
        import urllib.request

        sent = {k: v for k, v in headers.items() if k.lower() not in _HOP}
        data = body if method.upper() not in ("GET", "HEAD") else None
        request = urllib.request.Request(url, data=data, headers=sent, method=method.upper())
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.status, dict(response.headers.items()), response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, dict(exc.headers.items()), exc.read()

    def keep(self, path: str, body: bytes, status: int, payload: bytes) -> tuple[Any, Any]:
        """The exchange as (request, turn); the turn goes into the cassette. Either is
        ``None`` for what is not a model turn (another endpoint, an error answer)."""
        found = route(path)
        if found is None:
            return None, None
        wire = found.provider.wire
        try:
            request = wire.parse_request(json.loads(body), model=found.model, stream=found.stream)
        except (ValueError, WireError) as exc:
            self.errors.append(f"{path}: could not read the request: {exc}")
            return None, None
        if status >= 400:
            return request, None
        try:
            if request.stream:
                turn = wire.read_stream(payload.decode("utf-8").splitlines())
            else:
                turn = wire.parse_response(json.loads(payload))
        except (ValueError, WireError) as exc:
            self.errors.append(f"{path}: could not read the reply: {exc}")
            return request, None
        self.cassette.add(request, turn)
        return request, turn

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.cassette.save(self.path)


class NewEpisodes(Recording):
    """Recording in pytest-recording's (VCR's) ``new_episodes`` mode: a request whose
    conversation shape matches an unused turn of the existing cassette is answered from
    it, offline and judged as a replay is; any other request goes to the real API and
    its turn is appended. ``save()`` writes the old turns and the new ones."""

    def __init__(self, path: str | Path, *, upstream: str | None = None, timeout: float = 120.0):
        super().__init__(path, upstream=upstream, timeout=timeout)
        self.cassette = Cassette(list(Cassette.load(path).turns))
        self._recorded = len(self.cassette.turns)
        self._used: set[int] = set()
        #: how many requests were answered from the cassette, and how many recorded
        self.replayed = 0

    def _match(self, request: Request) -> int | None:
        shape = conversation_shape(request.messages)
        for i, turn in enumerate(self.cassette.turns[: self._recorded]):
            if i not in self._used and turn.expect == shape:
                return i
        return None

    def replays(self, request: Request) -> bool:
        return self._match(request) is not None

    def next(self, request: Request) -> Turn | None:
        found = self._match(request)
        if found is None:
            return None
        self._used.add(found)
        self.replayed += 1
        return self.cassette.turns[found].reply
