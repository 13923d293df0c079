"""The evidence format: known-bad tools that must trip named checks, known-good ones that must not.

Every module under ``conformance/corpus/bad`` and ``conformance/corpus/good``
defines ``CORPUS: list[Entry]``. The corpus test runs the suites over every entry
and fails when a code has no bad tool that trips it, a bad tool trips none of its
declared codes, or a good tool trips anything.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Entry", "Hold", "load_corpus"]


class Hold:
    """What a corpus tool's never-returning read waits on, or spins on, until ``release``.

    A test calls ``release`` once its run is over, so an abandoned read leaves with
    it instead of holding a thread (and, for ``spin``, a CPU) for the rest of the
    session. Releasing re-arms: a later read of the same tool hangs again.
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def wait(self) -> None:
        """Block forever, as on a lock nobody releases."""
        self._event.wait()

    def spin(self) -> None:
        """Loop forever in pure Python, never sleeping: ``while True: pass``, stoppable."""
        event = self._event
        while not event.is_set():
            pass

    def release(self) -> None:
        """Let every read begun so far go; the ones begun after wait on a fresh event."""
        event, self._event = self._event, threading.Event()
        event.set()


@dataclass(frozen=True)
class Entry:
    tool: Any
    #: Codes this tool must trip (a bad entry); empty for a good entry.
    trips: frozenset[str] = field(default_factory=frozenset)
    #: Why this tool is here, in one line.
    note: str = ""
    #: Other tools to check beside it, as one target (for uniqueness and the like).
    siblings: tuple[Any, ...] = ()
    #: The live checks may call it even if it looks unsafe (it is ours and harmless).
    execute: bool = True
    #: Set for hostile entries whose whole run must end in bounded time.
    hostile: bool = False
    #: ``module:attr`` naming this tool, for entries that end, crash or freeze the process
    #: they run in: they are checked as the plugin checks such targets, in a worker
    #: process (``check_target``), with the corpus folder as the base directory.
    spec: str | None = None
    #: For a tool whose reads never return: lets go of the threads they hold. Call it
    #: once the entry's run is over, so an abandoned read (a busy loop) does not go on
    #: costing the rest of the process; later reads of the tool hang again.
    release: Callable[[], None] | None = None


def _load_module(path: Path) -> Any:
    name = f"toolnexus_corpus_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load corpus module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_corpus(folder: Path, pattern: str = "*.py") -> Iterator[tuple[str, Entry]]:
    """``(module-stem, entry)`` for every entry in every module of ``folder`` matching ``pattern``.

    Only the modules named are imported: some corpus modules import an agent
    framework to build their tools, which takes a second a framework.
    """
    for path in sorted(folder.glob(pattern)):
        if path.name.startswith("_"):
            continue
        module = _load_module(path)
        for entry in module.CORPUS:
            yield path.stem, entry
