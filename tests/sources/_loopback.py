"""A small HTTP server on 127.0.0.1 for the HTTP tools' tests, in a daemon thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def _send(self, status: int, body: object) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # ``/slow`` answers after the client's timeout: the client is gone, as the
            # test meant, and socketserver would print the broken pipe to the terminal.
            self.close_connection = True

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path.startswith("/items/"):
            self._send(200, {"id": url.path.rsplit("/", 1)[1], "query": query})
        elif url.path == "/whoami":
            self._send(200, {"authorization": self.headers.get("Authorization")})
        elif url.path == "/down":
            self._send(503, "down for maintenance")
        elif url.path == "/slow":
            time.sleep(float(query.get("seconds", "5")))
            self._send(200, "late")
        else:
            self._send(404, "no such page")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        self._send(201, {"received": self.rfile.read(length).decode()})


@contextmanager
def loopback_server() -> Iterator[str]:
    """The server's base URL while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
