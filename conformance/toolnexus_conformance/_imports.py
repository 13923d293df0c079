"""One import of a heavy package at a time among the kit's own threads.

A live session imports on several threads at once: the target loads import the MCP
SDK (pydantic, httpx, anyio) or a Python target run in pytest's process, while the
warm-up imports hypothesis and jsonschema, and a new search thread reaches into
hypothesis. Python's per-module import locks do not make that safe on the Pythons
the kit supports: when two threads' imports meet (a module each needs, or a package
and its submodule taken in opposite orders), its deadlock detection hands one of
them the other's module half made (python/cpython#83065, mended only in 3.15).
Traced on xdist workers under load: hypothesis's import failed on "partially
initialized module 'annotated_types' has no attribute 'Timezone'" while a load
imported pydantic, and the modules it left behind broke every search of that process
("module 'hypothesis' has no attribute 'core'").

Those imports are CPU work under the GIL, so taking them one at a time costs
little. pytest's own thread takes the turn to collect (the project's conftests and
test modules: ``pytest_toolnexus._session``); what stays outside it is an import
made by a test while it runs. The modules hypothesis and pydantic share are
imported before any of these threads start
(``pytest_toolnexus._session._import_shared_modules``).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

__all__ = ["IMPORTS", "Turn", "import_whole"]


class Turn:
    """A re-entrant lock whose holder can set it aside while it waits for other threads.

    A thread holding the turn must never wait for one that needs it: collection
    imports a test module in the turn, and a module that runs the suites as it is
    imported waits for their searches, which import hypothesis in the turn too (it
    stalled for the warm-up's two minutes). So whoever waits for the kit's threads
    sets the turn aside (``set_aside``) and takes it back after.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._held = threading.local()  # this thread's depth of holding

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._lock.acquire(blocking, timeout)
        if got:
            self._held.depth = self._depth() + 1
        return got

    def release(self) -> None:
        self._lock.release()
        self._held.depth = self._depth() - 1

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return repr(self._lock)  # CPython's names the owner: tests read it

    def _depth(self) -> int:
        depth: int = getattr(self._held, "depth", 0)
        return depth

    @contextlib.contextmanager
    def set_aside(self) -> Iterator[None]:
        """The turn given up, however deeply this thread holds it, and taken back after.

        Nothing is imported by this thread meanwhile: it only waits.
        """
        depth = self._depth()
        for _ in range(depth):
            self.release()
        try:
            yield
        finally:
            for _ in range(depth):
                self.acquire()


#: Held by the kit's threads while they import a heavy package, by the warm-up for
#: all of its work (whose first search imports more of hypothesis lazily), and by
#: pytest's thread while it collects. Re-entrant: the warm-up imports through
#: ``import_whole`` while holding it.
IMPORTS = Turn()


def import_whole(name: str) -> ModuleType:
    """``name``, imported under ``IMPORTS`` unless it already is, whole.

    A module found in ``sys.modules`` may still be executing on another thread (it
    is put there first); only one that has finished skips the lock, so a thread
    never waits for work already done, nor goes on with a module half made.
    """
    module = sys.modules.get(name)
    if module is not None and not _initializing(module):
        return module
    with IMPORTS:
        return importlib.import_module(name)


def _initializing(module: ModuleType) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))
