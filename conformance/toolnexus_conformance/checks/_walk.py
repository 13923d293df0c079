"""Bounded, iterative walks over a declaration, shared by the static checks.

A hostile tool can declare a schema thousands of levels deep or millions of nodes
large. Every walk here uses an explicit stack and stops at ``MAX_DEPTH`` and
``MAX_NODES``, so no check can raise ``RecursionError`` or run for minutes. The
JSON-data scan of a schema is cached per schema object (the cache keeps the object
alive, so its ``id`` cannot be reused while cached): two dozen checks read the same
schema, and it is scanned once.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolnexus_conformance._model import Fail, Finding
from toolnexus_conformance._subject import MISSING, AttributeProblem, ToolSubject

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "JsonScan",
    "SchemaNode",
    "Unusable",
    "describe_value",
    "join_path",
    "scan_json",
    "schema_nodes",
    "text_attribute",
    "usable_schema",
]

#: Deeper than this, a declaration is pathological: no provider or model needs it.
MAX_DEPTH = 64
#: More JSON nodes than this, a declaration is pathological (a big real one has a few thousand).
MAX_NODES = 100_000
_MAX_OFFENDERS = 5

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_$@-]+")


def join_path(base: str, key: str | int) -> str:
    """``base.key``, ``base[3]``, or ``base["odd key"]`` when the key has odd characters."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{base}.{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{base}["{escaped[:60]}"]'


def describe_value(value: Any, limit: int = 60) -> str:
    """A short, safe description of any value for a message (never a 10 MB repr)."""
    if value is MISSING:
        return "nothing (the attribute is missing)"
    if isinstance(value, AttributeProblem):
        return str(value)
    try:
        text = repr(value)
    except Exception as exc:  # a hostile __repr__
        text = f"<{type(value).__name__}: repr raised {type(exc).__name__}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(value).__name__} {text}"


class Unusable(Fail):
    """The attribute a check needs cannot be judged; the check fails with ``finding``."""


def text_attribute(subject: ToolSubject, attribute: str, see: str) -> str:
    """The attribute as a ``str``, or ``Unusable`` saying why not (pointing at check ``see``)."""
    value = getattr(subject, attribute)
    if isinstance(value, str):
        return value
    if value is MISSING:
        why = f"the tool has no {attribute!r} attribute"
    elif isinstance(value, AttributeProblem):
        why = str(value)
    else:
        why = f"{attribute} is {describe_value(value)}, not a str"
    raise Unusable(Finding(f"cannot check: {why} (see {see})", path=attribute))


@dataclass(frozen=True, slots=True)
class JsonScan:
    """What a bounded scan of a value found: non-JSON offenders and whether it is too big."""

    offenders: tuple[Finding, ...]
    #: Set when the scan stopped at a bound; the value was not fully inspected.
    too_big: Finding | None
    nodes: int
    depth: int


def _offence(value: Any) -> str | None:
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"the float {value!r} is not valid JSON"
    return f"{type(value).__name__} is not JSON data"


def _short_path(path: str) -> str:
    return path if len(path) <= 160 else f"{path[:70]} ... {path[-70:]}"


def _scan(value: Any, root: str) -> JsonScan:
    offenders: list[Finding] = []
    too_big: Finding | None = None
    nodes = 0
    max_depth = 0
    # Each entry: the value, its parent's path and its key there (``_ROOT`` for the
    # root), its depth. A path is joined only when it is needed: for a container,
    # whose children need it, or for a finding; most values are leaves that pass.
    stack: list[tuple[Any, str, Any, int]] = [(value, root, _ROOT, 0)]
    while stack:
        item, parent, key, depth = stack.pop()
        nodes += 1
        if depth > max_depth:
            max_depth = depth
        if depth > MAX_DEPTH:
            path = parent if key is _ROOT else join_path(parent, key)
            too_big = Finding(
                f"{root} is nested more than {MAX_DEPTH} levels deep (at {_short_path(path)});"
                " no model needs that, and tools that walk it recursively crash",
                path=_short_path(path),
            )
            break
        if nodes > MAX_NODES:
            too_big = Finding(
                f"{root} has more than {MAX_NODES:,} JSON nodes; it is too large to send"
                " to a model or to inspect",
                path=root,
            )
            break
        if isinstance(item, dict):
            path = parent if key is _ROOT else join_path(parent, key)
            for name, child in reversed(list(item.items())):
                if not isinstance(name, str):
                    if len(offenders) < _MAX_OFFENDERS:
                        offenders.append(
                            Finding(
                                f"{path} has the key {describe_value(name)}; JSON object keys"
                                " are strings",
                                path=path,
                            )
                        )
                    continue
                stack.append((child, path, name, depth + 1))
        elif isinstance(item, list):
            path = parent if key is _ROOT else join_path(parent, key)
            for index in range(len(item) - 1, -1, -1):
                stack.append((item[index], path, index, depth + 1))
        else:
            problem = _offence(item)
            if problem is not None and len(offenders) < _MAX_OFFENDERS:
                path = parent if key is _ROOT else join_path(parent, key)
                offenders.append(Finding(f"{path}: {problem} ({describe_value(item)})", path=path))
    return JsonScan(tuple(offenders), too_big, nodes, max_depth)


#: The key of the scanned value itself: it has no parent.
_ROOT: Any = object()


_CACHE: OrderedDict[tuple[int, str], tuple[Any, JsonScan]] = OrderedDict()
_CACHE_SIZE = 256


def scan_json(value: Any, root: str) -> JsonScan:
    """Scan ``value`` once for non-JSON data and for size, bounded; cached per object."""
    key = (id(value), root)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is value:
        _CACHE.move_to_end(key)
        return hit[1]
    result = _scan(value, root)
    _CACHE[key] = (value, result)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return result


def usable_schema(subject: ToolSubject, attribute: str = "input_schema") -> dict[str, Any]:
    """The schema as plain, bounded JSON data, or ``Unusable`` saying why it cannot be checked.

    Checks other than TN301/TN302 build on this, so a schema with a set inside or
    5,000 levels deep fails each of them with a pointer to the check that explains it.
    """
    value = getattr(subject, attribute)
    if value is MISSING or isinstance(value, AttributeProblem):
        raise Unusable(
            Finding(
                f"cannot check: {describe_value(value)} (see TN301)",
                path=attribute,
            )
        )
    if not isinstance(value, dict):
        raise Unusable(
            Finding(
                f"cannot check: {attribute} is {describe_value(value)}, not a JSON object"
                " (see TN301)",
                path=attribute,
            )
        )
    scan = scan_json(value, attribute)
    if scan.too_big is not None:
        why = (
            f"more than {MAX_DEPTH} levels deep"
            if scan.depth > MAX_DEPTH
            else f"more than {MAX_NODES:,} nodes"
        )
        raise Unusable(
            Finding(f"cannot check: the schema is {why} (see TN302)", path=scan.too_big.path)
        )
    if scan.offenders:
        first = scan.offenders[0]
        raise Unusable(Finding(f"cannot check: {first.message} (see TN301)", path=first.path))
    return value


@dataclass(frozen=True, slots=True)
class SchemaNode:
    """One subschema position: its path, the subschema, and how many schemas enclose it."""

    path: str
    schema: dict[str, Any]
    #: Schema nesting depth (the root is 0), counting every applicator level.
    depth: int
    #: Object-nesting depth: how many ``properties``/``items`` levels enclose it.
    level: int
    #: The keyword that led here (``properties``, ``items``, ``anyOf``...), ``""`` at the root.
    via: str
    #: The property or definition name (or list index) under ``via``; ``None`` otherwise.
    key: str | int | None = None


#: Keywords whose value is a map of name -> subschema.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
#: Keywords whose value is one subschema.
_SCHEMA_ONE = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
)
#: Keywords whose value is a list of subschemas.
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
#: Keywords that nest data (for the object-nesting level OpenAI counts).
_DATA_NESTING = frozenset({"properties", "items", "prefixItems", "additionalProperties"})


_NODES: OrderedDict[tuple[int, str], tuple[Any, tuple[SchemaNode, ...]]] = OrderedDict()


def schema_nodes(root: dict[str, Any], base: str = "input_schema") -> tuple[SchemaNode, ...]:
    """Every subschema of ``root`` (a dict already bounded by ``usable_schema``), root first.

    Only schema positions are visited: a property *named* ``$ref`` or ``type`` is
    a name, not a keyword, and is never mistaken for one. Cached per schema object,
    like ``scan_json``: a dozen checks walk the same schema.
    """
    key = (id(root), base)
    hit = _NODES.get(key)
    if hit is not None and hit[0] is root:
        _NODES.move_to_end(key)
        return hit[1]
    nodes = tuple(_iter_schema_nodes(root, base))
    _NODES[key] = (root, nodes)
    if len(_NODES) > _CACHE_SIZE:
        _NODES.popitem(last=False)
    return nodes


def _iter_schema_nodes(root: dict[str, Any], base: str) -> Iterator[SchemaNode]:
    stack: list[SchemaNode] = [SchemaNode(base, root, 0, 0, "")]
    while stack:
        node = stack.pop()
        yield node
        children: list[SchemaNode] = []
        schema = node.schema
        for keyword in _SCHEMA_MAPS:
            members = schema.get(keyword)
            if isinstance(members, dict):
                step = node.level + (keyword in _DATA_NESTING)
                here = join_path(node.path, keyword)
                for name, child in members.items():
                    if isinstance(child, dict):
                        children.append(
                            SchemaNode(
                                join_path(here, name), child, node.depth + 1, step, keyword, name
                            )
                        )
        for keyword in _SCHEMA_ONE:
            child = schema.get(keyword)
            if isinstance(child, dict):
                step = node.level + (keyword in _DATA_NESTING)
                children.append(
                    SchemaNode(join_path(node.path, keyword), child, node.depth + 1, step, keyword)
                )
        for keyword in _SCHEMA_LISTS:
            members = schema.get(keyword)
            if isinstance(members, list):
                step = node.level + (keyword in _DATA_NESTING)
                here = join_path(node.path, keyword)
                for index, child in enumerate(members):
                    if isinstance(child, dict):
                        children.append(
                            SchemaNode(
                                join_path(here, index), child, node.depth + 1, step, keyword, index
                            )
                        )
        stack.extend(reversed(children))
