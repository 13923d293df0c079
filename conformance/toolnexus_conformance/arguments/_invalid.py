"""Invalid arguments by mutating valid ones where the schema says what must not happen.

Each mutation targets a keyword written directly on the object or property it breaks
(a ``required`` entry, a ``type``, a bound, an ``enum``, ``additionalProperties: false``),
so the result is invalid by construction; jsonschema still confirms every value, and a
mutation that turns out valid is discarded.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ._compile import Compiler
from ._dialect import is_plain_json, json_key
from ._scalars import bounds, is_multiple
from ._types import InvalidArgs

__all__ = ["NOT_OBJECTS", "candidates", "invalid_strategy"]

#: Values a tool must refuse whatever its schema says: arguments are always an object.
NOT_OBJECTS: tuple[object, ...] = ([], "arguments", None, 0, 1.5, True, [{}])
#: Mutations offered per schema, most telling first (hypothesis shrinks toward the first).
MAX_MUTATIONS = 48
#: Nesting depth of properties whose own keywords are mutated.
MAX_PATH = 2
_WRONG: tuple[tuple[str, object], ...] = (
    ("string", "not-a-value"),
    ("integer", 7),
    ("number", 0.5),
    ("boolean", True),
    ("null", None),
    ("array", []),
    ("object", {}),
)
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
        self.out: list[SearchStrategy[InvalidArgs]] = []
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

    def add(self, parent: Path, mutation: str, change: Callable[[dict[str, Any]], None]) -> None:
        base = self.base(parent)
        if base.is_empty:
            return

        def apply(value: dict[str, Any]) -> InvalidArgs:
            value = copy.deepcopy(value)
            target: Any = value
            for name in parent:
                target = target.get(name) if isinstance(target, dict) else None
            if isinstance(target, dict):
                change(target)
            return InvalidArgs(value, mutation)

        self.out.append(base.map(apply))

    def setter(self, parent: Path, name: str, text: str, value: object) -> None:
        def change(target: dict[str, Any]) -> None:
            target[name] = copy.deepcopy(value)

        self.add(parent, text, change)

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
            for kind, value in _wrong_types(extra["type"])[:1]:
                text = f"unknown key '{_dotted((*path, unknown))}' breaks additionalProperties ({kind})"
                self.setter(path, unknown, text, value)
        for name, sub in list(props.items())[:16]:
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
                self.setter(here[:-1], name, f"enum of '{label}' broken", _NOT_IN_ENUM)
            return
        if "type" in node:
            for kind, value in _wrong_types(node["type"])[:2]:
                self.setter(parent, name, f"type of '{label}' changed to {kind}", value)
        for keyword, value in _broken_bounds(node, self.c.dialect.draft4):
            self.setter(parent, name, f"broke {keyword} of '{label}'", value)
        fmt = node.get("format")
        checker = getattr(self.c.dialect.validator, "format_checker", None)
        if isinstance(fmt, str) and checker is not None and fmt in checker.checkers:
            bad = f"not a {fmt}"
            if not checker.conforms(bad, fmt):
                self.setter(parent, name, f"broke format of '{label}'", bad)
        types = node.get("type")
        is_object = types == "object" or (types is None and "properties" in node)
        if is_object and len(here) < MAX_PATH:
            self.object(node, here)


def _deleter(name: str) -> Change:
    def change(target: dict[str, Any]) -> None:
        target.pop(name, None)

    return change


def _wrong_types(declared: Any) -> list[tuple[str, object]]:
    allowed = {declared} if isinstance(declared, str) else set(declared)
    if "number" in allowed:
        allowed.add("integer")
    return [(kind, value) for kind, value in _WRONG if kind not in allowed]


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
    found = _Mutations(c)
    if isinstance(c.root, Mapping):
        merged, _, _ = c.flatten(c.root, c.root_resolver, 0)
        if merged is not None:
            found.object(merged, ())
            if merged.get("minProperties", 0) > 0:
                found.out.append(st.just(InvalidArgs({}, "too few properties (minProperties)")))
    found.out = found.out[: MAX_MUTATIONS - 1]
    found.out.append(
        st.sampled_from(NOT_OBJECTS).map(lambda v: InvalidArgs(copy.deepcopy(v), "not an object"))
    )
    return st.one_of(found.out)


def invalid_strategy(c: Compiler) -> SearchStrategy[InvalidArgs]:
    ok = c.check(c.root, c.root_resolver)

    def refused(args: InvalidArgs) -> bool:
        value = args.value
        return is_plain_json(value) and (not isinstance(value, dict) or not ok(value))

    return candidates(c).filter(refused)
