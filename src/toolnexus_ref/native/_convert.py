"""JSON arguments to the Python values a function's hints promise.

Runs after schema validation, so most shapes are already right; what is left is
turning JSON into the richer types (dataclass instances, enum members, tuples,
sets, dates, UUIDs, pydantic models). For a union the members are tried in order
and the first that fits wins, so ``date | str`` turns a date-shaped string into a
``date``: order a union's members from the most to the least specific.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import pathlib
import uuid
from collections.abc import Callable
from typing import Any

from ._kinds import kind_of, resolved_hints

__all__ = ["ConversionError", "convert"]


class ConversionError(ValueError):
    """A JSON value that does not fit the annotated type."""


def _parse_datetime(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value)


_PARSERS: dict[Any, Callable[[str], Any]] = {
    dt.datetime: _parse_datetime,
    dt.date: dt.date.fromisoformat,
    dt.time: dt.time.fromisoformat,
    uuid.UUID: uuid.UUID,
    pathlib.Path: pathlib.Path,
    pathlib.PurePath: pathlib.PurePath,
}


def convert(value: Any, tp: Any) -> Any:
    """``value`` (plain JSON data) as an instance of ``tp``; raises ``ConversionError``."""
    kind, args = kind_of(tp)
    if kind == "any":
        return value
    if kind == "null":
        return _expect(value, value is None, "null")
    if kind == "simple":
        if tp is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if tp is int and isinstance(value, float) and value.is_integer():
            return int(value)  # JSON-Schema's "integer" accepts 3.0
        fits = isinstance(value, tp) and (tp is bool or not isinstance(value, bool))
        return _expect(value, fits, tp.__name__)
    if kind == "format":
        _expect(value, isinstance(value, str), "a string")
        try:
            return _PARSERS[tp](value)
        except ValueError as exc:
            raise ConversionError(f"{value!r} is not a valid {tp.__name__}: {exc}") from None
    if kind in ("annotated", "wrapper", "newtype"):
        return convert(value, args[0])
    if kind == "literal":
        for option in args:
            plain = getattr(option, "value", option)
            if plain == value and isinstance(plain, bool) == isinstance(value, bool):
                return option
        raise ConversionError(f"{value!r} is not one of {[getattr(a, 'value', a) for a in args]}")
    if kind == "enum":
        try:
            return tp(value)
        except ValueError as exc:
            raise ConversionError(str(exc)) from None
    if kind == "union":
        problems = []
        for member in args:
            try:
                return convert(value, member)
            except ConversionError as exc:
                problems.append(str(exc))
        raise ConversionError("; ".join(problems))
    return _convert_container(value, tp, kind, args)


def _convert_container(value: Any, tp: Any, kind: str, args: tuple[Any, ...]) -> Any:
    if kind in ("array", "set", "tuple"):
        _expect(value, isinstance(value, list), "an array")
        if kind == "tuple":
            if args and not (len(args) == 2 and args[1] is Ellipsis) and args != ((),):
                if len(value) != len(args):
                    raise ConversionError(f"expected {len(args)} items, got {len(value)}")
                return tuple(convert(v, a) for v, a in zip(value, args, strict=True))
            return (
                tuple(convert(v, args[0]) for v in value)
                if args and args != ((),)
                else tuple(value)
            )
        items = [convert(v, args[0]) for v in value] if args else list(value)
        if kind == "set":
            try:
                return frozenset(items) if _origin_is(tp, frozenset) else set(items)
            except TypeError as exc:
                raise ConversionError(f"set items must be hashable: {exc}") from None
        return items
    _expect(value, isinstance(value, dict), "an object")
    if kind == "mapping":
        return {k: convert(v, args[1]) for k, v in value.items()} if args else dict(value)
    if kind == "typeddict":
        hints = resolved_hints(tp)
        return {k: convert(v, hints[k]) if k in hints else v for k, v in value.items()}
    if kind == "dataclass":
        hints = resolved_hints(tp)
        names = {f.name for f in dataclasses.fields(tp) if f.init}
        kwargs = {k: convert(v, hints.get(k, Any)) for k, v in value.items() if k in names}
        try:
            return tp(**kwargs)
        except TypeError as exc:
            raise ConversionError(f"cannot build {tp.__qualname__}: {exc}") from None
    if kind == "pydantic":
        try:
            return tp.model_validate(value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ConversionError(str(exc)) from None
    raise ConversionError(f"cannot convert to {tp!r}")


def _origin_is(tp: Any, cls: type) -> bool:
    from typing import get_origin

    return tp is cls or get_origin(tp) is cls


def _expect(value: Any, ok: bool, what: str) -> Any:
    if not ok:
        raise ConversionError(f"expected {what}, got {type(value).__name__}")
    return value
