"""The public entry points, with strategies cached per schema (the same tool is checked often)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from hypothesis.strategies import SearchStrategy

from ._compile import Compiler
from ._dialect import Schema, dialect_of, is_plain_json
from ._edges import edge_args
from ._invalid import invalid_strategy, lax_args
from ._scan import check_supported
from ._types import InvalidArgs, UnsupportedSchema

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "args_for",
    "edge_args_for",
    "invalid_args_for",
    "lax_args_for",
    "valid_args_checker",
    "values_for",
]

#: ``$ref`` hops followed freely before generation falls back to minimal values.
DEFAULT_MAX_DEPTH = 3
_CACHED = 256
#: JSON nesting (dicts and lists) beyond which a schema is refused rather than recursed into.
MAX_NESTING = 100
#: Characters of JSON one argument object may take: long strings and long arrays stay
#: within what any tool (and a stdio pipe) takes in a few milliseconds.
MAX_ARGS_CHARS = 300_000


def _small(value: object) -> bool:
    try:
        return len(json.dumps(value, ensure_ascii=False)) <= MAX_ARGS_CHARS
    except (TypeError, ValueError, RecursionError):
        return False


def _too_deep(value: object) -> bool:
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if level > MAX_NESTING:
            return True
        if isinstance(item, dict):
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, level + 1) for v in item)
    return False


def _canonical(schema: Schema) -> str:
    if _too_deep(schema):
        raise UnsupportedSchema("(schema)", "", f"nested deeper than {MAX_NESTING} levels of JSON")
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise UnsupportedSchema("(schema)", "", f"the schema is not plain JSON: {error}") from None


@lru_cache(maxsize=_CACHED)
def _compiler(text: str, max_depth: int) -> Compiler:
    root = json.loads(text)  # our own copy: a caller mutating their dict cannot reach it
    if not isinstance(root, dict | bool):
        raise UnsupportedSchema("(schema)", "", f"a schema is an object or a boolean, not {root!r}")
    dialect = dialect_of(root)
    check_supported(root, dialect)
    return Compiler(root, dialect, max_depth)


def unguarded(schema: Schema, max_depth: int, objects_only: bool) -> SearchStrategy[Any]:
    """The generator without its final jsonschema guard (our tests check it is not needed)."""
    return _unguarded(_canonical(schema), max_depth, objects_only)


@lru_cache(maxsize=_CACHED)
def _unguarded(text: str, max_depth: int, objects_only: bool) -> SearchStrategy[Any]:
    c = _compiler(text, max_depth)
    node = {"allOf": [c.root, {"type": "object"}]} if objects_only else c.root
    made = c.build(node, c.root_resolver, 0)
    if made.is_empty:
        what = "JSON object" if objects_only else "value"
        raise UnsupportedSchema("(schema)", "", f"no {what} satisfies this schema")
    return made


@lru_cache(maxsize=_CACHED)
def _values(text: str, max_depth: int, objects_only: bool) -> SearchStrategy[Any]:
    made = _unguarded(text, max_depth, objects_only)
    c = _compiler(text, max_depth)
    ok = c.check(c.root, c.root_resolver)

    def valid(value: object) -> bool:
        if objects_only and not isinstance(value, dict):
            return False
        return ok(value) and is_plain_json(value) and _small(value)

    # The guard: a generator bug must never reach a tool as "valid" arguments.
    return made.filter(valid)


def args_for(
    schema: Schema, *, max_depth: int = DEFAULT_MAX_DEPTH
) -> SearchStrategy[dict[str, Any]]:
    """Valid arguments (JSON objects) for a tool's input schema, Draft 2020-12 by default.

    Every value is checked with jsonschema (the schema's dialect, formats included) before
    it is drawn. ``max_depth`` bounds how many ``$ref`` hops are followed freely; past it,
    only required parts are generated. Raises :class:`UnsupportedSchema` now, not while
    drawing, for a schema the generator cannot serve.
    """
    return _values(_canonical(schema), max_depth, True)


def values_for(schema: Schema, *, max_depth: int = DEFAULT_MAX_DEPTH) -> SearchStrategy[Any]:
    """Like :func:`args_for`, for any JSON value the schema accepts (not only objects)."""
    return _values(_canonical(schema), max_depth, False)


def valid_args_checker(schema: Schema) -> Callable[[object], bool]:
    """The test the valid stream's values pass: a JSON object the schema accepts (its
    dialect, formats included), plain JSON, within ``MAX_ARGS_CHARS``."""
    text = _canonical(schema)
    c = _compiler(text, DEFAULT_MAX_DEPTH)
    ok = c.check(c.root, c.root_resolver)
    return lambda value: (
        isinstance(value, dict) and ok(value) and is_plain_json(value) and _small(value)
    )


def edge_args_for(schema: Schema, base: object) -> list[dict[str, Any]]:
    """Whole valid argument objects built from edge values, to call before generated ones:
    the schema's own examples and default, then ``base`` with one property at a time set
    to each edge value of its schema (see ``_edges``)."""
    return edge_args(schema, base, valid_args_checker(schema))


def lax_args_for(schema: Schema, base: object) -> list[InvalidArgs]:
    """Invalid arguments to call before generated ones: ``base`` (the simplest arguments)
    with one top-level property at a time set to the wrong value lax validators coerce
    (``true`` for an integer), each named as :func:`invalid_args_for` names it, and
    each one the schema refuses (see ``_invalid.lax_args``)."""
    if not isinstance(base, dict):
        return []
    valid = valid_args_checker(schema)

    def refused(value: object) -> bool:
        try:
            return not valid(value)
        except Exception:  # a validator that trips is no evidence the value is refused
            return False

    props = schema.get("properties") if isinstance(schema, dict) else None
    order = [name for name in props if isinstance(name, str)] if isinstance(props, dict) else []
    c = _compiler(_canonical(schema), DEFAULT_MAX_DEPTH)
    return lax_args(c, base, refused, order=order)


@lru_cache(maxsize=_CACHED)
def _invalid(text: str) -> SearchStrategy[InvalidArgs]:
    return invalid_strategy(_compiler(text, DEFAULT_MAX_DEPTH))


def invalid_args_for(schema: Schema) -> SearchStrategy[InvalidArgs]:
    """Arguments the tool must refuse, each with the mutation that broke it.

    Always includes non-objects ("not an object"), so even a schema that accepts every
    object yields something a tool must refuse.
    """
    return _invalid(_canonical(schema))
