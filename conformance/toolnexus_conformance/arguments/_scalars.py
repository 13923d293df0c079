"""Strings, numbers and "anything" as JSON Schema means them, with edge values mixed in.

Sizes follow hypothesis's own distribution (mostly short, shrinking to the minimum),
and a second branch reaches the lengths that break real code (hundreds to thousands
of characters) by repeating a short drawn unit, which costs hypothesis a few choices
rather than one per character. The edge lists of ``_edges`` join every stream.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from functools import cache
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ._edges import integer_edges, number_edges, string_edges

__all__ = ["any_json", "integers", "is_multiple", "numbers", "strings"]

#: Code points JSON text can carry both ways: all but the surrogates (category Cs).
#: The same set as ``codec="utf-8"``, which draws the same strings, but hypothesis builds
#: a codec's table by encoding every code point: 1.3 s of CPU and 200 MiB at its peak
#: on a machine whose cache does not hold it yet (every CI job's), against the
#: category table's 0.1 s. Every text strategy of the generator takes it, ``from_regex``
#: too: without an alphabet, a regex draws from ``codec="utf-8"``.
CHARS = st.characters(exclude_categories=["Cs"])
#: Extra length a plain drawn string may take past its minimum (hypothesis keeps most short).
STRING_SLACK = 64
#: The longest string the repeating branch builds when the schema sets no maximum.
STRING_LONG = 5000
_FLOAT_LIMIT = 1e300
_ZONES = [
    dt.UTC,
    dt.timezone(dt.timedelta(hours=5, minutes=30)),
    dt.timezone(-dt.timedelta(hours=8)),
]
_HOST = r"[a-z][a-z0-9]{0,5}(-[a-z0-9]{1,5})?(\.[a-z][a-z0-9]{0,5}(-[a-z0-9]{1,5})?){0,2}\.(com|org|net|io)"
_URI = (
    rf"(https|http|ftp)://{_HOST}(/[a-zA-Z0-9_.~-]{{1,8}}){{0,3}}(\?[a-z]{{1,5}}=[a-z0-9]{{1,5}})?"
)
_FORMAT_REGEXES = {
    "email": r"[a-z0-9]{1,10}(\.[a-z0-9]{1,6})?@" + _HOST,
    "idn-email": r"[a-z0-9]{1,10}(\.[a-z0-9]{1,6})?@" + _HOST,
    "hostname": _HOST,
    "idn-hostname": _HOST,
    "uri": _URI,
    "iri": _URI,
    "uri-reference": rf"{_URI}|(/[a-z0-9]{{1,8}}){{1,3}}",
    "iri-reference": rf"{_URI}|(/[a-z0-9]{{1,8}}){{1,3}}",
    "uri-template": r"https://[a-z]{1,8}\.com/\{[a-z]{1,6}\}",
    "json-pointer": r"(/[a-z0-9]{0,6}){0,3}",
    "relative-json-pointer": r"[0-9](/[a-z0-9]{1,5}){0,2}",
    "duration": r"P([1-9]Y)?([1-9]M)?[1-9]D(T[1-9]H)?",
}


@cache
def _format(name: str) -> SearchStrategy[str] | None:
    if name in _FORMAT_REGEXES:
        return st.from_regex(_FORMAT_REGEXES[name], fullmatch=True, alphabet=CHARS)
    if name == "date":
        return (st.dates() | st.sampled_from(date_edges_as_dates())).map(dt.date.isoformat)
    if name == "date-time":
        return st.datetimes(timezones=st.sampled_from(_ZONES)).map(dt.datetime.isoformat)
    if name == "time":
        return st.times().map(lambda t: t.isoformat() + "Z")
    if name == "uuid":
        return st.uuids().map(str)
    if name in ("ipv4", "ipv6"):
        return st.ip_addresses(v=4 if name == "ipv4" else 6).map(str)
    if name == "regex":
        return st.sampled_from(["^[a-z]+$", r"\d{3}", "a|b", ".*", "[A-Z]{2,4}"])
    return None  # unknown formats are annotations (the spec allows ignoring them)


@cache
def date_edges_as_dates() -> list[dt.date]:
    from ._edges import date_edges

    return [dt.date.fromisoformat(d) for d in date_edges()]


def _repeated(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _with_edges(general: SearchStrategy[Any], edges: list[Any]) -> SearchStrategy[Any]:
    """``general`` first (shrinking prefers it), edges in a third of the draws."""
    if not edges:
        return general
    return st.one_of(general, general, st.sampled_from(edges))


def strings(node: Mapping[str, Any]) -> SearchStrategy[str]:
    return _with_edges(_strings(node), string_edges(node))


def _strings(node: Mapping[str, Any]) -> SearchStrategy[str]:
    low = int(node.get("minLength", 0))
    high = node.get("maxLength")
    pattern = node.get("pattern")
    fmt = node.get("format")
    made = _format(fmt) if isinstance(fmt, str) else None
    if made is None and isinstance(pattern, str):
        # JSON Schema patterns *search*: a full match is a valid subset, and a match with
        # anything around it is valid too (and tells more about a tool).
        made = st.from_regex(pattern, fullmatch=True, alphabet=CHARS) | st.from_regex(
            pattern, alphabet=CHARS
        )
        pattern = None
    if made is None:
        top = low + STRING_SLACK if high is None else min(int(high), low + STRING_SLACK)
        if top < low:
            return st.nothing()
        short = st.text(CHARS, min_size=low, max_size=top)
        longest = low + STRING_LONG if high is None else int(high)
        if longest <= top:
            return short
        sizes = st.integers(max(low, top + 1), longest)
        long = st.builds(_repeated, st.text(CHARS, min_size=1, max_size=4), sizes)
        return st.one_of(short, short, long)
    checks: list[Callable[[str], bool]] = []
    if low or high is not None:
        checks.append(lambda s: low <= len(s) <= (len(s) if high is None else high))
    if isinstance(pattern, str):
        compiled = re.compile(pattern)
        checks.append(lambda s: compiled.search(s) is not None)
    if checks:
        return made.filter(lambda s: all(check(s) for check in checks))
    return made


def bounds(node: Mapping[str, Any], draft4: bool) -> tuple[float | None, bool, float | None, bool]:
    """``(low, low_exclusive, high, high_exclusive)`` under the node's dialect."""
    low, high = node.get("minimum"), node.get("maximum")
    low_ex = high_ex = False
    if draft4:
        low_ex = low is not None and node.get("exclusiveMinimum") is True
        high_ex = high is not None and node.get("exclusiveMaximum") is True
    else:
        ex = node.get("exclusiveMinimum")
        if isinstance(ex, int | float) and (low is None or ex >= low):
            low, low_ex = ex, True
        ex = node.get("exclusiveMaximum")
        if isinstance(ex, int | float) and (high is None or ex <= high):
            high, high_ex = ex, True
    return low, low_ex, high, high_ex


def _int_bounds(node: Mapping[str, Any], draft4: bool) -> tuple[int | None, int | None]:
    low, low_ex, high, high_ex = bounds(node, draft4)
    lo = hi = None
    if low is not None:
        lo = math.floor(low) + 1 if low_ex or low != math.floor(low) else int(low)
    if high is not None:
        hi = math.ceil(high) - 1 if high_ex or high != math.ceil(high) else int(high)
    return lo, hi


def is_multiple(value: float, step: int | float) -> bool:
    """jsonschema's own ``multipleOf`` test, float quirks included."""
    if isinstance(step, float):
        try:
            quotient = value / step
            return int(quotient) == quotient
        except OverflowError:
            return (Fraction(value) / Fraction(step)).denominator == 1
    return value % step == 0


def integers(node: Mapping[str, Any], draft4: bool) -> SearchStrategy[int]:
    lo, hi = _int_bounds(node, draft4)
    step = node.get("multipleOf")
    edges = [v for v in integer_edges(node, lo, hi) if step is None or is_multiple(v, step)]
    return _with_edges(_integers(node, draft4), edges)


def _integers(node: Mapping[str, Any], draft4: bool) -> SearchStrategy[int]:
    lo, hi = _int_bounds(node, draft4)
    step = node.get("multipleOf")
    if step is None:
        return st.integers(lo, hi) if lo is None or hi is None or lo <= hi else st.nothing()
    exact = Fraction(str(step))
    unit = exact.numerator  # integers that are multiples of p/q are multiples of p
    k_lo = None if lo is None else -(-lo // unit)
    k_hi = None if hi is None else hi // unit
    if k_lo is not None and k_hi is not None and k_lo > k_hi:
        return st.nothing()
    made = st.integers(k_lo, k_hi).map(lambda k: k * unit)
    return (
        made
        if exact.denominator == 1 and isinstance(step, int)
        else made.filter(lambda v: is_multiple(v, step))
    )


def _float_multiple(k: int, step: float) -> float:
    """A float near ``k * step`` that jsonschema agrees is a multiple (float division)."""
    for j in (k, k + 1, k - 1, k + 2, k - 2):
        guess = j * step
        for candidate in (guess, round(guess, 12)):
            for toward in (math.inf, -math.inf):
                y = candidate
                for _ in range(3):
                    if is_multiple(y, step):
                        return y
                    y = math.nextafter(y, toward)
    return k * step


def numbers(node: Mapping[str, Any], draft4: bool) -> SearchStrategy[float]:
    low, low_ex, high, high_ex = bounds(node, draft4)
    step = node.get("multipleOf")

    def keep(x: float) -> bool:
        above = low is None or (x > low if low_ex else x >= low)
        below = high is None or (x < high if high_ex else x <= high)
        return above and below and (step is None or is_multiple(x, step))

    return _with_edges(_numbers(node, draft4), number_edges(keep, low, high))


def _numbers(node: Mapping[str, Any], draft4: bool) -> SearchStrategy[float]:
    low, low_ex, high, high_ex = bounds(node, draft4)

    def inside(x: float) -> bool:
        above = low is None or (x > low if low_ex else x >= low)
        below = high is None or (x < high if high_ex else x <= high)
        return above and below

    step = node.get("multipleOf")
    if step is not None:
        if isinstance(step, int) or float(step).is_integer():
            return integers(node, draft4).filter(inside)
        k_lo = None if low is None else math.ceil(Fraction(low) / Fraction(step))
        k_hi = None if high is None else math.floor(Fraction(high) / Fraction(step))
        if k_lo is not None and k_hi is not None and k_lo > k_hi:
            return st.nothing()
        made = st.integers(k_lo, k_hi).map(lambda k: _float_multiple(k, step))
        return made.filter(lambda x: inside(x) and is_multiple(x, step))
    options: list[SearchStrategy[Any]] = []
    lo_i, hi_i = _int_bounds(node, draft4)
    if lo_i is None or hi_i is None or lo_i <= hi_i:
        options.append(st.integers(lo_i, hi_i))
    f_lo = None if low is None else max(float(low), -_FLOAT_LIMIT)
    f_hi = None if high is None else min(float(high), _FLOAT_LIMIT)
    if f_lo is None or f_hi is None or f_lo < f_hi or (f_lo == f_hi and not low_ex | high_ex):
        options.append(
            st.floats(
                f_lo,
                f_hi,
                allow_nan=False,
                allow_infinity=False,
                exclude_min=low_ex and f_lo is not None,
                exclude_max=high_ex and f_hi is not None,
            )
        )
    return st.one_of(options).filter(inside) if options else st.nothing()


_ANY_EDGES = ("", " ", "\x00", "😀", "\u202eabc", "../../etc/passwd", "x" * 301, 2**31, -1, -0.0)


@cache
def any_json() -> SearchStrategy[Any]:
    """Any small JSON value: what ``true`` and ``{}`` allow."""
    leaves = (
        st.none()
        | st.booleans()
        | st.integers(-(10**6), 10**6)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(CHARS, max_size=STRING_SLACK)
        | st.sampled_from(_ANY_EDGES)
    )
    return st.recursive(
        leaves,
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.text(CHARS, max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )
