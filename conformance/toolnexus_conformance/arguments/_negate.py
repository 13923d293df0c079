"""What a schema excludes, as schemas a generator can aim at instead of filtering blindly.

``if: {properties: {country: {const: "US"}}}`` is true of most objects (any object without
``country``), so drawing the ``else`` branch and discarding values that match ``if`` would
starve hypothesis; aiming at "``country`` present and not US" does not.
"""

from __future__ import annotations

from collections.abc import Mapping

from ._dialect import Schema

__all__ = ["negate"]

_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_IGNORED = {"title", "description", "$comment", "default", "examples"}


def negate(node: Schema) -> list[Schema] | None:
    """Schemas each implying ``not node``; ``None`` when a plain filter does as well."""
    if node is True or node == {}:
        return [False]
    if node is False:
        return [True]
    if not isinstance(node, Mapping):
        return None
    keys = set(node) - _IGNORED
    if keys == {"type"}:
        declared = node["type"]
        allowed = {declared} if isinstance(declared, str) else set(declared)
        if "number" in allowed:
            allowed.add("integer")
        others = [t for t in _TYPES if t not in allowed]
        # "number" left in ``others`` for a "not integer" also yields integers: the
        # caller's filter drops those.
        return [{"type": others}] if others else [False]
    if keys and keys <= {"type", "properties", "required"} and node.get("type") in (None, "object"):
        alternatives: list[Schema] = [
            {"required": [name], "properties": {name: {"not": sub}}}
            for name, sub in (node.get("properties") or {}).items()
        ]
        alternatives += [{"properties": {name: False}} for name in node.get("required", [])]
        return alternatives or [False]
    return None
