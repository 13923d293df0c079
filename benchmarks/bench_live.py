"""Wall time of the default live suite on a trivial tool and on a small toolkit.

Run:  .venv/bin/python benchmarks/bench_live.py [--repeat 3]

Defaults are ``RunOptions()`` (examples=10, grace=1.0, execute=auto). The
baseline is the bare cost of the same number of direct ``execute`` calls on one
event loop, measured in the same run; the ratio says what the suite's harness
(hypothesis, daemon threads, scratch directories, bounds) costs on top.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "conformance")]

from toolnexus_conformance._options import RunOptions  # noqa: E402
from toolnexus_conformance._runner import check_tools  # noqa: E402

from toolnexus_ref import BaseTool, ToolAnnotations, ToolContext  # noqa: E402

LIVE = ("TN5", "TN6", "TN7", "TN8", "TN9")


class Echo(BaseTool):
    name = "echo"
    description = "Returns its text."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 100}},
        "required": ["text"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return args["text"]


class Add(BaseTool):
    name = "add"
    description = "Adds two integers."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"sum": args["a"] + args["b"]}


class Lookup(BaseTool):
    name = "lookup"
    description = "Looks a city up."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "city": {"enum": ["paris", "oslo", "lima"]},
            "fields": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        },
        "required": ["city"],
        "additionalProperties": False,
    }

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"city": args["city"], "fields": args.get("fields", [])}


class Counting:
    """Counts calls through to a tool, so the baseline makes as many."""

    def __init__(self, tool: Any) -> None:
        self.tool = tool
        self.calls = 0
        for attr in ("name", "description", "input_schema", "source", "annotations"):
            setattr(self, attr, getattr(tool, attr))

    async def execute(self, args: Any, ctx: ToolContext | None = None) -> Any:
        self.calls += 1
        return await self.tool.execute(args, ctx)


def suite(tools: list[Any], options: RunOptions) -> tuple[float, int, int]:
    counted = [Counting(t) for t in tools]
    started = time.perf_counter()
    verdicts = check_tools(counted, select=LIVE, options=options)
    elapsed = time.perf_counter() - started
    failed = sum(v.is_failure for v in verdicts)
    return elapsed, sum(c.calls for c in counted), failed


def baseline(tools: list[Any], calls: int) -> float:
    args = {
        "echo": {"text": "hi"},
        "add": {"a": 1, "b": 2},
        "lookup": {"city": "oslo"},
        "get_weather": {"city": "Lisbon"},
        "convert_units": {"value": 3.5, "from_unit": "km", "to_unit": "mi"},
        "search_fares": {"origin": "LIS", "destination": "OPO"},
        "count_days": {"start": "2026-01-01", "end": "2026-01-05"},
    }

    async def direct() -> None:
        for i in range(calls):
            tool = tools[i % len(tools)]
            await tool.execute(args[tool.name], ToolContext())

    started = time.perf_counter()
    asyncio.run(direct())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    options = RunOptions()
    print(f"live suite ({', '.join(LIVE)}), {options.examples} examples, grace {options.grace:g}s")
    from toolnexus_ref.examples import build_toolkit

    cases: tuple[tuple[str, list[Any]], ...] = (
        ("trivial tool", [Echo()]),
        ("toolkit of 3", [Echo(), Add(), Lookup()]),
        ("example kit", list(build_toolkit().tools)),
    )
    for label, tools in cases:
        for run in range(repeat):
            elapsed, calls, failed = suite(tools, options)
            base = baseline(tools, calls)
            print(
                f"{label:13} run {run + 1}: {elapsed * 1000:8.1f} ms  {calls:4d} calls  "
                f"direct {base * 1000:6.1f} ms  ratio {elapsed / base:6.1f}x  failed={failed}"
                + (
                    "  (cold: imports, first hypothesis run)"
                    if run == 0 and label == "trivial tool"
                    else ""
                )
            )


if __name__ == "__main__":
    main()
