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

import os
import re
import threading
from collections.abc import Mapping

__all__ = [
    "CREDENTIAL_WORDS",
    "ENV_MIN_LENGTH",
    "MASK",
    "MIN_LENGTH",
    "clear",
    "credential_values",
    "find",
    "mask",
    "register",
    "register_environment",
    "registered",
]

#: What a registered value becomes in masked text.
MASK = "***"
#: The shortest value worth masking.
MIN_LENGTH = 4
#: An environment variable whose name holds one of these is taken for a credential.
CREDENTIAL_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")
#: Names that say the value is where a credential lives, not the credential.
_LOCATION_SUFFIXES = ("_SOCK", "_PATH", "_FILE", "_DIR", "_URL", "_HOST", "_PORT")
#: The shortest environment value taken for a credential: ``1``, ``true`` or ``debug`` are not.
ENV_MIN_LENGTH = 8

_lock = threading.Lock()
_values: set[str] = set()
#: The registered values as one pattern, longest first (so a value inside another
#: masks whole); ``None`` while nothing is registered. Rebuilt on change.
_pattern: re.Pattern[str] | None = None


def register(value: str) -> None:
    """Remember ``value`` as a secret for the rest of this process."""
    global _pattern
    if not isinstance(value, str) or len(value) < MIN_LENGTH:
        return
    with _lock:
        if value in _values:
            return
        _values.add(value)
        ordered = sorted(_values, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(v) for v in ordered))


def credential_values(environ: Mapping[str, str]) -> list[str]:
    """The values of credential-looking variables (``API_KEY``, ``GITHUB_TOKEN``...)."""
    found = []
    for name, value in environ.items():
        upper = name.upper()
        if not any(word in upper for word in CREDENTIAL_WORDS):
            continue
        if upper.endswith(_LOCATION_SUFFIXES) or len(value.strip()) < ENV_MIN_LENGTH:
            continue
        found.append(value)
    return found


def register_environment(environ: Mapping[str, str] | None = None) -> int:
    """Register the credential-looking values of ``environ`` (this process's); how many."""
    values = credential_values(os.environ if environ is None else environ)
    for value in values:
        register(value)
    return len(values)


def registered() -> bool:
    """Whether anything is registered: with nothing, masking is skipped altogether."""
    return _pattern is not None


def mask(text: str) -> str:
    """``text`` with every registered value replaced by ``MASK``."""
    pattern = _pattern
    return text if pattern is None else pattern.sub(MASK, text)


def find(text: str) -> bool:
    """Whether any registered value occurs in ``text``."""
    pattern = _pattern
    return pattern is not None and pattern.search(text) is not None


def clear() -> None:
    """Forget every registered value (for tests that register their own)."""
    global _pattern
    with _lock:
        _values.clear()
        _pattern = None
