"""Valid arguments from a tool's schema, reproducible from a seed.

The conformance package's ``args_for`` (hypothesis strategies, 2020-12 aware) is used
when it is installed: one ``@given`` run under ``@seed(n)``, with no database and no
shrinking, which hypothesis documents as reproducible. Otherwise a small generator
driven by ``random.Random(seed)`` covers the keywords tool schemas use.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["generate_arguments"]


def generate_arguments(schemas: Sequence[Mapping[str, Any]], seed: int) -> list[Any]:
    """One valid argument object per schema, the same for the same seed."""
    args_for = _conformance_args_for()
    if args_for is not None:
        try:
            return _with_hypothesis([args_for(dict(s)) for s in schemas], seed)
        except Exception:  # an unsupported schema: fall back rather than fail the fake
            pass
    rng = random.Random(seed)
    return [_value(dict(s), rng, s, 0) for s in schemas]


def _conformance_args_for() -> Callable[[Mapping[str, Any]], Any] | None:
    import importlib

    try:
        module = importlib.import_module("toolnexus_conformance.arguments")
    except ImportError:
        return None
    found = getattr(module, "args_for", None)
    return found if callable(found) else None


#: Hypothesis tries the simplest value first (zeros, empty strings); the last of a few
#: seeded examples is a more telling call.
_EXAMPLES = 4


def _with_hypothesis(strategies: list[Any], seed: int) -> list[Any]:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seed_of
    from hypothesis import strategies as st

    drawn: list[Any] = []

    @seed_of(seed)
    @settings(
        database=None,
        derandomize=False,
        max_examples=_EXAMPLES,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def draw(data: Any) -> None:
        drawn[:] = [data.draw(s) for s in strategies]

    draw()
    return drawn


def _value(
    schema: Mapping[str, Any], rng: random.Random, root: Mapping[str, Any], depth: int
) -> Any:
    if "$ref" in schema:
        ref = str(schema["$ref"])
        target: Any = root
        for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else []:
            target = target.get(part, {})
        return _value(target, rng, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(list(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _value(rng.choice(list(schema[key])), rng, root, depth + 1)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(part)
        return _value(merged, rng, root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = rng.choice([k for k in kind if k != "null"] or ["null"])
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    return _BY_TYPE.get(kind, _string)(schema, rng, root, depth)


def _object(
    schema: Mapping[str, Any], rng: random.Random, root: Mapping[str, Any], depth: int
) -> Any:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out = {}
    for name, sub in props.items():
        if name in required or (depth < 3 and rng.random() < 0.5):
            out[name] = _value(sub, rng, root, depth + 1)
    return out


def _array(
    schema: Mapping[str, Any], rng: random.Random, root: Mapping[str, Any], depth: int
) -> Any:
    low = int(schema.get("minItems", 0))
    high = max(low, min(int(schema.get("maxItems", low + 3)), low + 3))
    raw_items = schema.get("items")
    items: Mapping[str, Any] = raw_items if isinstance(raw_items, Mapping) else {}
    values = [_value(items, rng, root, depth + 1) for _ in range(rng.randint(low, high))]
    if schema.get("uniqueItems"):
        unique: list[Any] = []
        for v in values:
            if v not in unique:
                unique.append(v)
        values = unique
    return values


def _string(
    schema: Mapping[str, Any], rng: random.Random, root: Mapping[str, Any], depth: int
) -> Any:
    formats = {
        "date": "2024-01-31",
        "date-time": "2024-01-31T12:00:00Z",
        "email": "a@example.com",
        "uri": "https://example.com/x",
        "uuid": "12345678-1234-5678-1234-567812345678",
    }
    if schema.get("format") in formats:
        return formats[str(schema["format"])]
    low = int(schema.get("minLength", 1))
    high = max(low, min(int(schema.get("maxLength", low + 8)), low + 8))
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(low, high)))


def _number(
    schema: Mapping[str, Any], rng: random.Random, root: Mapping[str, Any], depth: int
) -> Any:
    low = schema.get("minimum", schema.get("exclusiveMinimum", -100))
    high = schema.get("maximum", schema.get("exclusiveMaximum", 100))
    if schema.get("type") == "integer":
        low_i = int(low) + (1 if "exclusiveMinimum" in schema and "minimum" not in schema else 0)
        high_i = int(high) - (1 if "exclusiveMaximum" in schema and "maximum" not in schema else 0)
        value = rng.randint(low_i, max(low_i, high_i))
        step = schema.get("multipleOf")
        return value - value % int(step) if isinstance(step, int) and step > 0 else value
    return round(rng.uniform(float(low), float(high)), 3)


_BY_TYPE: dict[str, Callable[[Mapping[str, Any], random.Random, Mapping[str, Any], int], Any]] = {
    "object": _object,
    "array": _array,
    "string": _string,
    "integer": _number,
    "number": _number,
    "boolean": lambda s, rng, r, d: rng.random() < 0.5,
    "null": lambda s, rng, r, d: None,
}
