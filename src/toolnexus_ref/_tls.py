"""One TLS context for every httpx client the http and A2A tools open.

Those tools open a client per call, so that no tool is bound to the event loop of its
first call and nothing stays open between calls. But httpx builds a TLS context for
each client it makes, loading the whole CA bundle: about 40 ms of CPU per call, ten
times what the rest of a call to a loopback endpoint costs, and most of an
exploration's CPU on a fast service. The context is the same every time, so it is
built once per process.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

__all__ = ["tls_context"]

_context: list[ssl.SSLContext] = []
_lock = threading.Lock()


def tls_context() -> ssl.SSLContext:
    """httpx's default context (certifi's bundle, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``
    as set at the first call), made once and shared: a context may serve many
    connections at once, from any thread."""
    if not _context:
        with _lock:
            if not _context:
                import httpx

                _context.append(httpx.create_ssl_context())
    return _context[0]
