"""One place that decides what kind of type an annotation is.

The schema builder and the argument converter both dispatch on this, so a type
that gets a schema is always a type whose values can be converted back.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import functools
import pathlib
import types
import typing
import uuid
from typing import Any, Literal, NotRequired, Required

__all__ = [
    "FORMATS",
    "SIMPLE",
    "Kind",
    "is_pydantic_model",
    "kind_of",
    "resolved_hints",
]

#: Python scalar types and their JSON-Schema ``type``.
SIMPLE: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
#: Types sent as strings with a ``format`` (``None``: a plain string).
FORMATS: dict[Any, str | None] = {
    dt.datetime: "date-time",
    dt.date: "date",
    dt.time: "time",
    uuid.UUID: "uuid",
    pathlib.Path: None,
    pathlib.PurePath: None,
}

_SEQUENCES = {list, cabc.Sequence, cabc.MutableSequence, cabc.Collection, cabc.Iterable}
_SETS = {set, frozenset, cabc.Set, cabc.MutableSet}
_MAPPINGS = {dict, cabc.Mapping, cabc.MutableMapping}

Kind = Literal[
    "any",
    "annotated",
    "null",
    "simple",
    "format",
    "literal",
    "enum",
    "newtype",
    "union",
    "wrapper",
    "array",
    "tuple",
    "set",
    "mapping",
    "typeddict",
    "dataclass",
    "pydantic",
    "unsupported",
]


def is_pydantic_model(tp: object) -> bool:
    """A pydantic v2 model class, recognised without importing pydantic."""
    return (
        isinstance(tp, type)
        and callable(getattr(tp, "model_json_schema", None))
        and callable(getattr(tp, "model_validate", None))
    )


def kind_of(tp: Any) -> tuple[Kind, tuple[Any, ...]]:
    """``(kind, type arguments)`` for an annotation; ``"unsupported"`` when we cannot serve it."""
    if tp is Any or tp is object:
        return "any", ()
    if tp is None or tp is type(None):
        return "null", ()
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return "annotated", (tp.__origin__, *tp.__metadata__)
    if origin in (Required, NotRequired):
        return "wrapper", args
    if origin is Literal:
        return "literal", args
    if origin is typing.Union or origin is types.UnionType:
        return "union", args
    try:
        hash(tp)
    except TypeError:
        return "unsupported", ()
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "enum", ()
    if tp in SIMPLE:
        return "simple", ()
    if tp in FORMATS:
        return "format", ()
    if isinstance(tp, typing.NewType):
        return "newtype", (tp.__supertype__,)
    if origin is tuple or tp is tuple:
        return "tuple", args
    if origin in _SEQUENCES or tp in _SEQUENCES:
        return "array", args
    if origin in _SETS or tp in _SETS:
        return "set", args
    if origin in _MAPPINGS or tp in _MAPPINGS:
        return "mapping", args
    if typing.is_typeddict(tp):
        return "typeddict", ()
    if is_pydantic_model(tp):
        return "pydantic", ()
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "dataclass", ()
    return "unsupported", ()


@functools.lru_cache(maxsize=512)
def resolved_hints(cls: type) -> dict[str, Any]:
    """A class's type hints with ``Annotated`` kept; forward references resolved once.

    Raises ``TypeError`` naming the class when a forward reference cannot be resolved.
    """
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"cannot resolve the type hints of {cls.__qualname__}: {exc}; define the types "
            "it names at module level so they can be looked up"
        ) from exc
