"""Objects and arrays: which keys and how many items, then a value for each.

Most arrays stay short, as hypothesis draws them; a second branch reaches the sizes
that break real code (tens of items) for arrays of scalars, and items repeat now and
then. Invented keys are any string the schema allows, edge keys (a dot, a space,
``__proto__``) among them. Past ``max_depth`` only what the schema requires is
generated so that recursive schemas end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from referencing._core import Resolver

from ._dialect import json_key
from ._edges import EDGE_KEYS
from ._scalars import CHARS

if TYPE_CHECKING:
    from ._compile import Compiler

__all__ = ["ITEM_SLACK", "arrays", "objects"]

#: Items an array may take past its minimum in the common, short branch.
ITEM_SLACK = 3
#: Items an array of scalars may take past its minimum in the long branch.
ITEM_LONG = 40
#: Items an array of containers may take past its minimum (each item is itself drawn).
NESTED_LONG = 6
#: Keys the generator may invent where the schema invites them.
EXTRA_KEYS = 4
_NAMES = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True, alphabet=CHARS),
    st.text(CHARS, max_size=12),
    st.sampled_from(EDGE_KEYS),
)


def _dependencies(node: Mapping[str, Any]) -> dict[str, list[str]]:
    """Names each present name drags in (``dependentRequired``, old ``dependencies``, and the
    ``required`` of a ``dependentSchemas`` entry: the common "if a then b" shape)."""
    out: dict[str, list[str]] = {}
    sources = [
        *(node.get("dependentRequired") or {}).items(),
        *(node.get("dependencies") or {}).items(),
        *(node.get("dependentSchemas") or {}).items(),
    ]
    for name, value in sources:
        names = value if isinstance(value, list) else None
        if isinstance(value, Mapping) and isinstance(value.get("required"), list):
            names = value["required"]
        if names:
            out.setdefault(name, []).extend(n for n in names if isinstance(n, str))
    return out


def objects(
    c: Compiler, node: Mapping[str, Any], resolver: Resolver[Any], depth: int
) -> SearchStrategy[dict[str, Any]]:
    props: Mapping[str, Any] = node.get("properties") or {}
    patterns: Mapping[str, Any] = node.get("patternProperties") or {}
    compiled = [(re.compile(p), s) for p, s in patterns.items()]
    extra = node.get("additionalProperties", True)
    required = list(dict.fromkeys(node.get("required") or []))
    deps = _dependencies(node)
    low = int(node.get("minProperties", 0))
    high = node.get("maxProperties")
    shallow = depth > c.max_depth
    by_patterns: dict[tuple[int, ...], SearchStrategy[Any]] = {}

    def for_name(name: str) -> SearchStrategy[Any]:
        matched = tuple(i for i, (p, _) in enumerate(compiled) if p.search(name))
        if name in props:
            pieces = [props[name], *(compiled[i][1] for i in matched)]
            return c.build(pieces[0] if len(pieces) == 1 else {"allOf": pieces}, resolver, depth)
        if matched not in by_patterns:
            pieces = [compiled[i][1] for i in matched] or [extra]
            sub = pieces[0] if len(pieces) == 1 else {"allOf": pieces}
            by_patterns[matched] = c.build(sub, resolver, depth)
        return by_patterns[matched]

    dragged = [n for names in deps.values() for n in names]
    values = {name: for_name(name) for name in dict.fromkeys([*required, *props, *dragged])}
    if any(values[name].is_empty for name in required):
        return st.nothing()
    if high is not None and len(required) > high:
        return st.nothing()
    optional = [n for n in props if n not in required and not values[n].is_empty]

    extras_possible = bool(patterns) or extra is not False
    # Invent keys only where the schema talks about unnamed keys; a tool that names its
    # parameters gains nothing from strangers (minProperties may still call for them).
    invent = not shallow and (
        bool(patterns)
        or (isinstance(extra, Mapping) and extra != {})
        or (not props and extra is not False)
    )
    names = _extra_names(c, node, resolver, depth, compiled, extra)
    names = names.filter(lambda s: s not in props)

    @st.composite
    def draw(draw: st.DrawFn) -> dict[str, Any]:
        keys = list(required)
        if not shallow:
            keys += [n for n in optional if draw(st.booleans())]
        for n in optional:
            if len(keys) >= low:
                break
            if n not in keys:
                keys.append(n)
        _close(keys, deps)
        if any(values[k].is_empty for k in keys):
            reject()  # a dependency on a name the object cannot carry
        need = max(0, low - len(keys))
        most = need + (EXTRA_KEYS if invent else 0)
        if high is not None:
            most = min(most, int(high) - len(keys))
        if need > most or (need and not extras_possible):
            reject()
        value: dict[str, Any] = {}
        for key in keys:
            value[key] = draw(values[key])
        for _ in range(draw(st.integers(need, most)) if most > 0 else 0):
            name = draw(names)
            if name not in value:  # no filter per draw: building one costs more than a miss
                value[name] = draw(for_name(name))
        return value

    return draw()


def _close(keys: list[str], deps: Mapping[str, list[str]]) -> None:
    i = 0
    while i < len(keys):
        keys.extend(d for d in deps.get(keys[i], ()) if d not in keys)
        i += 1


def _extra_names(
    c: Compiler,
    node: Mapping[str, Any],
    resolver: Resolver[Any],
    depth: int,
    compiled: list[tuple[re.Pattern[str], Any]],
    extra: Any,
) -> SearchStrategy[str]:
    options = [st.from_regex(p, fullmatch=True, alphabet=CHARS) for p, _ in compiled]
    if extra is not False:
        options.append(_NAMES)
    names: SearchStrategy[str] = st.one_of(options) if options else st.nothing()
    if "propertyNames" in node:
        allowed = c.check(node["propertyNames"], resolver)
        from_schema = c.build(node["propertyNames"], resolver, depth).filter(
            lambda s: isinstance(s, str)
        )
        names = (
            (names | from_schema).filter(allowed) if extra is not False else names.filter(allowed)
        )
    if extra is False and compiled:
        names = names.filter(lambda s: any(p.search(s) for p, _ in compiled))
    return names


def _scalar(node: Any) -> bool:
    """Whether a schema's values are plain scalars (cheap to draw many of)."""
    if not isinstance(node, Mapping):
        return False
    if "enum" in node or "const" in node:
        return True
    kind = node.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    return bool(kinds) and not {"array", "object"} & set(kinds)


def arrays(
    c: Compiler, node: Mapping[str, Any], resolver: Resolver[Any], depth: int
) -> SearchStrategy[list[Any]]:
    if c.dialect.prefix_items:
        prefix, rest = list(node.get("prefixItems") or []), node.get("items", True)
    elif isinstance(node.get("items"), list):
        prefix, rest = list(node["items"]), node.get("additionalItems", True)
    else:
        prefix, rest = [], node.get("items", True)
    low = int(node.get("minItems", 0))
    high = node.get("maxItems")
    top = low + ITEM_SLACK if high is None else min(int(high), low + ITEM_SLACK)
    longest = low + (ITEM_LONG if _scalar(rest) and not prefix else NESTED_LONG)
    longest = longest if high is None else min(int(high), longest)
    if depth > c.max_depth:
        top = longest = low
    heads = [c.build(s, resolver, depth) for s in prefix]
    tail = c.build(rest, resolver, depth)
    for i, head in enumerate(heads):
        if head.is_empty:
            top, longest = min(top, i), min(longest, i)
            break
    if tail.is_empty:
        top = min(top, len(heads))
        longest = min(longest, len(heads))
    longest = max(top, longest)
    if top < low:
        return st.nothing()
    unique = node.get("uniqueItems") is True
    wanted = 0
    hits: SearchStrategy[Any] = st.nothing()
    if "contains" in node and node.get("minContains", 1) > 0:
        wanted = int(node.get("minContains", 1))
        hits = c.build({"allOf": [node["contains"], rest]}, resolver, depth)

    sizes = st.integers(low, top)
    if longest > top and not unique:  # unique items from a small domain would stall
        sizes = st.one_of(sizes, sizes, st.integers(top + 1, longest))

    @st.composite
    def draw(draw: st.DrawFn) -> list[Any]:
        size = draw(sizes)
        if wanted and not hits.is_empty:
            size = max(size, len(heads) + wanted)
        out: list[Any] = []
        seen: set[object] = set()
        for i in range(size):
            if i < len(heads):
                source = heads[i]
            elif wanted and i >= size - wanted and not hits.is_empty:
                source = hits
            else:
                source = tail
            if unique:
                item = draw(source.filter(lambda v: json_key(v) not in seen))
                seen.add(json_key(item))
            elif len(out) > len(heads) and source is tail and draw(st.integers(0, 3)) == 0:
                # A repeat of an earlier tail item: duplicates break real code.
                item = out[draw(st.integers(len(heads), len(out) - 1))]
            else:
                item = draw(source)
            out.append(item)
        return out

    return draw()
