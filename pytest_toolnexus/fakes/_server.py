"""A real HTTP server on a loopback port, for clients respx cannot reach."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._http import handle

if TYPE_CHECKING:
    from ._core import FakeLLM

__all__ = ["FakeLLMServer"]

_MAX_BODY = 64 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    # HTTP/1.0: one request per connection, the body of a stream ends at close
    protocol_version = "HTTP/1.0"
    # headers and body go out in separate writes: without this, delayed ACKs add ~40ms
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > _MAX_BODY:
            self.send_error(413, "request body too large")
            return
        body = self.rfile.read(length) if length else b""
        reply = handle(self.server.fake, "POST", self.path.split("?", 1)[0], body)
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        streaming = reply.headers.get("content-type") == "text/event-stream"
        if not streaming:
            self.send_header("content-length", str(len(reply.body)))
        self.end_headers()
        try:
            for chunk in reply.chunks:
                self.wfile.write(chunk)
                if streaming:
                    self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the client went away
            pass

    def do_GET(self) -> None:
        self.send_error(404, "FakeLLM serves POST only")

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read requests
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLM


class FakeLLMServer:
    """Serves a ``FakeLLM`` at ``http://127.0.0.1:<port>`` in a daemon thread.

    Point a client at ``openai_base_url`` (``.../v1``), ``anthropic_base_url`` or
    ``gemini_base_url``. ``stop()`` (or leaving the ``with`` block) shuts it down and
    waits a bounded time for the thread.
    """

    def __init__(self, fake: FakeLLM, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.fake = fake
        self._server = _Server((host, port), _Handler)
        self._server.fake = fake
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    @property
    def gemini_base_url(self) -> str:
        return self.url

    def start(self) -> FakeLLMServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="toolnexus-fake-llm",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
