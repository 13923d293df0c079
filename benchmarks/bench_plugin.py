"""The plugin's own cost: collecting and running the static suites on N generated tools.

Run:  .venv/bin/python benchmarks/bench_plugin.py [--tools 1000]

Two pytest sessions in subprocesses, measured in the same run:
- toolnexus: ``pytest --toolnexus-conformance --toolnexus-only`` with the static
  categories selected on a module of N tools (one item per tool and check);
- the same with ``--toolnexus-granularity tool`` (one item per tool);
- baseline: plain pytest running the same number of trivial parametrized tests.
Prints both wall times, items per second and the ratio. No test asserts on it.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOOLS = """
from toolnexus_ref import BaseTool


def make(index):
    class Generated(BaseTool):
        name = f"tool_{index}"
        description = f"Generated tool number {index}."
        input_schema = {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "filters": {
                    "type": "object",
                    "properties": {"tag": {"type": "string"}},
                    "additionalProperties": False,
                },
            },
            "required": ["query"],
            "additionalProperties": False,
        }

        def run(self, args, ctx):
            return "ok"

    return Generated()


tools = [make(i) for i in range(COUNT)]
"""

PLAIN = """
import pytest


@pytest.mark.parametrize("n", range(COUNT))
def test_plain(n):
    assert n >= 0
"""


def _session(folder: Path, *args: str) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    counts = re.findall(r"(\d+) passed", done.stdout.splitlines()[-1] if done.stdout else "")
    if done.returncode != 0 or not counts:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return elapsed, int(counts[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=1000)
    count = parser.parse_args().tools
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "generated_tools.py").write_text(TOOLS.replace("COUNT", str(count)))
        ours, items = _session(
            folder,
            "--toolnexus-conformance",
            "--toolnexus-only",
            "--toolnexus-target",
            "generated_tools:tools",
            "--toolnexus-select",
            "naming,description,schema,provider",
        )
        grouped, grouped_items = _session(
            folder,
            "--toolnexus-conformance",
            "--toolnexus-only",
            "--toolnexus-granularity",
            "tool",
            "--toolnexus-target",
            "generated_tools:tools",
            "--toolnexus-select",
            "naming,description,schema,provider",
        )
        (folder / "test_plain.py").write_text(PLAIN.replace("COUNT", str(items)))
        plain, plain_items = _session(folder, "-p", "no:toolnexus", "test_plain.py")
    print(f"{count} tools, {items} conformance items (static categories)")
    print(f"toolnexus  {ours:7.2f} s  {items / ours:8.0f} items/s")
    print(
        f"by tool    {grouped:7.2f} s  ({grouped_items} items: --toolnexus-granularity tool,"
        f" {ours / grouped:.1f}x faster)"
    )
    print(
        f"baseline   {plain:7.2f} s  {plain_items / plain:8.0f} items/s  (plain pytest, {plain_items} tests)"
    )
    print(f"ratio      {ours / plain:7.2f}x the time of plain pytest for the same number of items")


if __name__ == "__main__":
    main()
