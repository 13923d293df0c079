"""Values that must never reach a log, a repr or a report: header tokens, env secrets."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Secret", "redact"]

_MASK = "***"


class Secret:
    """A string that hides itself from ``repr``, ``str`` and f-strings.

    Config values expanded from ``${VAR}`` end up in dataclass reprs, exception
    messages and conformance reports; wrapping them makes leaking one take an
    explicit ``.reveal()``.
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, spec: str) -> str:
        return _MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def redact(text: str, secrets: Iterable[Secret]) -> str:
    """``text`` with every secret value (of 4+ characters) replaced by ``***``.

    A server's stderr may echo its own environment; its tail goes into statuses
    and reports, so the values we gave it are masked there too. Short values are
    left alone: masking every ``1`` in a traceback would hide more than it protects.
    """
    for secret in sorted(secrets, key=lambda s: -len(s.reveal())):
        value = secret.reveal()
        if len(value) >= 4:
            text = text.replace(value, _MASK)
    return text
