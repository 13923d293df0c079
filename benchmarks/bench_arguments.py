"""Argument generation speed: our ``args_for`` beside hypothesis-jsonschema's ``from_schema``.

Run from the repository root:

    .venv/bin/python benchmarks/bench_arguments.py            # 300 examples per schema
    .venv/bin/python benchmarks/bench_arguments.py --examples 1000

hypothesis-jsonschema 0.23.1 (its last release) calls a hypothesis internal that hypothesis
6.170 no longer has, so under the project's venv its column reads "broken". To get the
comparison, run the same script under an interpreter with an older hypothesis:

    python3 -m venv /tmp/hjs
    /tmp/hjs/bin/pip install "hypothesis==6.135.0" "hypothesis-jsonschema==0.23.1" jsonschema
    PYTHONPATH=src:conformance /tmp/hjs/bin/python benchmarks/bench_arguments.py

Both generators run in the same process under the same hypothesis settings (derandomized,
no database, generate phase only), so the ratio is what matters, not the absolute rate.
Ours validates every value with jsonschema before handing it out; hypothesis-jsonschema
does not. Schemas hypothesis-jsonschema cannot express (2020-12 ``prefixItems``, recursive
``$ref``) show ``n/a`` in its column. Needs ``hypothesis-jsonschema`` installed for the
comparison column (``pip install hypothesis-jsonschema``); without it only ours is timed.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.strategies import SearchStrategy
from toolnexus_conformance.arguments import args_for

D7 = "http://json-schema.org/draft-07/schema#"

#: name -> (schema, expressible in draft 7 for hypothesis-jsonschema)
SCHEMAS: dict[str, tuple[dict[str, Any], bool]] = {
    "search tool": (
        {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "maxLength": 50},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "safe": {"type": "boolean"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        True,
    ),
    "enum + const": (
        {
            "type": "object",
            "properties": {
                "mode": {"enum": ["fast", "slow", "auto"]},
                "version": {"const": 2},
                "unit": {"enum": ["c", "f", None]},
            },
            "required": ["mode", "version"],
        },
        True,
    ),
    "formats": (
        {
            "type": "object",
            "properties": {
                "day": {"type": "string", "format": "date"},
                "mail": {"type": "string", "format": "email"},
                "id": {"type": "string", "format": "uuid"},
                "ip": {"type": "string", "format": "ipv4"},
            },
            "required": ["day", "mail", "id", "ip"],
        },
        True,
    ),
    "pattern + bounds": (
        {
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "step": {"type": "number", "multipleOf": 0.5, "minimum": 0, "maximum": 10},
            },
            "required": ["code", "ratio", "step"],
        },
        True,
    ),
    "nested arrays of objects": (
        {
            "type": "object",
            "properties": {
                "rows": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 4,
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
                        },
                        "required": ["id"],
                    },
                }
            },
            "required": ["rows"],
        },
        True,
    ),
    "anyOf required": (
        {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
            "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
        },
        True,
    ),
    "allOf merge": (
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                {"properties": {"a": {"minimum": 10, "maximum": 12}, "b": {"type": "string"}}},
            ]
        },
        True,
    ),
    "if/then/else (draft 7)": (
        {
            "$schema": D7,
            "type": "object",
            "properties": {"country": {"enum": ["US", "CA"]}, "postal": {"type": "string"}},
            "required": ["country"],
            "if": {"properties": {"country": {"const": "US"}}},
            "then": {"properties": {"postal": {"pattern": "^[0-9]{5}$"}}, "required": ["postal"]},
        },
        True,
    ),
    "prefixItems tuple (2020-12)": (
        {
            "type": "object",
            "properties": {
                "point": {
                    "type": "array",
                    "prefixItems": [{"type": "number"}, {"type": "number"}],
                    "items": False,
                    "minItems": 2,
                }
            },
            "required": ["point"],
        },
        False,
    ),
    "recursive tree ($defs)": (
        {
            "$defs": {
                "node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    },
                    "required": ["value"],
                }
            },
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/node"}},
            "required": ["tree"],
        },
        False,
    ),
}


def rate(strategy: SearchStrategy[Any], examples: int) -> float:
    """Examples per second hypothesis draws from ``strategy`` (generate phase only)."""
    count = 0

    @settings(
        max_examples=examples,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(_: object) -> None:
        nonlocal count
        count += 1

    start = time.perf_counter()
    draw()
    return count / (time.perf_counter() - start)


def _other() -> tuple[Callable[[dict[str, Any]], SearchStrategy[Any]] | None, str]:
    """hypothesis-jsonschema's ``from_schema`` if it works here, else why not."""
    try:
        from hypothesis_jsonschema import from_schema
    except ImportError:
        return None, "not installed"
    try:
        rate(from_schema({"type": "object", "properties": {"a": {"type": "integer"}}}), 5)
    except Exception as error:
        return None, f"broken: {type(error).__name__}: {error}"
    return from_schema, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300, help="examples per schema")
    options = parser.parse_args()
    warnings.simplefilter("ignore")
    other, why = _other()
    import hypothesis

    print(f"hypothesis {hypothesis.__version__}; hypothesis-jsonschema: {why or 'working'}")
    rate(args_for(next(iter(SCHEMAS.values()))[0]), 50)  # warm hypothesis up once
    print(f"{'schema':<30} {'args_for ex/s':>14} {'from_schema ex/s':>17} {'ratio':>7}")
    for name, (schema, expressible) in SCHEMAS.items():
        ours = rate(args_for(schema), options.examples)
        theirs: float | None = None
        note = "n/a" if not expressible else why.split(":")[0]
        if expressible and other is not None:
            try:
                theirs = rate(other(schema), options.examples)
            except Exception as error:  # their limits are part of the comparison
                note = type(error).__name__
        column = f"{theirs:17.0f}" if theirs else f"{note:>17}"
        ratio = f"{ours / theirs:6.2f}x" if theirs else f"{'-':>7}"
        print(f"{name:<30} {ours:14.0f} {column} {ratio}")


if __name__ == "__main__":
    main()
