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

from toolnexus_ref.wire import WireError, route

from ._base_urls import BaseUrls
from ._cassette import Cassette

__all__ = ["Recorder"]

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
