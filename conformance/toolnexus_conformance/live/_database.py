"""The example database as a search sees it: nothing is saved while the search stops.

Hypothesis saves the arguments of any example whose test raised something other
than an ``Exception`` (a crash worth replaying), and replays its saved examples
first next time, smallest first. The search ends that way when its budget is
spent or the tool's server has gone: the example that raised then is just the one
under way, often a shrink candidate that passes (``{'n': 500}`` halfway to the
failure at ``1001``). Saved, it would be replayed before the real failure on every
later run. A hang also ends the search that way, and is saved: replaying it first
is what the database is for.

Imported only where hypothesis already is.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from hypothesis.database import ExampleDatabase

__all__ = ["SavesUntilStopped"]


class SavesUntilStopped(ExampleDatabase):
    """``inner``, except that saves are dropped once ``stopping`` is set."""

    def __init__(self, inner: ExampleDatabase, stopping: threading.Event) -> None:
        super().__init__()
        self._inner, self._stopping = inner, stopping

    def save(self, key: bytes, value: bytes) -> None:
        if not self._stopping.is_set():
            self._inner.save(key, value)

    def fetch(self, key: bytes) -> Iterable[bytes]:
        return self._inner.fetch(key)

    def delete(self, key: bytes, value: bytes) -> None:
        self._inner.delete(key, value)

    def move(self, src: bytes, dest: bytes, value: bytes) -> None:
        # A move is how hypothesis demotes a failure it has beaten: kept while stopping,
        # as it only ever drops what a smaller failure already replaces.
        self._inner.move(src, dest, value)

    def __repr__(self) -> str:
        return f"SavesUntilStopped({self._inner!r})"
