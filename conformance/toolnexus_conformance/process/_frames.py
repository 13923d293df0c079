"""The frames between the session, the worker and a tool's process.

Frames on a stream socket are pickles with a four-byte length; the control socket
between the session and the worker is a datagram socket, one message per datagram,
which can carry a tool's socket as a file descriptor. Both ends import this module
and nothing else of each other.
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import struct
import threading
import time
from typing import Any

__all__ = ["CONTROL_MAX", "Channel", "FrameReader", "kill_group"]

#: The largest control message (a datagram); explore requests are a few hundred bytes.
CONTROL_MAX = 1 << 16
_LENGTH = struct.Struct("!I")
#: The clock of every bound here, taken before any tool can replace ``time.monotonic``.
_monotonic = time.monotonic


class Channel:
    """Frames out on a stream socket; safe to use from several threads."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._lock = threading.Lock()

    def send(self, message: Any) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._sock.sendall(_LENGTH.pack(len(data)) + data)


class FrameReader:
    """Frames in from a stream socket, with a timeout per read."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = bytearray()

    def next(self, timeout: float) -> Any:
        """The next frame; ``TimeoutError`` if none within ``timeout``, ``EOFError`` at the end."""
        end = _monotonic() + timeout
        while True:
            frame = self._take()
            if frame is not None:
                return pickle.loads(frame)
            left = end - _monotonic()
            if left <= 0:
                raise TimeoutError
            self._sock.settimeout(left)
            try:
                chunk = self._sock.recv(1 << 20)
            except TimeoutError:
                raise
            except OSError as exc:
                raise EOFError(str(exc)) from None
            if not chunk:
                raise EOFError("the socket was closed")
            self._buffer += chunk

    def _take(self) -> bytes | None:
        if len(self._buffer) < _LENGTH.size:
            return None
        (length,) = _LENGTH.unpack_from(self._buffer)
        if len(self._buffer) < _LENGTH.size + length:
            return None
        frame = bytes(self._buffer[_LENGTH.size : _LENGTH.size + length])
        del self._buffer[: _LENGTH.size + length]
        return frame


def kill_group(pid: int) -> None:
    """SIGKILL a process group; one already gone is no error."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
