"""Values the kit expanded from ``${ENV}``, remembered so no output of the run shows them.

A token in an ``mcp.json`` ``env`` or ``headers`` entry reaches a server, and a
server (or a tool) may echo it back into a result, an error, a traceback or its
stderr. The kit registers every value it expands; the pytest plugin masks them in
every report it writes (terminal, JUnit XML, the JSON report), and a check can ask
whether a text carries one. Standard library only: reporting code imports it freely.

Values shorter than ``MIN_LENGTH`` are not registered: masking every ``1`` or ``on``
in a report would hide more than it protects.
"""

from __future__ import annotations

import threading

__all__ = ["MASK", "MIN_LENGTH", "clear", "find", "mask", "register"]

#: What a registered value becomes in masked text.
MASK = "***"
#: The shortest value worth masking.
MIN_LENGTH = 4

_lock = threading.Lock()
_values: set[str] = set()
#: The registered values, longest first (so a value inside another masks whole); rebuilt on change.
_ordered: tuple[str, ...] = ()


def register(value: str) -> None:
    """Remember ``value`` as a secret for the rest of this process."""
    global _ordered
    if not isinstance(value, str) or len(value) < MIN_LENGTH:
        return
    with _lock:
        if value in _values:
            return
        _values.add(value)
        _ordered = tuple(sorted(_values, key=len, reverse=True))


def mask(text: str) -> str:
    """``text`` with every registered value replaced by ``MASK``."""
    for value in _ordered:
        if value in text:
            text = text.replace(value, MASK)
    return text


def find(text: str) -> bool:
    """Whether any registered value occurs in ``text``."""
    return any(value in text for value in _ordered)


def clear() -> None:
    """Forget every registered value (for tests that register their own)."""
    global _ordered
    with _lock:
        _values.clear()
        _ordered = ()
