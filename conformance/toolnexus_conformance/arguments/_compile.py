"""Turn one schema into a hypothesis strategy for values it accepts.

Composition is rewritten rather than filtered wherever that stays exact: ``allOf`` is
merged, ``anyOf``/``oneOf`` are distributed over their siblings, ``if``/``then``/``else``
becomes two branches, and ``not`` of simple shapes becomes what it excludes. Filters remain
only as guards, so ordinary schemas never trip hypothesis' health checks.

Recursion is bounded by counting ``$ref`` hops: past ``max_depth`` only what is required
is generated and branches without references are preferred; a schema that demands
deeper nesting than ``max_depth + HARD_EXTRA`` is treated as unsatisfiable.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from referencing._core import Resolver

from . import _containers
from ._dialect import Dialect, Schema, base_uri
from ._merge import merge_all
from ._negate import negate
from ._scalars import any_json, integers, numbers, strings

__all__ = ["HARD_EXTRA", "Compiler", "Scoped"]

#: ``$ref`` hops allowed past ``max_depth`` before a branch is given up as endless.
HARD_EXTRA = 6
#: A schema with the resolver its references resolve against.
Scoped = tuple[Schema, Resolver[Any]]

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "$schema", "$id", "id",
     "$anchor", "$dynamicAnchor", "$defs", "definitions", "readOnly", "writeOnly",
     "deprecated", "contentMediaType", "contentEncoding", "contentSchema"}
)  # fmt: skip
_ALL_TYPES = ("null", "boolean", "number", "string", "array", "object")
_HINTS = {
    "object": ("properties", "required", "additionalProperties", "patternProperties",
               "minProperties", "maxProperties", "dependentRequired", "propertyNames",
               "dependencies", "dependentSchemas"),
    "array": ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains",
              "additionalItems"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
}  # fmt: skip
_FILTERED = ("not", "dependentSchemas", "dependencies", "contains", "propertyNames")


class Compiler:
    """Builds (and memoises) strategies for the sub-schemas of one root schema."""

    def __init__(self, root: Schema, dialect: Dialect, max_depth: int) -> None:
        self.root = root
        self.dialect = dialect
        self.max_depth = max_depth
        self.hard_depth = max_depth + HARD_EXTRA
        self.root_resolver = dialect.root_resolver(root)
        self._memo: dict[tuple[int, int, str], SearchStrategy[Any]] = {}
        self._checks: dict[tuple[int, str], Callable[[object], bool]] = {}
        self._keep: list[object] = []  # derived dicts stay alive: memo keys are their ids

    # -- helpers shared with the container builders -------------------------------------

    def check(self, node: Schema, resolver: Resolver[Any]) -> Callable[[object], bool]:
        key = (id(node), base_uri(resolver))
        if key not in self._checks:
            self._keep.append(node)
            self._checks[key] = self.dialect.checker(node, resolver)
        return self._checks[key]

    def resolve(self, ref: str, resolver: Resolver[Any]) -> Scoped:
        resolved = resolver.lookup(ref)
        return resolved.contents, resolved.resolver

    # -- building ----------------------------------------------------------------------

    def root_strategy(self) -> SearchStrategy[Any]:
        return self.build(self.root, self.root_resolver, 0)

    def build(self, node: Schema, resolver: Resolver[Any], depth: int) -> SearchStrategy[Any]:
        if node is True:
            return any_json()
        if not isinstance(node, Mapping) or depth > self.hard_depth:
            return st.nothing()
        resolver = self.dialect.enter(node, resolver)
        key = (id(node), depth, base_uri(resolver))
        if key not in self._memo:
            self._keep.append(node)
            made = self._build(node, resolver, depth)
            self._memo[key] = self._with_named(node, resolver, made)
        return self._memo[key]

    def _with_named(
        self, node: Mapping[str, Any], resolver: Resolver[Any], made: SearchStrategy[Any]
    ) -> SearchStrategy[Any]:
        """The schema's own ``default`` and ``examples`` join its stream (where they fit)."""
        named = [node["default"]] if "default" in node else []
        if isinstance(node.get("examples"), list):
            named += node["examples"]
        if not named or made.is_empty:
            return made
        ok = self.check(node, resolver)
        fitting = [v for v in named if ok(v)]
        if not fitting:
            return made
        return st.one_of(made, st.sampled_from(fitting).map(copy.deepcopy))

    def _build(self, node: Mapping[str, Any], resolver: Resolver[Any], depth: int) -> Any:
        if "$ref" in node and (self.dialect.legacy_ref or set(node) - _ANNOTATIONS == {"$ref"}):
            target, inner = self.resolve(node["$ref"], resolver)
            return self.build(target, inner, depth + 1)
        merged, residue, depth = self.flatten(node, resolver, depth)
        if merged is None:
            return st.nothing()
        made = self._from_merged(merged, resolver, depth)
        if residue and not made.is_empty:
            checks = [self.check(s, r) for s, r in residue]
            made = made.filter(lambda v: all(check(v) for check in checks))
        return made

    def flatten(
        self, node: Mapping[str, Any], resolver: Resolver[Any], depth: int
    ) -> tuple[dict[str, Any] | None, list[Scoped], int]:
        """``node`` with its ``$ref``s and ``allOf`` merged in; what would not merge is residue."""
        here = base_uri(resolver)
        pieces: list[Schema] = []
        residue: list[Scoped] = []
        queue: list[tuple[Schema, int]] = [(node, 0)]
        inlined: set[int] = set()  # A and A is A: a target merged once is merged
        deepest = 0
        while queue:
            piece, hops = queue.pop(0)
            if piece is False:
                return None, [], depth
            if not isinstance(piece, Mapping):
                continue
            if piece is not node and base_uri(self.dialect.enter(piece, resolver)) != here:
                residue.append((piece, resolver))
                continue
            piece = dict(piece)
            if "$ref" in piece:
                ref = piece.pop("$ref")
                if self.dialect.legacy_ref:
                    piece = {}
                target, inner = self.resolve(ref, resolver)
                if depth + hops + 1 > self.hard_depth:
                    return None, [], depth
                if base_uri(self.dialect.enter(target, inner)) != here:
                    residue.append(({"$ref": ref}, resolver))
                elif id(target) not in inlined:
                    inlined.add(id(target))
                    queue.append((target, hops + 1))
                    deepest = max(deepest, hops + 1)
            queue.extend((sub, hops) for sub in piece.pop("allOf", []))
            pieces.append(piece)
        merged, rest = merge_all(pieces)
        return merged, residue + [(s, resolver) for s in rest], depth + deepest

    def _branches(
        self, branches: list[Schema], rest: dict[str, Any], resolver: Resolver[Any], depth: int
    ) -> SearchStrategy[Any]:
        if depth > self.max_depth:
            plain = [b for b in branches if not _has_ref(b)]
            branches = plain or branches
        made = [self.build({"allOf": [rest, b]}, resolver, depth) for b in branches]
        usable = [s for s in made if not s.is_empty]
        return st.one_of(usable) if usable else st.nothing()

    def _from_merged(
        self, merged: dict[str, Any], resolver: Resolver[Any], depth: int
    ) -> SearchStrategy[Any]:
        if set(merged) <= _ANNOTATIONS:
            return any_json()
        if "enum" in merged:
            ok = self.check(merged, resolver)
            values = [v for v in merged["enum"] if ok(v)]
            return st.sampled_from(values).map(copy.deepcopy) if values else st.nothing()
        for keyword in ("anyOf", "oneOf"):
            if keyword in merged:
                rest = {k: v for k, v in merged.items() if k != keyword}
                made = self._branches(merged[keyword], rest, resolver, depth)
                return made.filter(self.check(merged, resolver)) if keyword == "oneOf" else made
        if "if" in merged:
            return self._conditional(merged, resolver, depth)
        if "not" in merged and (alternatives := negate(merged["not"])) is not None:
            rest = {k: v for k, v in merged.items() if k != "not"}
            return self._branches(alternatives, rest, resolver, depth).filter(
                self.check(merged, resolver)
            )
        made = self._typed(merged, resolver, depth)
        if any(k in merged for k in _FILTERED) and not made.is_empty:
            made = made.filter(self.check(merged, resolver))
        return made

    def _conditional(
        self, merged: dict[str, Any], resolver: Resolver[Any], depth: int
    ) -> SearchStrategy[Any]:
        rest = {k: v for k, v in merged.items() if k not in ("if", "then", "else")}
        cond = merged["if"]
        yes = [cond, merged.get("then", True)]
        options = [self.build({"allOf": [rest, *yes]}, resolver, depth)]
        if cond is not True and cond != {}:
            no = negate(cond) or [{"not": cond}]
            rest_no = {"allOf": [rest, merged.get("else", True)]}
            options.append(self._branches(no, rest_no, resolver, depth))
        usable = [s for s in options if not s.is_empty]
        if not usable:
            return st.nothing()
        return st.one_of(usable).filter(self.check(merged, resolver))

    def _typed(
        self, merged: dict[str, Any], resolver: Resolver[Any], depth: int
    ) -> SearchStrategy[Any]:
        types = _types_of(merged)
        shallow = depth > self.max_depth
        scalars = [t for t in types if t not in ("array", "object")]
        if shallow and scalars:
            types = scalars
        draft4 = self.dialect.draft4
        parts: list[SearchStrategy[Any]] = []
        for name in types:
            if name == "null":
                parts.append(st.none())
            elif name == "boolean":
                parts.append(st.booleans())
            elif name == "integer":
                parts.append(integers(merged, draft4))
            elif name == "number":
                parts.append(numbers(merged, draft4))
            elif name == "string":
                parts.append(strings(merged))
            elif name == "array":
                parts.append(_containers.arrays(self, merged, resolver, depth))
            elif name == "object":
                parts.append(_containers.objects(self, merged, resolver, depth))
        usable = [s for s in parts if not s.is_empty]
        return st.one_of(usable) if usable else st.nothing()


def _types_of(merged: Mapping[str, Any]) -> list[str]:
    declared = merged.get("type")
    if declared is not None:
        types = [declared] if isinstance(declared, str) else list(declared)
    else:
        hinted = {t for t, keys in _HINTS.items() if any(k in merged for k in keys)}
        types = [t for t in _ALL_TYPES if t in hinted] or list(_ALL_TYPES)
    if "integer" in types and "number" in types:
        types.remove("integer")
    return list(dict.fromkeys(types))


def _has_ref(node: Schema) -> bool:
    if isinstance(node, Mapping):
        return "$ref" in node or any(_has_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_ref(v) for v in node)
    return False
