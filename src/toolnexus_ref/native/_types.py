"""Type hints to JSON-Schema (Draft 2020-12), one annotation at a time.

Choices, stated once:

- Unions are ``anyOf``, always, ``Optional[T]`` included (``anyOf: [T, {"type": "null"}]``).
  A ``type`` list would be shorter for simple members, but Gemini answers a ``type``
  array with a 400 while every provider accepts ``anyOf`` below the root, so one
  portable shape wins over a shorter one.
- Nested ``TypedDict``/dataclass types are inlined as objects with
  ``additionalProperties: false`` (what was declared is what is accepted, and what
  OpenAI's strict mode asks for). A class that refers to itself, directly or through
  others, goes once into the root ``$defs`` and is referred to by ``$ref``; inlining
  it would never end.
- Pydantic models keep pydantic's own schema (its config is the authority on
  ``extra``), with its ``$defs`` inlined or hoisted so the result stands alone.
"""

from __future__ import annotations

import dataclasses
import enum
import typing
from collections.abc import Callable
from typing import Annotated, Any, NotRequired, Required

from toolnexus_ref._naming import sanitize
from toolnexus_ref._output import to_jsonable

from ._kinds import FORMATS, SIMPLE, kind_of, resolved_hints
from ._param import Param

__all__ = ["SchemaBuilder", "jsonable_default"]

_NO_DEFAULT = object()


def jsonable_default(value: Any) -> Any:
    """The JSON form of a default value, or ``_NO_DEFAULT`` when it has none."""
    try:
        return to_jsonable(value)
    except (TypeError, ValueError, RecursionError):
        return _NO_DEFAULT


def has_default(value: Any) -> bool:
    return value is not _NO_DEFAULT


class SchemaBuilder:
    """Builds schemas for the annotations of one function, sharing one ``$defs``."""

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        #: True once a ``Param`` added keywords we did not write ourselves.
        self.has_extras = False
        self._names: dict[object, str] = {}
        self._stack: list[object] = []
        self._recursive: set[object] = set()

    # -- the public entry -----------------------------------------------------------
    def schema(self, tp: Any) -> dict[str, Any]:
        """A fresh schema dict for ``tp``; raises ``TypeError`` for an unsupported type."""
        kind, args = kind_of(tp)
        if kind == "any":
            return {}
        if kind == "null":
            return {"type": "null"}
        if kind == "simple":
            return {"type": SIMPLE[tp]}
        if kind == "format":
            fmt = FORMATS[tp]
            return {"type": "string"} if fmt is None else {"type": "string", "format": fmt}
        if kind == "annotated":
            return self._annotated(args[0], args[1:])
        if kind in ("wrapper", "newtype"):
            return self.schema(args[0])
        if kind == "literal":
            return _enum_schema(list(args), f"Literal{list(args)!r}")
        if kind == "enum":
            return _enum_schema([m.value for m in tp], tp.__qualname__)
        if kind == "union":
            return {"anyOf": _unique([self.schema(member) for member in args])}
        if kind == "array":
            return {"type": "array", **({"items": self.schema(args[0])} if args else {})}
        if kind == "set":
            items = {"items": self.schema(args[0])} if args else {}
            return {"type": "array", **items, "uniqueItems": True}
        if kind == "tuple":
            return self._tuple(args)
        if kind == "mapping":
            return self._mapping(args)
        if kind == "typeddict":
            return self._named(tp, lambda: self._typeddict(tp))
        if kind == "dataclass":
            return self._named(tp, lambda: self._dataclass(tp))
        if kind == "pydantic":
            from ._pydantic import pydantic_schema

            return pydantic_schema(tp, self)
        raise TypeError(f"unsupported type {_type_name(tp)}")

    def def_name(self, key: object, wanted: str) -> str:
        """A unique, pointer-safe ``$defs`` name for ``key`` (a class, or a pydantic def)."""
        if key in self._names:
            return self._names[key]
        base = sanitize(wanted) or "Def"
        name, n = base, 1
        while name in self._names.values():
            n += 1
            name = f"{base}_{n}"
        self._names[key] = name
        return name

    # -- pieces ---------------------------------------------------------------------
    def _annotated(self, base: Any, metadata: tuple[Any, ...]) -> dict[str, Any]:
        schema = self.schema(base)
        for item in metadata:
            if isinstance(item, str):
                schema["description"] = item
            elif isinstance(item, Param):
                extras = item.schema()
                self.has_extras = self.has_extras or bool(item.extras)
                schema.update(extras)
        return schema

    def _tuple(self, args: tuple[Any, ...]) -> dict[str, Any]:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.schema(args[0])}
        if args == ((),):  # tuple[()]: the empty tuple
            return {"type": "array", "maxItems": 0}
        return {
            "type": "array",
            "prefixItems": [self.schema(a) for a in args],
            "items": False,
            "minItems": len(args),
            "maxItems": len(args),
        }

    def _mapping(self, args: tuple[Any, ...]) -> dict[str, Any]:
        if not args:
            return {"type": "object"}
        key_kind, _ = kind_of(args[0])
        if args[0] is not str and key_kind != "any":
            raise TypeError(
                f"unsupported mapping key type {_type_name(args[0])}: JSON object keys are "
                "strings, so use dict[str, ...]"
            )
        values = self.schema(args[1])
        return (
            {"type": "object"}
            if values == {}
            else {"type": "object", "additionalProperties": values}
        )

    def _named(self, cls: type, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """Inline ``cls``, unless it is (or turns out to be) recursive: then ``$defs``/``$ref``."""
        if cls in self._recursive:
            return {"$ref": self.ref(cls, cls.__name__)}
        if cls in self._stack:
            self._recursive.add(cls)
            return {"$ref": self.ref(cls, cls.__name__)}
        self._stack.append(cls)
        try:
            schema = build()
        finally:
            self._stack.pop()
        if cls in self._recursive:
            self.defs[self.def_name(cls, cls.__name__)] = schema
            return {"$ref": self.ref(cls, cls.__name__)}
        return schema

    def ref(self, key: object, wanted: str) -> str:
        return f"#/$defs/{self.def_name(key, wanted)}"

    def _typeddict(self, cls: type) -> dict[str, Any]:
        hints = resolved_hints(cls)
        required_keys = getattr(cls, "__required_keys__", frozenset(hints))
        props = {name: self._field(cls, name, tp) for name, tp in hints.items()}
        required = [name for name, tp in hints.items() if _is_required(tp, name in required_keys)]
        return _object(props, required, _own_doc(cls))

    def _dataclass(self, cls: type) -> dict[str, Any]:
        hints = resolved_hints(cls)
        props: dict[str, Any] = {}
        required: list[str] = []
        for field in dataclasses.fields(cls):
            if not field.init:
                continue
            prop = self._field(cls, field.name, hints.get(field.name, Any))
            if field.default is not dataclasses.MISSING:
                default = jsonable_default(field.default)
                if has_default(default):
                    prop["default"] = default
            elif field.default_factory is dataclasses.MISSING:
                required.append(field.name)
            props[field.name] = prop
        return _object(props, required, _own_doc(cls))

    def _field(self, cls: type, name: str, tp: Any) -> dict[str, Any]:
        try:
            return self.schema(tp)
        except TypeError as exc:
            raise TypeError(f"{exc} (in field {cls.__qualname__}.{name})") from None


def _is_required(tp: Any, declared: bool) -> bool:
    """``Required``/``NotRequired`` read from the resolved hint.

    Python 3.11 computes ``__required_keys__`` before string annotations are
    resolved, so under ``from __future__ import annotations`` it misses
    ``NotRequired``; the resolved hint is the truth, totality the fallback.
    """
    while True:
        origin = typing.get_origin(tp)
        if origin is NotRequired:
            return False
        if origin is Required:
            return True
        if origin is not Annotated:
            return declared
        tp = typing.get_args(tp)[0]


def _object(props: dict[str, Any], required: list[str], doc: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if doc:
        out["description"] = doc
    out.update(properties=props, required=required, additionalProperties=False)
    return out


def _own_doc(cls: type) -> str | None:
    """The class's own docstring summary, not the one ``dataclass`` writes by itself."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return None
    from ._docstring import parse_docstring

    return parse_docstring(doc)[0] or None


_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (type(None), "null"),
)


def _enum_schema(values: list[Any], what: str) -> dict[str, Any]:
    plain = [v.value if isinstance(v, enum.Enum) else v for v in values]
    if not plain:
        raise TypeError(f"{what} has no values to choose from")
    types: list[str] = []
    for value in plain:
        found = next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), None)
        if found is None:
            raise TypeError(
                f"{what} has the value {value!r} of type {type(value).__name__}; enum values "
                "must be str, int, float, bool or None"
            )
        if found not in types:
            types.append(found)
    if types == ["integer", "number"] or types == ["number", "integer"]:
        types = ["number"]
    return {"type": types[0], "enum": plain} if len(types) == 1 else {"enum": plain}


def _unique(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for schema in schemas:
        if schema not in out:
            out.append(schema)
    return out


def _type_name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)
