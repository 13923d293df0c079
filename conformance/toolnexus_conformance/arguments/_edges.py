"""Edge values: the inputs that break real code, mixed into every generated stream.

Random text and numbers rarely hit the values tools mishandle: an empty or
whitespace-only string, a NUL, an emoji past the BMP, a right-to-left mark, a path
that climbs out of its folder, a string of thousands of characters, ``2**31``,
``-0.0``, Feb 29. These lists are offered to hypothesis beside the general
strategies (``st.sampled_from``, so a failure still shrinks), and ``edge_args``
builds whole argument objects from them for the explorer to call first, so each
edge is tried at least once whatever the draw. Every list is filtered by the
node's own bounds; the generator's jsonschema guard drops anything else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "EDGE_KEYS",
    "LONG",
    "date_edges",
    "edge_args",
    "integer_edges",
    "number_edges",
    "described_values",
    "schema_values",
    "string_edges",
]

#: The longest edge string: long enough to overflow any fixed buffer or column.
LONG = 100_000
_STRINGS: tuple[str, ...] = (  # the likeliest to break code first: a slow tool gets few
    "",
    " ",
    "\x00",
    "😀",
    "\u202eabc",  # right-to-left override
    "../../etc/passwd",
    "a" * 21,
    "x" * 301,
    "/etc/passwd",
    "\u200fשלום",  # right-to-left mark, Hebrew
    "\t\n ",
    "A" * 4096,
    "e\u0301\u0301",  # combining marks
    "👍🏽 ok",
    "a\x00b",
    "مرحبا",
    "\ufeffbom",
    "C:\\Windows\\System32",
    "~/.ssh/id_rsa",
    "$(id)",
    "`id`; rm -rf /tmp/x",
    "' OR '1'='1",
    "<script>alert(1)</script>",
    "{{7*7}}",
    "%s%n",
    "null",
    "NaN",
    "-1",
    "0",
)
#: Edge strings too costly to offer in every draw: ``edge_args`` calls them once.
_ONCE: tuple[str, ...] = ("A" * LONG,)
#: Keys invented for objects that take unnamed properties.
EDGE_KEYS: tuple[str, ...] = (
    "a.b",
    "a b",
    "",
    " ",
    "__proto__",
    "constructor",
    "$ref",
    "😀",
    "ключ",
    "x" * 64,
)
_DATES: tuple[str, ...] = (
    "2024-02-29",
    "2000-02-29",
    "2023-02-28",
    "2023-01-31",
    "2023-04-30",
    "2023-12-31",
    "1970-01-01",
    "1900-03-01",
    "0001-01-01",
    "9999-12-31",
)
_CHECKED_FORMATS = frozenset(
    {"email", "idn-email", "hostname", "idn-hostname", "uri", "iri", "uri-reference",
     "iri-reference", "uri-template", "json-pointer", "relative-json-pointer", "duration",
     "time", "uuid", "ipv4", "ipv6", "regex"}
)  # fmt: skip
_INTS: tuple[int, ...] = (
    0,
    -1,
    1,
    2,
    255,
    256,
    65536,
    2**31 - 1,
    2**31,
    -(2**31),
    -(2**31) - 1,
    2**32,
    2**53,
    2**53 + 1,
    2**63 - 1,
    2**63,
    -(2**63),
    2**64,
)
_FLOATS: tuple[float, ...] = (0.0, -0.0, 0.5, -1.5, 1e-9, 0.1 + 0.2, 1e15, 1e308, -1e308)


def string_edges(node: Mapping[str, Any], *, once: bool = False) -> list[str]:
    """Edge strings ``node``'s length bounds and pattern allow (its format is left to the
    guard, except ``date``, whose edges are dates)."""
    low = int(node.get("minLength", 0))
    high = node.get("maxLength")
    fmt = node.get("format")
    pool = list(_DATES) if fmt == "date" else [*_STRINGS, *(_ONCE if once else ())]
    if fmt == "date-time":
        pool = [f"{d}T23:59:59Z" for d in _DATES] + ["2024-02-29T00:00:00+05:30"]
    elif isinstance(fmt, str) and fmt != "date" and fmt in _CHECKED_FORMATS:
        return []  # the format's own generator knows its shapes; generic edges would fail it
    if fmt not in ("date", "date-time"):
        if high is not None:
            top = min(int(high), 4096)
            pool += ["a" * top, "😀" * top, " " * top]
        few = min(low, LONG)
        pool += ["a" * few, "a" * (few + 1), " " * max(few, 1)]
    pattern = node.get("pattern")
    search: Callable[[str], Any] = re.compile(pattern).search if isinstance(pattern, str) else bool
    out = []
    for text in dict.fromkeys(pool):
        if len(text) < low or (high is not None and len(text) > high):
            continue
        if isinstance(pattern, str) and search(text) is None:
            continue
        out.append(text)
    return out


def date_edges() -> list[str]:
    return list(_DATES)


def _neighbours(values: list[float | None]) -> list[float]:
    out: list[float] = []
    for value in values:
        if value is None:
            continue
        out += [value, value - 1, value + 1]
    return out


def integer_edges(node: Mapping[str, Any], low: int | None, high: int | None) -> list[int]:
    """Edge integers inside ``[low, high]`` (``None`` is open), the bounds and their
    neighbours first; ``multipleOf`` is left to the caller's filter."""
    pool = [int(v) for v in _neighbours([low, high])] + list(_INTS)
    return [
        v for v in dict.fromkeys(pool) if (low is None or v >= low) and (high is None or v <= high)
    ]


def number_edges(inside: Callable[[float], bool], low: Any, high: Any) -> list[float]:
    pool: list[float] = [*(v for v in _neighbours([low, high])), *_INTS, *_FLOATS]
    if low is not None:
        pool.append(math.nextafter(float(low), math.inf))
    if high is not None:
        pool.append(math.nextafter(float(high), -math.inf))
    out: list[float] = []
    seen: set[tuple[type, float]] = set()
    for value in pool:
        key = (type(value), value if value != 0 else math.copysign(1.0, value))
        if key in seen or (isinstance(value, float) and not math.isfinite(value)):
            continue
        seen.add(key)
        if inside(value):
            out.append(value)
    return out


def schema_values(node: Mapping[str, Any]) -> list[Any]:
    """The values a schema names itself: ``const``, ``enum``, ``default``, ``examples``,
    and for a string those its description quotes (``described_values``)."""
    out: list[Any] = []
    if "const" in node:
        out.append(node["const"])
    if isinstance(node.get("enum"), list):
        out += node["enum"]
    if "default" in node:
        out.append(node["default"])
    if isinstance(node.get("examples"), list):
        out += node["examples"]
    out += described_values(node)
    return out


#: A value quoted in a description: 'x', "x" or `x`, not an apostrophe inside a word.
_QUOTED = re.compile(r"""(?<!\w)(?:'([^'\n]{1,80})'|"([^"\n]{1,80})"|`([^`\n]{1,80})`)(?!\w)""")
#: The most quoted values taken from one description.
DESCRIBED = 5


def described_values(node: Mapping[str, Any]) -> list[str]:
    """The strings a string property's description quotes, as "IANA timezone name (e.g.,
    'America/New_York')" does: what a model reading it sends, so likelier than any draw
    to reach the tool's success path. Candidates: the caller validates them."""
    text = node.get("description")
    if not isinstance(text, str) or "string" not in _types(node):
        return []
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        value = next(group for group in match.groups() if group is not None)
        if value.strip() and value not in found:
            found.append(value)
    return found[:DESCRIBED]


def _types(node: Mapping[str, Any]) -> list[str]:
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def property_edges(node: Any, *, depth: int = 0) -> list[Any]:
    """Edge values for one (sub)schema, read from its own keywords only (no ``$ref``):
    candidates for the caller to validate, not promises."""
    if not isinstance(node, Mapping) or depth > 2:
        return []
    out = schema_values(node)
    if "enum" in node or "const" in node:
        return out
    from ._scalars import _int_bounds

    for kind in _types(node):
        if kind == "string":
            out += string_edges(node, once=depth == 0)
        elif kind == "integer":
            lo, hi = _int_bounds(node, False)
            out += integer_edges(node, lo, hi)
        elif kind == "number":
            out += _number_edges(node)
        elif kind == "boolean":
            out += [True, False]
        elif kind == "null":
            out.append(None)
        elif kind == "array":
            out += _array_edges(node, depth)
    return out


def _number_edges(node: Mapping[str, Any]) -> list[float]:
    from ._scalars import bounds

    low, low_ex, high, high_ex = bounds(node, False)

    def inside(x: float) -> bool:
        above = low is None or (x > low if low_ex else x >= low)
        return above and (high is None or (x < high if high_ex else x <= high))

    return number_edges(inside, low, high)


def _array_edges(node: Mapping[str, Any], depth: int) -> list[list[Any]]:
    items = node.get("items")
    pool = [
        v for v in property_edges(items, depth=depth + 1) if not isinstance(v, str) or len(v) < 400
    ]
    if not pool:
        return []
    unique = node.get("uniqueItems") is True
    out: list[list[Any]] = [[]]
    if not unique:
        out += [[pool[0], pool[0]], [pool[-1]] * 3]
    for size in (4, 11, 30):
        out.append([pool[i % len(pool)] for i in range(size)])
    return out


def edge_args(
    schema: Any, base: Any, valid: Callable[[Any], bool], *, limit: int = 400
) -> list[dict[str, Any]]:
    """Whole argument objects to call before any generated one, each valid under ``valid``.

    The schema's own examples and default come first, then ``base`` (the simplest
    arguments) with one property at a time set to each of its edge values, then
    ``base`` with an invented key where the schema takes unnamed ones.
    """
    if not isinstance(schema, Mapping):
        return []
    out: dict[str, dict[str, Any]] = {}

    def offer(args: Any) -> None:
        import json

        if len(out) >= limit or not isinstance(args, dict):
            return
        try:
            key = json.dumps(args, sort_keys=True)
        except (TypeError, ValueError):
            return
        if key not in out and valid(args):
            out[key] = args

    for whole in schema_values(schema):
        offer(whole)
    if not isinstance(base, dict):
        return list(out.values())
    props = schema.get("properties")
    if isinstance(props, Mapping):
        # Every property at once set to the first value its schema names: the call a
        # model makes from the examples it was shown (one alone leaves the others at
        # the simplest value, which a tool needing all of them refuses).
        first = {
            name: values[0]
            for name, sub in props.items()
            if isinstance(sub, Mapping) and (values := schema_values(sub))
        }
        if len(first) > 1:
            offer({**base, **first})
        named = {name: property_edges(sub) for name, sub in props.items()}
        # Round-robin over the properties: a slow tool's budget spends itself evenly.
        for index in range(max((len(v) for v in named.values()), default=0)):
            for name, values in named.items():
                if index < len(values):
                    offer({**base, name: values[index]})
    extra = schema.get("additionalProperties", True)
    if extra is not False and not schema.get("patternProperties"):
        # One plain unknown key (the name a model invents), then each odd key once, the
        # values taking turns: what breaks a tool is the key (a dot, an empty name,
        # ``__proto__``) or the value's type, seldom the two together, so the cross
        # product (forty calls for one property) would spend a slow tool's window.
        values = (property_edges(extra)[:3] if isinstance(extra, Mapping) else ["x", 0]) or ["x"]
        for index, key in enumerate(("extra", *EDGE_KEYS)):
            if key not in base:
                offer({**base, key: values[index % len(values)]})
    return list(out.values())
