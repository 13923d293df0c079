"""``allOf`` as one schema: merge what can be merged, keep the rest as checks.

Merging lets the generator produce values that satisfy every branch directly instead of
drawing from one branch and discarding what the others refuse (which starves hypothesis).
What cannot be merged exactly comes back as *residue*: schemas the value is filtered by.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ._dialect import Schema, json_key

__all__ = ["merge_all"]

_MAX = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_MIN = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_ANNOTATIONS = {
    "title",
    "description",
    "default",
    "examples",
    "$comment",
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$defs",
    "definitions",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
}
_OBJECT_SHAPE = ("properties", "patternProperties", "additionalProperties")
_ARRAY_SHAPE = ("items", "prefixItems", "additionalItems")
_UNITS = (("if", "then", "else"), ("contains", "minContains", "maxContains"))
_MAX_CROSS = 16


def merge_all(pieces: list[Schema]) -> tuple[dict[str, Any] | None, list[Schema]]:
    """One schema for all ``pieces`` (``None`` when they contradict) and the residue."""
    out: dict[str, Any] = {}
    residue: list[Schema] = []
    for piece in pieces:
        if piece is True:
            continue
        if piece is False:
            return None, []
        if not _merge_into(out, dict(piece), residue):
            return None, []
    return out, residue


def _merge_into(out: dict[str, Any], piece: dict[str, Any], residue: list[Schema]) -> bool:
    if "const" in piece:
        piece.setdefault("enum", [piece["const"]])
        if "enum" in piece and piece["enum"] != [piece["const"]]:
            piece["enum"] = _intersect([piece["const"]], piece["enum"])
        del piece["const"]
    for unit in _UNITS:
        if unit[0] in piece and unit[0] in out:
            residue.append({k: piece.pop(k) for k in unit if k in piece})
    if any(k in piece for k in _OBJECT_SHAPE) and any(k in out for k in _OBJECT_SHAPE):
        _merge_objects(out, piece, residue)
    if any(k in piece for k in _ARRAY_SHAPE) and any(k in out for k in _ARRAY_SHAPE):
        if _only_schema_items(out) and _only_schema_items(piece):
            out["items"] = _both(out["items"], piece.pop("items"))
        else:
            residue.append({k: piece.pop(k) for k in _ARRAY_SHAPE if k in piece})
    for key, value in piece.items():
        if key not in out:
            out[key] = value
            continue
        if key in _ANNOTATIONS:
            continue
        mine = out[key]
        if key == "type":
            types = _intersect_types(mine, value)
            if not types:
                return False
            out[key] = types
        elif key == "enum":
            values = _intersect(mine, value)
            if not values:
                return False
            out[key] = values
        elif key == "required":
            out[key] = list(dict.fromkeys([*mine, *value]))
        elif key in _MAX and not isinstance(value, bool) and not isinstance(mine, bool):
            out[key] = min(mine, value)
        elif key in _MIN and not isinstance(value, bool) and not isinstance(mine, bool):
            out[key] = max(mine, value)
        elif key == "uniqueItems":
            out[key] = bool(mine or value)
        elif key == "multipleOf" and (lcm := _common_multiple(mine, value)) is not None:
            out[key] = lcm
        elif key == "not":
            out[key] = {"anyOf": [mine, value]}
        elif key in ("propertyNames", "items"):
            out[key] = _both(mine, value)
        elif key in ("dependentSchemas", "dependentRequired"):
            merged = dict(mine)
            for name, sub in value.items():
                if name not in merged:
                    merged[name] = sub
                elif key == "dependentRequired":
                    merged[name] = list(dict.fromkeys([*merged[name], *sub]))
                else:
                    merged[name] = _both(merged[name], sub)
            out[key] = merged
        elif key == "anyOf" and len(mine) * len(value) <= _MAX_CROSS:
            out[key] = [_both(a, b) for a in mine for b in value]
        elif json_key(mine) != json_key(value):
            residue.append({key: value})
    return True


def _merge_objects(out: dict[str, Any], piece: dict[str, Any], residue: list[Schema]) -> None:
    """Give each named property every constraint both sides put on it."""
    mine_extra = "patternProperties" in out or "additionalProperties" in out
    their_extra = "patternProperties" in piece or "additionalProperties" in piece
    if mine_extra and their_extra:
        residue.append({k: piece.pop(k) for k in _OBJECT_SHAPE if k in piece})
        return
    mine_props = dict(out.get("properties", {}))
    their_props = dict(piece.pop("properties", {}))
    merged: dict[str, Any] = {}
    for name in dict.fromkeys([*mine_props, *their_props]):
        mine = mine_props[name] if name in mine_props else _extra_schema(out, name)
        theirs = their_props[name] if name in their_props else _extra_schema(piece, name)
        merged[name] = _both(mine, theirs)
    out["properties"] = merged
    for key in ("patternProperties", "additionalProperties"):
        if key in piece:
            out[key] = piece.pop(key)


def _extra_schema(node: Mapping[str, Any], name: str) -> Schema:
    """What ``node`` demands of a property it does not name."""
    matching = [s for p, s in node.get("patternProperties", {}).items() if re.search(p, name)]
    if not matching:
        return node.get("additionalProperties", True)
    return matching[0] if len(matching) == 1 else {"allOf": matching}


def _only_schema_items(node: Mapping[str, Any]) -> bool:
    return (
        "prefixItems" not in node
        and "additionalItems" not in node
        and isinstance(node.get("items"), Mapping | bool)
    )


def _both(a: Schema, b: Schema) -> Schema:
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    return {"allOf": [a, b]}


def _intersect(a: list[Any], b: list[Any]) -> list[Any]:
    keys = {json_key(v) for v in b}
    return [v for v in a if json_key(v) in keys]


def _intersect_types(a: str | list[str], b: str | list[str]) -> list[str]:
    left = [a] if isinstance(a, str) else list(a)
    right = [b] if isinstance(b, str) else list(b)

    def allows(types: list[str], name: str) -> bool:
        return name in types or (name == "integer" and "number" in types)

    return [t for t in dict.fromkeys([*left, *right]) if allows(left, t) and allows(right, t)]


def _common_multiple(a: float, b: float) -> float | None:
    if isinstance(a, int) and isinstance(b, int):
        return a * b // math.gcd(a, b)
    fa, fb = Fraction(str(a)), Fraction(str(b))
    if (fa / fb).denominator == 1:
        return a
    if (fb / fa).denominator == 1:
        return b
    return None
