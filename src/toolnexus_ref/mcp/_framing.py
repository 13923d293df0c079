"""What a server writes, read within bounds: stdout as JSON-RPC messages, stderr as a tail.

Over stdio, MCP is one JSON-RPC message per line. A server that never ends a line,
sends 50 MB in one, or floods stdout with log lines or notifications must cost the
reader time and memory in proportion to what it sends and no more than the stated
bounds: the reader keeps one growing buffer and scans each byte once, refuses a line
longer than ``MAX_MESSAGE_BYTES``, and counts what is not JSON-RPC instead of passing
it on. Stderr is kept as its last ``STDERR_TAIL_BYTES`` only: a server that writes
gigabytes of logs costs no disk and no memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MAX_NOISE_BYTES",
    "MAX_NOISE_LINES",
    "MAX_NOTIFICATIONS",
    "MAX_STDERR_BYTES",
    "LineReader",
    "LineTooLong",
    "NotificationRate",
    "StderrTail",
    "StdoutNoise",
]

#: The longest message (one line of stdout) a server may send.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
#: Non-protocol lines a server may write on stdout before the kit stops reading it.
MAX_NOISE_LINES = 1000
#: Non-protocol bytes a server may write on stdout before the kit stops reading it.
MAX_NOISE_BYTES = 4 * 1024 * 1024
#: Notifications a server may send within ``NOTIFICATION_WINDOW`` seconds.
MAX_NOTIFICATIONS = 10_000
NOTIFICATION_WINDOW = 10.0
#: Bytes of stderr a server may write in all before the kit stops reading it.
MAX_STDERR_BYTES = 64 * 1024 * 1024
#: How much of the end of stderr is kept, for statuses and failure messages.
STDERR_TAIL_BYTES = 64 * 1024
_SAMPLES = 3
_SAMPLE_CHARS = 120


class LineTooLong(ValueError):
    """A line passed ``MAX_MESSAGE_BYTES`` without its newline."""


class LineReader:
    """Splits a byte stream into lines; each byte is scanned once, whatever the chunking."""

    __slots__ = ("_buffer", "_scanned", "limit")

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._buffer = bytearray()
        #: How much of the buffer is known to hold no newline.
        self._scanned = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines that ``chunk`` completes, without their newlines.

        Raises ``LineTooLong`` once the unfinished line passes the limit.
        """
        buffer = self._buffer
        buffer += chunk
        lines: list[bytes] = []
        start = 0
        while True:
            end = buffer.find(b"\n", max(start, self._scanned))
            if end < 0:
                break
            if end - start > self.limit:
                raise LineTooLong(end - start)
            lines.append(bytes(buffer[start:end]))
            start = end + 1
        if start:
            del buffer[:start]  # O(1) amortised: bytearray moves its start, not its bytes
        self._scanned = len(buffer)
        if len(buffer) > self.limit:
            raise LineTooLong(len(buffer))
        return lines

    @property
    def pending(self) -> int:
        """Bytes of the line still waiting for its newline."""
        return len(self._buffer)


@dataclass(slots=True)
class StdoutNoise:
    """What a server wrote on stdout that is not JSON-RPC: counts and the first few lines."""

    lines: int = 0
    size: int = 0
    samples: list[str] = field(default_factory=list)

    def record(self, line: bytes) -> None:
        self.lines += 1
        self.size += len(line)
        if len(self.samples) < _SAMPLES:
            text = line[: _SAMPLE_CHARS * 4].decode("utf-8", errors="replace").strip()
            if len(text) > _SAMPLE_CHARS:
                text = text[:_SAMPLE_CHARS] + "..."
            self.samples.append(text)

    @property
    def flooding(self) -> bool:
        return self.lines > MAX_NOISE_LINES or self.size > MAX_NOISE_BYTES

    def describe(self) -> str:
        """One sentence for a status: how much, and what it looked like."""
        shown = "; ".join(repr(s) for s in self.samples)
        plural = "line" if self.lines == 1 else "lines"
        return (
            f"the server wrote {self.lines} {plural} ({self.size} bytes) on stdout that are not"
            f" JSON-RPC messages (stdout is the protocol channel; log to stderr), e.g. {shown}"
        )


class NotificationRate:
    """Tells a server that floods notifications from one that sends many.

    Two rules, either enough. Past ``limit`` within ``window`` seconds of the kit's
    clock: a server that keeps that pace is flooding whatever it means by it. And past
    ``limit`` in a row while the kit was behind, each read from a full buffer (the
    server had written more before the kit had read the last): the first rule counts
    at the speed the kit reads, so on a machine slow enough that the kit takes under
    ``limit / window`` notifications a second it would never fire, while a server that
    stays ahead of its reader that long is flooding at any speed. A read that finds
    the server caught up with begins the run again: a long call's progress, paced,
    never adds up.
    """

    __slots__ = ("_behind", "_count", "_started", "limit", "window")

    def __init__(self, limit: int = MAX_NOTIFICATIONS, window: float = NOTIFICATION_WINDOW) -> None:
        self.limit = limit
        self.window = window
        self._started: float | None = None
        self._count = 0
        self._behind = 0

    def caught_up(self) -> None:
        """The last read found less than a full buffer: the server was not ahead."""
        self._behind = 0

    def record(self, now: float, *, behind: bool = False) -> str | None:
        """Count one at ``now`` (seconds, monotonic), read while the kit was ``behind``
        or not; what the server did once it is flooding, else ``None``."""
        if self._started is None or now - self._started > self.window:
            self._started, self._count = now, 0
        self._count += 1
        self._behind = self._behind + 1 if behind else 0
        if self._count > self.limit:
            return f"more than {self.limit:,} within {self.window:g}s"
        if self._behind > self.limit:
            return (
                f"more than {self.limit:,} in a row, each written before the kit had read the last"
            )
        return None


class StderrTail:
    """The end of a server's stderr, and how much it wrote in all; memory stays bounded."""

    __slots__ = ("_tail", "keep", "total")

    def __init__(self, keep: int = STDERR_TAIL_BYTES) -> None:
        self.keep = keep
        self.total = 0
        self._tail = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self._tail += chunk
        if len(self._tail) > 2 * self.keep:  # trim in batches: each byte is moved O(1) times
            del self._tail[: len(self._tail) - self.keep]

    @property
    def flooding(self) -> bool:
        return self.total > MAX_STDERR_BYTES

    def text(self, lines: int, *, since: int = 0) -> str:
        """The last ``lines`` lines written after byte ``since`` of the whole stream."""
        kept = bytes(self._tail[-self.keep :])
        first = self.total - len(kept)  # the stream offset of kept[0]
        data = kept[max(0, since - first) :]
        text = data.decode("utf-8", errors="replace")
        return "\n".join(text.rstrip().splitlines()[-lines:])
