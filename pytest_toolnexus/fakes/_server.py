"""A real HTTP server on a loopback port, for clients respx cannot reach.

HTTP/1.1 with keep-alive: whole bodies carry a ``content-length``, streams go out
chunked, one write per event. One server can serve many fakes, each under its own
path prefix (``mount``), so a test session starts one server and each test's fake
costs a dictionary entry, not a socket and a thread.
"""

from __future__ import annotations

import itertools
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ._base_urls import BaseUrls
from ._http import HTTPReply, handle

if TYPE_CHECKING:
    from ._core import FakeLLM

__all__ = ["FakeLLMServer", "MountedFake"]

_MAX_BODY = 64 * 1024 * 1024
_PREFIX = "/_fake/"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # headers and body go out in separate writes: without this, delayed ACKs add ~40ms
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self._serve("POST")

    def do_GET(self) -> None:
        self._serve("GET")

    def _serve(self, method: str) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > _MAX_BODY:
            self.send_error(413, "request body too large")
            return
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        fake, path = self.server.resolve(path)
        if fake is None:
            self._send(
                HTTPReply(
                    404,
                    {"content-type": "application/json"},
                    [b'{"error": {"message": "FakeLLM: no fake is mounted at this path"}}'],
                )
            )
            return
        reply = handle(fake, method, path, body, query=query, headers=dict(self.headers.items()))
        if reply.hang is not None:
            self._hang(reply.hang)
            return
        if reply.delay:
            time.sleep(reply.delay)
        self._send(reply)

    def _send(self, reply: HTTPReply) -> None:
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if reply.streaming:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(len(reply.body)))
        self.end_headers()
        try:
            if not reply.streaming:
                self.wfile.write(reply.body)
                return
            for chunk in reply.chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):  # the client went away
            self.close_connection = True

    def _hang(self, limit: float) -> None:
        """Send nothing until the client closes the connection (its timeout) or ``limit``."""
        self.close_connection = True
        deadline = time.monotonic() + limit
        conn = self.connection
        while time.monotonic() < deadline and not self.server.stopping.is_set():
            readable, _, _ = select.select([conn], [], [], 0.05)
            if readable:
                try:
                    if not conn.recv(1, socket.MSG_PEEK):
                        return  # the client gave up
                except OSError:
                    return

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read requests
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.root: FakeLLM | None = None
        self.mounted: dict[str, FakeLLM] = {}
        self.stopping = threading.Event()

    def resolve(self, path: str) -> tuple[FakeLLM | None, str]:
        if path.startswith(_PREFIX):
            key, _, rest = path[len(_PREFIX) :].partition("/")
            return self.mounted.get(key), "/" + rest
        return self.root, path


class MountedFake(BaseUrls):
    """One fake on a shared server: the base URLs that reach it, and ``unmount()``."""

    def __init__(self, server: FakeLLMServer, key: str, fake: FakeLLM) -> None:
        self.server = server
        self.key = key
        self.fake = fake

    @property
    def url(self) -> str:
        return f"{self.server.url}{_PREFIX}{self.key}"

    def unmount(self) -> None:
        self.server._server.mounted.pop(self.key, None)


class FakeLLMServer(BaseUrls):
    """Serves a ``FakeLLM`` at ``http://127.0.0.1:<port>`` in a daemon thread.

    Point a client at ``openai_base_url`` (``.../v1``, for Chat Completions and the
    Responses API), ``anthropic_base_url``, ``gemini_base_url`` or ``ollama_base_url``.
    ``mount(fake)`` serves further fakes under their own prefix. ``stop()`` (or leaving
    the ``with`` block) shuts it down and waits a bounded time for the thread.
    """

    def __init__(
        self, fake: FakeLLM | None = None, *, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.fake = fake
        self._server = _Server((host, port))
        self._server.root = fake
        self._thread: threading.Thread | None = None
        self._keys = itertools.count(1)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def mount(self, fake: FakeLLM) -> MountedFake:
        """Serve ``fake`` under a path prefix of its own on this server."""
        key = str(next(self._keys))
        self._server.mounted[key] = fake
        return MountedFake(self, key, fake)

    def start(self) -> FakeLLMServer:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                # the loop wakes for a connection; a short poll would also take the GIL
                # a hundred times a second from every test while the session server
                # lives, and stop() wakes the loop itself
                kwargs={"poll_interval": 0.5},
                name="toolnexus-fake-llm",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Shut down at once: a connection wakes the server loop, which would otherwise
        notice the shutdown only at its next poll."""
        self._server.stopping.set()
        if self._thread is not None:
            stopper = threading.Thread(target=self._server.shutdown, daemon=True)
            stopper.start()
            try:
                host, port = self._server.server_address[:2]
                socket.create_connection((str(host), int(port)), timeout=1).close()
            except OSError:
                pass
            stopper.join(timeout)
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
