"""Reading 1,000 generated tools and running every static check on them.

Run:  .venv/bin/python benchmarks/bench_static.py [--tools 1000] [--repeat 3]

Prints the best wall-clock time of ``read_subjects`` + ``check_subjects`` (static codes
only) over the repeats, and the number of verdicts. The goal is about a second or less
for 1,000 tools. No test asserts on this figure.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "conformance")]

from toolnexus_conformance._loop import BackgroundLoop  # noqa: E402
from toolnexus_conformance._registry import load_catalog  # noqa: E402
from toolnexus_conformance._runner import check_subjects  # noqa: E402
from toolnexus_conformance._subject import read_subjects  # noqa: E402

SOURCES = ["native", "http", "custom", "skill", "builtin", "mcp", "a2a"]
LEAVES: list[dict[str, Any]] = [
    {"type": "string", "description": "A value."},
    {"type": "integer", "minimum": 0, "maximum": 100},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "string", "enum": ["a", "b", "c"]},
    {"type": "string", "format": "date-time"},
    {"type": "array", "items": {"type": "string"}, "maxItems": 5},
    {"anyOf": [{"type": "string"}, {"type": "null"}]},
]


def _schema(rng: random.Random, depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for index in range(rng.randint(1, 6)):
        if depth < 3 and rng.random() < 0.25:
            properties[f"p{index}"] = _schema(rng, depth + 1)
        else:
            properties[f"p{index}"] = dict(rng.choice(LEAVES))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
    }
    if rng.random() < 0.5:
        schema["additionalProperties"] = False
    return schema


class Generated:
    def __init__(self, index: int, rng: random.Random) -> None:
        self.name = f"tool_{index}" if rng.random() < 0.95 else f"tool.{index}"
        self.description = f"Tool number {index}. " * rng.randint(1, 20)
        self.input_schema = _schema(rng, 0)
        if rng.random() < 0.1:
            self.input_schema["$defs"] = {"D": {"type": "string"}}
            self.input_schema["properties"]["ref"] = {"$ref": "#/$defs/D"}
            self.input_schema["required"].append("ref")
        self.source = rng.choice(SOURCES)

    def execute(self, args: Any, ctx: Any = None) -> Any:
        raise AssertionError("static checks never call a tool")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    static = [info.code for info in load_catalog().infos() if not info.live]
    best = float("inf")
    verdicts: list[Any] = []
    loop = BackgroundLoop()
    try:
        for run in range(args.repeat):
            rng = random.Random(run)
            tools = [Generated(i, rng) for i in range(args.tools)]  # fresh objects: no warm cache
            started = time.perf_counter()
            subjects = read_subjects(tools, "bench")
            verdicts = check_subjects(subjects, "bench", select=static, loop=loop)
            best = min(best, time.perf_counter() - started)
    finally:
        loop.close()
    failed = sum(v.is_failure for v in verdicts)
    print(
        f"{args.tools} tools x {len(static)} static checks: {len(verdicts)} verdicts "
        f"({failed} failed) in {best:.3f} s (best of {args.repeat})"
    )


if __name__ == "__main__":
    main()
