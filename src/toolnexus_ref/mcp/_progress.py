"""Progress notifications per request, with arrival times, seen on the wire.

The SDK forgets a request's progress callback the moment the request ends, so
progress a server keeps sending after a cancellation never reaches it. The
connection therefore stamps its own progress token on a call and records every
``notifications/progress`` for that token until the log is closed, which is what
lets a check judge a server that ignores ``notifications/cancelled``.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

__all__ = ["ProgressEvent", "ProgressLog"]

_tokens = itertools.count(1)


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """One ``notifications/progress`` as it arrived (``at`` is ``time.monotonic()``)."""

    progress: float
    total: float | None
    message: str | None
    at: float


@dataclass(slots=True)
class ProgressLog:
    """Every progress notification for one token; the connection appends, a caller reads."""

    token: str = field(default_factory=lambda: f"toolnexus-progress-{next(_tokens)}")
    events: list[ProgressEvent] = field(default_factory=list)

    def record(self, progress: float, total: float | None, message: str | None) -> None:
        self.events.append(ProgressEvent(progress, total, message, time.monotonic()))

    def after(self, moment: float) -> list[ProgressEvent]:
        """The events that arrived after ``moment`` (a ``time.monotonic()`` reading)."""
        return [event for event in self.events if event.at > moment]
