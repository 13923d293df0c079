"""What reads ``sys.modules`` does so whatever other threads import meanwhile."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from types import ModuleType

from toolnexus_conformance._integrity import KitSnapshot
from toolnexus_conformance.process._sandbox import package_folders


class _Importer:
    """Cyclic garbage whose collection imports a module of the kit's packages (here, a
    new entry in ``sys.modules``), then leaves another of itself for the next one: what
    another thread importing does to ``sys.modules`` while it is read, made
    deterministic by a collection at every allocation."""

    added: list[str] = []

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        if len(self.added) < 500:
            name = f"toolnexus_ref._imported_meanwhile_{len(self.added)}"
            sys.modules[name] = ModuleType(name)
            self.added.append(name)
            _Importer()


@contextlib.contextmanager
def _imports_meanwhile() -> Iterator[None]:
    threshold = gc.get_threshold()
    _Importer.added.clear()
    gc.collect()
    gc.set_threshold(1)
    try:
        _Importer()
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.collect()
        for name in _Importer.added:
            sys.modules.pop(name, None)
    assert _Importer.added, "nothing was imported meanwhile"


def test_a_snapshot_taken_while_modules_are_imported_sees_the_kit_as_it_was() -> None:
    """A target's load notes the kit's code while another load imports (the MCP SDK,
    say): it failed the target with "dictionary changed size during iteration"."""
    before = KitSnapshot.take()
    with _imports_meanwhile():
        during = KitSnapshot.take()
    assert during.changes() == before.changes() == []


def test_the_sandbox_finds_the_package_folders_while_modules_are_imported() -> None:
    """A server started on a thread at configure time reads them while the main
    thread imports the session's modules."""
    before = package_folders()
    with _imports_meanwhile():
        during = package_folders()
    assert during == before
