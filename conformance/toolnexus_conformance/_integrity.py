"""The kit's own code, as it was before a target was imported: changed code is put back.

A target is ordinary Python, imported into the process that judges it. Its import
can replace the kit's functions (``_runner.run_check = lambda ...: PASSED``) and
every check of every target would pass. So the functions and classes of the kit's
packages are noted before a target's import and compared after it: anything
replaced or removed is put back, and the target is not judged (TN001 says why).

Only code is compared (functions, classes, and the methods and properties of the
kit's classes): the kit's own state (caches, flags) may change for good reasons
while a target imports, and a new attribute (a lazily imported name) is no change.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import FunctionType, ModuleType
from typing import Any

__all__ = ["KIT_PACKAGES", "KitSnapshot"]

#: The packages whose code a target must leave alone.
KIT_PACKAGES = ("toolnexus_conformance", "pytest_toolnexus", "toolnexus_ref")

_MISSING = object()


def _is_code(value: Any) -> bool:
    return isinstance(value, FunctionType | type | property | staticmethod | classmethod)


def _ours(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in KIT_PACKAGES)


@dataclass(frozen=True, slots=True)
class _Slot:
    owner: Any  # a module or a class
    name: str
    value: Any

    @property
    def where(self) -> str:
        owner = self.owner
        if isinstance(owner, ModuleType):
            return f"{owner.__name__}.{self.name}"
        return f"{owner.__module__}.{owner.__qualname__}.{self.name}"

    def current(self) -> Any:
        if isinstance(self.owner, type):
            return self.owner.__dict__.get(self.name, _MISSING)
        return vars(self.owner).get(self.name, _MISSING)


class KitSnapshot:
    """The kit's code at one moment; ``changes()`` and ``restore()`` compare with it later."""

    def __init__(self, slots: list[_Slot]) -> None:
        self._slots = slots

    @classmethod
    def take(cls) -> KitSnapshot:
        """The kit's code now, while other threads may be importing (another target's
        load, the MCP SDK's): each dict is copied whole before it is read.

        ``list(d.items())`` is not a copy made at once: each item it makes may start a
        garbage collection, whose finalizers run Python code, during which another thread
        may add a module, and the listing fails ("dictionary changed size during
        iteration"); ``dict.copy`` copies the table with no Python code in between.
        """
        slots: list[_Slot] = []
        for name, module in sys.modules.copy().items():
            if not _ours(name) or not isinstance(module, ModuleType):
                continue
            for attribute, value in vars(module).copy().items():
                if not _is_code(value):
                    continue
                slots.append(_Slot(module, attribute, value))
                if isinstance(value, type) and value.__module__ == name:
                    slots.extend(
                        _Slot(value, member, code)
                        for member, code in value.__dict__.copy().items()
                        if _is_code(code)
                    )
        return cls(slots)

    def changes(self) -> list[str]:
        """Where the code differs from the snapshot, as dotted names."""
        return [slot.where for slot in self._slots if slot.current() is not slot.value]

    def restore(self) -> list[str]:
        """Put back every changed piece of code; returns where it had changed."""
        changed = []
        for slot in self._slots:
            if slot.current() is slot.value:
                continue
            changed.append(slot.where)
            try:
                setattr(slot.owner, slot.name, slot.value)
            except (AttributeError, TypeError):  # pragma: no cover - a frozen owner
                pass
        return changed
