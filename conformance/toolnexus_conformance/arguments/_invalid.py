"""Invalid arguments by mutating valid ones where the schema says what must not happen.

Each mutation targets a keyword written directly on the object or property it breaks
(a ``required`` entry, a ``type``, a bound, an ``enum``, ``additionalProperties: false``),
so the result is invalid by construction; jsonschema still confirms every value, and a
mutation that turns out valid is discarded.

A wrong type is tried with the values lax validators accept (``true`` and ``"1"`` for
an integer, ``"true"`` for a boolean, ``{}`` for an array: see ``_wrong``), each its
own mutation, and an enum with its near misses (another case, a trailing space), so
a tool that coerces instead of refusing is caught, not only one that crashes.
``lax_args`` gives one such value per top-level property as whole arguments, named
as the strategy names it, for the explorer to call before anything is drawn.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ._compile import Compiler
from ._dialect import is_plain_json, json_key
from ._scalars import bounds, is_multiple
from ._types import InvalidArgs
from ._wrong import SPELLED, WrongValue, enum_near_misses, wrong_values

__all__ = [
    "LAX_PROPERTIES",
    "MAX_MUTATIONS",
    "NOT_OBJECTS",
    "candidates",
    "entries",
    "invalid_strategy",
    "lax_args",
]

#: Values a tool must refuse whatever its schema says: arguments are always an object.
NOT_OBJECTS: tuple[object, ...] = ([], "arguments", None, 0, 1.5, True, [{}])
#: Mutations offered per schema, most telling first (hypothesis shrinks toward the first).
MAX_MUTATIONS = 48
#: Nesting depth of properties whose own keywords are mutated.
MAX_PATH = 2
#: Mutations in the first tier survive the ``MAX_MUTATIONS`` cut before any of the second:
#: every property keeps its most telling mutation however many properties there are.
FIRST, SECOND = 0, 1
#: Wrong values per typed property drawn as entries of their own (see ``property``).
OWN_ENTRIES = 2
#: Properties of one object whose keywords are mutated (the compiler's copy of a
#: schema holds them sorted by name).
MAX_PROPERTIES = 16
#: Top-level properties given a lax value by ``lax_args``: as many as the strategy
#: mutates. Each is one call more on the invalid stream, where the valid stream calls
#: a dozen edge values per property; a slow tool's explicit window (``_search``) cuts
#: them short anyway. Eight would leave out a property of a nine-property tool
#: (MCP's sequential-thinking) to save a call of a millisecond.
LAX_PROPERTIES = MAX_PROPERTIES
_NOT_IN_ENUM = "__toolnexus_not_in_enum__"
_UNKNOWN = ("zz", "zz_unknown", "zz_unknown_key", "_zz_")
_NOT_MATCHING = ("", "!", " ", "0", "~~~", "\u00e9")

Path = tuple[str, ...]
Change = Callable[[dict[str, Any]], None]


def _requiring(path: Path) -> dict[str, Any]:
    """A schema that makes every name on ``path`` present."""
    schema: dict[str, Any] = {}
    for name in reversed(path):
        schema = {"required": [name], **({"properties": {name: schema}} if schema else {})}
    return schema


def _dotted(path: Path) -> str:
    return ".".join(path)


class _Mutations:
    def __init__(self, c: Compiler) -> None:
        self.c = c
        self.out: list[tuple[int, SearchStrategy[InvalidArgs]]] = []
        self.root_ok = c.check(c.root, c.root_resolver)
        self._bases: dict[Path, SearchStrategy[Any]] = {}

    def base(self, path: Path) -> SearchStrategy[Any]:
        """Valid arguments in which every name on ``path`` is present."""
        if path not in self._bases:
            node = {"allOf": [self.c.root, {"type": "object"}, _requiring(path)]}
            made = self.c.build(node, self.c.root_resolver, 0)
            ok = self.root_ok
            self._bases[path] = made.filter(lambda v: isinstance(v, dict) and ok(v))
        return self._bases[path]

    def add(self, parent: Path, mutation: str, change: Change, tier: int = FIRST) -> None:
        self.add_choice(parent, [(mutation, change)], tier)

    def add_choice(
        self, parent: Path, choices: Sequence[tuple[str, Change]], tier: int = FIRST
    ) -> None:
        """One mutation drawn from ``choices`` (shrinking toward the first), as one entry."""
        base = self.base(parent)
        if base.is_empty or not choices:
            return

        def apply(drawn: tuple[dict[str, Any], int]) -> InvalidArgs:
            value, index = drawn
            mutation, change = choices[index]
            value = copy.deepcopy(value)
            target: Any = value
            for name in parent:
                target = target.get(name) if isinstance(target, dict) else None
            if isinstance(target, dict):
                change(target)
            return InvalidArgs(value, mutation)

        which = st.just(0) if len(choices) == 1 else st.integers(0, len(choices) - 1)
        self.out.append((tier, st.tuples(base, which).map(apply)))

    def setter(self, parent: Path, name: str, text: str, value: object, tier: int = FIRST) -> None:
        self.add(parent, text, _putter(name, value), tier)

    # -- what one object schema allows us to break -------------------------------------

    def object(self, node: Mapping[str, Any], path: Path) -> None:
        props: Mapping[str, Any] = node.get("properties") or {}
        for name in node.get("required") or []:
            self.add(path, f"dropped required '{_dotted((*path, name))}'", _deleter(name))
        patterns = [re.compile(p) for p in node.get("patternProperties") or {}]
        extra = node.get("additionalProperties", True)
        unknown = next(
            (n for n in _UNKNOWN if n not in props and not any(p.search(n) for p in patterns)),
            None,
        )
        if unknown is not None and extra is False:
            self.setter(
                path,
                unknown,
                f"unknown key '{_dotted((*path, unknown))}' where additionalProperties is false",
                "x",
            )
        elif unknown is not None and isinstance(extra, Mapping) and "type" in extra:
            for wrong in wrong_values(extra["type"])[:1]:
                text = f"unknown key '{_dotted((*path, unknown))}' breaks additionalProperties ({wrong.kind})"
                self.setter(path, unknown, text, wrong.value)
        for name, sub in list(props.items())[:MAX_PROPERTIES]:
            if not isinstance(sub, Mapping):
                continue
            merged, _, _ = self.c.flatten(sub, self.c.root_resolver, 0)
            if merged is not None:
                self.property(merged, path, name)

    def property(self, node: Mapping[str, Any], parent: Path, name: str) -> None:
        label = _dotted((*parent, name))
        here = (*parent, name)
        if "enum" in node:
            if json_key(_NOT_IN_ENUM) not in {json_key(v) for v in node["enum"]}:
                self.setter(parent, name, f"enum of '{label}' broken", _NOT_IN_ENUM)
            for text, value in _near_misses(node["enum"], label):
                self.setter(parent, name, text, value, SECOND)
            return
        if "type" in node:
            # The two values lax validators accept most often are entries of their own,
            # so they are drawn often; the first is in the first tier, so no property
            # loses it to the cap. The rest share one entry: the rarer coercions, and
            # plainly wrong types, which any validator refuses (one of them is enough).
            wrong = wrong_values(node["type"])
            lax = _own_entries(wrong)
            for index, one in enumerate(lax):
                text = _type_change(label, one)
                self.setter(parent, name, text, one.value, FIRST if index == 0 else SECOND)
            plain = [
                (_type_change(label, w), _putter(name, w.value)) for w in wrong if w not in lax
            ]
            self.add_choice(parent, plain, SECOND)
            self.items(node, parent, name, label)
        for keyword, value in _broken_bounds(node, self.c.dialect.draft4):
            self.setter(parent, name, f"broke {keyword} of '{label}'", value)
        fmt = node.get("format")
        checker = getattr(self.c.dialect.validator, "format_checker", None)
        if isinstance(fmt, str) and checker is not None and fmt in checker.checkers:
            bad = f"not a {fmt}"
            if not checker.conforms(bad, fmt):
                self.setter(parent, name, f"broke format of '{label}'", bad, SECOND)
        types = node.get("type")
        is_object = types == "object" or (types is None and "properties" in node)
        if is_object and len(here) < MAX_PATH:
            self.object(node, here)

    def items(self, node: Mapping[str, Any], parent: Path, name: str, label: str) -> None:
        """``["1"]`` for an array of integers: lax validators coerce each item too."""
        items = node.get("items")
        if node.get("type") != "array" or not isinstance(items, Mapping) or "prefixItems" in node:
            return
        merged, _, _ = self.c.flatten(items, self.c.root_resolver, 0)
        if merged is None or "type" not in merged or "enum" in merged or "const" in merged:
            return
        lax = [w for w in wrong_values(merged["type"]) if w.lax][:1]
        for one in lax:
            text = f"items of '{label}' changed to {one.label}"
            self.setter(parent, name, text, [one.value], SECOND)


def _own_entries(wrong: Sequence[WrongValue]) -> list[WrongValue]:
    """The wrong values drawn as entries of their own: those lax validators accept first."""
    return ([w for w in wrong if w.lax] or list(wrong))[:OWN_ENTRIES]


def _type_change(label: str, wrong: WrongValue) -> str:
    return f"type of '{label}' changed to {wrong.label}"


def _near_misses(allowed: Sequence[object], label: str) -> list[tuple[str, object]]:
    return [(f"enum of '{label}' near-missed: {text}", v) for text, v in enum_near_misses(allowed)]


def _lax_change(node: Mapping[str, Any], label: str) -> tuple[str, object] | None:
    """The one lax value ``lax_args`` sets a property to, as the strategy names it.

    The first one the strategy draws as an entry of its own that is not the declared
    value spelled as a string: accepting ``"true"`` for ``true`` is lenience, which
    TN604 forgives, so calling it first would find nothing that a coercing tool hides.
    """
    if "enum" in node:
        misses = _near_misses(node["enum"], label) if isinstance(node["enum"], list) else []
    elif "type" in node:
        misses = [
            (_type_change(label, w), w.value) for w in _own_entries(wrong_values(node["type"]))
        ]
    else:
        return None
    return next(((text, v) for text, v in misses if SPELLED not in text), None)


def lax_args(
    c: Compiler,
    base: Mapping[str, Any],
    refused: Callable[[object], bool],
    *,
    order: Sequence[str] = (),
    limit: int = LAX_PROPERTIES,
) -> list[InvalidArgs]:
    """``base`` with one top-level property at a time set to its lax value, for up to
    ``limit`` properties, each kept only if ``refused``; in ``order`` (the names as the
    schema lists them: the compiler holds them sorted), then the rest.

    Whether the strategy draws a given property's lax value depends on the draw; a
    tool that coerces it (``int(args["n"])`` takes ``true``) must be caught every run.
    """
    if not isinstance(c.root, Mapping):
        return []
    root, _, _ = c.flatten(c.root, c.root_resolver, 0)
    props = root.get("properties") if root is not None else None
    if not isinstance(props, Mapping):
        return []
    rank = {name: index for index, name in enumerate(order)}
    out: list[InvalidArgs] = []
    for name in sorted(props, key=lambda n: rank.get(n, len(rank))):
        if len(out) >= limit:
            break
        sub = props[name]
        if not isinstance(sub, Mapping):
            continue
        merged, _, _ = c.flatten(sub, c.root_resolver, 0)
        change = _lax_change(merged, name) if merged is not None else None
        if change is not None:
            value = {**base, name: copy.deepcopy(change[1])}
            if refused(value):
                out.append(InvalidArgs(value, change[0]))
    return out


def _putter(name: str, value: object) -> Change:
    def change(target: dict[str, Any]) -> None:
        target[name] = copy.deepcopy(value)

    return change


def _deleter(name: str) -> Change:
    def change(target: dict[str, Any]) -> None:
        target.pop(name, None)

    return change


def _broken_bounds(node: Mapping[str, Any], draft4: bool) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    low, low_ex, high, high_ex = bounds(node, draft4)
    integral = node.get("type") == "integer"
    if high is not None and math.isfinite(high):
        above = high if high_ex else (math.floor(high) + 1 if integral else high + 1)
        out.append(("exclusiveMaximum" if high_ex else "maximum", above))
    if low is not None and math.isfinite(low):
        below = low if low_ex else (math.ceil(low) - 1 if integral else low - 1)
        out.append(("exclusiveMinimum" if low_ex else "minimum", below))
    step = node.get("multipleOf")
    if isinstance(step, int | float) and not isinstance(step, bool):
        for candidate in (step + 1 if integral else step * 1.5, step * 2.5 + 1, step + 0.5):
            if not is_multiple(candidate, step):
                out.append(("multipleOf", candidate))
                break
    if isinstance(node.get("maxLength"), int):
        out.append(("maxLength", "x" * (node["maxLength"] + 1)))
    if node.get("minLength", 0) > 0:
        out.append(("minLength", "x" * (node["minLength"] - 1)))
    if isinstance(node.get("maxItems"), int):
        out.append(("maxItems", [None] * (node["maxItems"] + 1)))
    if node.get("minItems", 0) > 0:
        out.append(("minItems", []))
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        compiled = re.compile(pattern)
        miss = next((s for s in _NOT_MATCHING if not compiled.search(s)), None)
        if miss is not None:
            out.append(("pattern", miss))
    return out


def candidates(c: Compiler) -> SearchStrategy[InvalidArgs]:
    """Every mutation the schema allows, before jsonschema confirms it is refused."""
    return st.one_of(entries(c))


def entries(c: Compiler) -> list[SearchStrategy[InvalidArgs]]:
    """The mutations drawn from, one strategy each, the most telling first, capped."""
    found = _Mutations(c)
    if isinstance(c.root, Mapping):
        merged, _, _ = c.flatten(c.root, c.root_resolver, 0)
        if merged is not None:
            found.object(merged, ())
            if merged.get("minProperties", 0) > 0:
                few = st.just(InvalidArgs({}, "too few properties (minProperties)"))
                found.out.append((FIRST, few))
    # A stable sort: within a tier, the order the schema was walked in.
    kept = [made for _, made in sorted(found.out, key=lambda pair: pair[0])]
    kept = kept[: MAX_MUTATIONS - 1]
    kept.append(
        st.sampled_from(NOT_OBJECTS).map(lambda v: InvalidArgs(copy.deepcopy(v), "not an object"))
    )
    return kept


def invalid_strategy(c: Compiler) -> SearchStrategy[InvalidArgs]:
    ok = c.check(c.root, c.root_resolver)

    def refused(args: InvalidArgs) -> bool:
        value = args.value
        return is_plain_json(value) and (not isinstance(value, dict) or not ok(value))

    return candidates(c).filter(refused)
