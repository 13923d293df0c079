"""Values of the wrong type for a declared ``type``, the ones lax validators accept first.

A validator that coerces (pydantic in lax mode, zod's ``coerce``, a hand-written
``int(args["n"])``) turns ``true`` or ``"1"`` into the integer 1 and reports
success; a value such as ``[]`` is refused by nearly everything. So the values
that catch a lax validator come first, each labelled with why it is there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._model import SPELLED
from ._dialect import json_key

__all__ = ["LAX_NOTE", "SPELLED", "WrongValue", "enum_near_misses", "json_types", "wrong_values"]

#: Appended to the label of a value a coercing validator turns into the declared type.
LAX_NOTE = "lax validators coerce it"
#: The lax strings that spell a value of each declared type.
_SPELLS: Mapping[str, frozenset[str]] = {
    "integer": frozenset({"1"}),
    "number": frozenset({"1", "1.5"}),
    "boolean": frozenset({"true", "false"}),
}


@dataclass(frozen=True, slots=True)
class WrongValue:
    """A value outside the declared type, with how to name it in a mutation."""

    kind: str
    value: object
    #: A coercing validator accepts it: the mutation says so.
    lax: bool = False
    #: It is the declared value written as a string.
    spelled: bool = False

    @property
    def label(self) -> str:
        if self.spelled:
            return f"{self.kind} ({LAX_NOTE}; {SPELLED})"
        return f"{self.kind} ({LAX_NOTE})" if self.lax else self.kind


#: What lax validators accept for each declared type, most often accepted first.
_LAX: Mapping[str, tuple[tuple[str, object], ...]] = {
    "integer": (
        ("boolean true", True),
        ("numeric string '1'", "1"),
        ("float 1.5", 1.5),
        ("numeric string '1.5'", "1.5"),
    ),
    "number": (
        ("boolean true", True),
        ("numeric string '1.5'", "1.5"),
        ("numeric string '1'", "1"),
    ),
    "string": (("number 1", 1), ("boolean true", True)),
    "boolean": (("string 'true'", "true"), ("number 1", 1), ("string 'false'", "false")),
    "array": (("object {}", {}), ("string 'x'", "x")),
    "object": (("array []", []), ("JSON text '{}'", "{}")),
    "null": (("string 'null'", "null"), ("number 0", 0)),
}
#: One value of every JSON type, refused by any validator of another type.
_PLAIN: tuple[tuple[str, object], ...] = (
    ("string", "not-a-value"),
    ("integer", 7),
    ("number", 0.5),
    ("boolean", True),
    ("null", None),
    ("array", []),
    ("object", {}),
)


def json_types(value: object) -> frozenset[str]:
    """The JSON Schema types ``value`` satisfies (``1.0`` is an integer, ``True`` is not)."""
    if isinstance(value, bool):
        return frozenset({"boolean"})
    if isinstance(value, int):
        return frozenset({"integer", "number"})
    if isinstance(value, float):
        integral = math.isfinite(value) and value.is_integer()
        return frozenset({"integer", "number"} if integral else {"number"})
    if isinstance(value, str):
        return frozenset({"string"})
    if value is None:
        return frozenset({"null"})
    if isinstance(value, list | tuple):
        return frozenset({"array"})
    if isinstance(value, Mapping):
        return frozenset({"object"})
    return frozenset()


def _declared(declared: Any) -> list[str]:
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, Sequence):
        return [kind for kind in declared if isinstance(kind, str)]
    return []


def wrong_values(declared: Any) -> list[WrongValue]:
    """Values no type in ``declared`` admits: lax-accepted ones first, then one of each type."""
    allowed = set(_declared(declared))
    out: list[WrongValue] = []
    seen: set[object] = set()

    def offer(kind: str, value: object, lax: bool, spelled: bool = False) -> None:
        key = json_key(value)
        if key not in seen and not (json_types(value) & allowed):
            seen.add(key)
            out.append(WrongValue(kind, value, lax, spelled))

    for kind in _declared(declared):
        for label, value in _LAX.get(kind, ()):
            offer(label, value, True, isinstance(value, str) and value in _SPELLS.get(kind, ()))
    for label, value in _PLAIN:
        offer(label, value, False)
    return out


def enum_near_misses(values: Sequence[object]) -> list[tuple[str, object]]:
    """Values one slip away from an allowed one: another case, a trailing space, ``"1"`` for 1.

    Lax validators normalise these (case-insensitive enums, stripped strings, coerced
    numbers) and accept what the schema forbids.
    """
    allowed = {json_key(v) for v in values}
    out: list[tuple[str, object]] = []

    def offer(label: str, value: object) -> None:
        key = json_key(value)
        if key not in allowed and all(json_key(v) != key for _, v in out):
            out.append((label, value))

    text = next((v for v in values if isinstance(v, str) and v.strip()), None)
    if text is not None:
        other = text.upper() if text.upper() != text else text.lower()
        offer(f"{other!r}, {text!r} in another case", other)
        offer(f"{text + ' '!r}, {text!r} with a trailing space", text + " ")
    number = next(
        (v for v in values if isinstance(v, int | float) and not isinstance(v, bool)), None
    )
    if number is not None:
        offer(f"{str(number)!r}, the number {number!r} as a string ({SPELLED})", str(number))
    flag = next((v for v in values if isinstance(v, bool)), None)
    if flag is not None:
        offer(f"{str(flag).lower()!r}, {flag!r} as a string ({SPELLED})", str(flag).lower())
    return out
