"""Refuse, before any drawing, a schema the generator cannot serve, naming the keyword.

Only what generation can reach is read: ``$defs`` nobody references may hold anything.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from referencing._core import Resolver
from referencing.exceptions import Unresolvable

from ._dialect import Dialect, Schema
from ._types import UnsupportedSchema

__all__ = ["check_supported", "pointer", "subschemas"]

#: Keywords whose value is one sub-schema.
SINGLE = (
    "additionalProperties",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
)
#: Keywords whose value maps names to sub-schemas.
MAPS = ("properties", "patternProperties", "dependentSchemas", "dependencies")
#: Keywords whose value lists sub-schemas.
LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")

_NEVER = {
    "$dynamicRef": "dynamic references are not supported",
    "$recursiveRef": "recursive (2019-09) references are not supported",
}
_ONLY_TRIVIAL = ("unevaluatedProperties", "unevaluatedItems")


def pointer(parts: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def subschemas(node: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], Schema]]:
    """Every sub-schema directly inside ``node``, with its relative path."""
    for key in SINGLE:
        if key in node:
            yield (key,), node[key]
    items = node.get("items")
    if isinstance(items, list):
        for i, sub in enumerate(items):
            yield ("items", i), sub
    elif items is not None:
        yield ("items",), items
    for key in MAPS:
        value = node.get(key)
        if isinstance(value, Mapping):
            for name, sub in value.items():
                if isinstance(sub, Mapping | bool):
                    yield (key, name), sub
    for key in LISTS:
        value = node.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                yield (key, i), sub


def check_supported(root: Schema, dialect: Dialect) -> None:
    """Raise :class:`UnsupportedSchema` for an invalid schema or one we cannot generate for."""
    _check_valid_schema(root, dialect)
    seen: set[int] = set()
    stack: list[tuple[Schema, Resolver[Any], tuple[str | int, ...]]] = [
        (root, dialect.root_resolver(root), ())
    ]
    while stack:
        node, resolver, path = stack.pop()
        if not isinstance(node, Mapping) or id(node) in seen:
            continue
        seen.add(id(node))
        resolver = dialect.enter(node, resolver)
        where = pointer(path)
        for keyword, reason in _NEVER.items():
            if keyword in node:
                raise UnsupportedSchema(keyword, where, reason)
        for keyword in _ONLY_TRIVIAL:
            if node.get(keyword, True) not in (True, {}):
                raise UnsupportedSchema(keyword, where, "only `true` is supported")
        for keyword in ("pattern",):
            if isinstance(node.get(keyword), str):
                _compile(node[keyword], keyword, where)
        for pattern in node.get("patternProperties", {}) or {}:
            _compile(pattern, "patternProperties", where)
        if isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            try:
                resolved = resolver.lookup(ref)
            except Unresolvable as error:
                raise UnsupportedSchema(
                    "$ref", where, f"cannot resolve {ref!r} inside the schema ({error})"
                ) from None
            stack.append((resolved.contents, resolved.resolver, (*path, "$ref")))
        for rel, sub in subschemas(node):
            stack.append((sub, resolver, path + rel))


def _compile(pattern: str, keyword: str, where: str) -> None:
    try:
        re.compile(pattern)
    except re.error as error:
        raise UnsupportedSchema(
            keyword, where, f"{pattern!r} is not a Python regex: {error}"
        ) from None


def _check_valid_schema(root: Schema, dialect: Dialect) -> None:
    from jsonschema.exceptions import best_match

    cls = type(dialect.validator)
    meta = cls(cls.META_SCHEMA, format_checker=cls.FORMAT_CHECKER)
    error = best_match(meta.iter_errors(root))
    if error is None:
        return
    parts = tuple(error.absolute_path)
    names = [i for i, part in enumerate(parts) if isinstance(part, str)]
    if names:
        keyword, parts = str(parts[names[-1]]), parts[: names[-1]]
    else:
        keyword = str(error.validator)
    raise UnsupportedSchema(keyword, pointer(parts), f"invalid schema: {error.message}")
