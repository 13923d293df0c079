"""The static checks at scale: in process (tools/s at two sizes) and through pytest.

Run from the repository root:

    .venv/bin/python benchmarks/bench_static.py                      # 1,000 and 10,000 tools
    .venv/bin/python benchmarks/bench_static.py --sizes 1000 --repeat 1
    .venv/bin/python benchmarks/bench_static.py --no-pytest          # the in-process part only

In process: the best CPU time (and wall time), over ``--repeat`` runs, of
``read_subjects`` + ``check_subjects`` with every static code selected, on fresh
generated tools (a few with duplicate names and dotted names, so TN102 and TN104
have work to do). The rate is per CPU second, which other processes on a shared
machine disturb less than the wall clock. The check time should grow linearly
with the number of tools: the linearity line is the ratio of tools/s at the
largest size to tools/s at the smallest (1.0 is linear).

Through pytest (each size, in subprocesses, measured in the same run):

- ``pytest --toolnexus-conformance --toolnexus-only --toolnexus-execute none
  --toolnexus-granularity tool`` on a module of the same generated tools: every
  check is collected, the live ones are skipped, one item per tool;
- plain pytest running the same number of trivial parametrized tests, as many of
  them failing (pytest's own cost of reporting failures grows with the run).

It prints the wall and CPU times and peak RSS of both and their ratios (CPU is the
steadier figure on a shared machine; each session's figures include the worker
process that imports the target), and the load average when the pair ended. No
test asserts on these figures.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "conformance")]

from toolnexus_conformance._registry import load_catalog  # noqa: E402
from toolnexus_conformance._runner import check_subjects  # noqa: E402
from toolnexus_conformance._subject import read_subjects  # noqa: E402
from toolnexus_conformance.live._loop import BackgroundLoop  # noqa: E402

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

#: The module pytest loads: the same tools as the in-process run, built by this file.
TOOLS_MODULE = """
import sys
sys.path.insert(0, {bench!r})
from bench_static import make_tools

tools = make_tools({count}, 0)
"""

#: As many tests as the toolnexus session had items, failing as many of them: pytest's
#: own report of a failure (its teardown-section scan) costs the same on both sides.
PLAIN = """
import pytest


@pytest.mark.parametrize("n", range({count}))
def test_plain(n):
    assert n >= {failed}
"""


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
        roll = rng.random()
        if roll < 0.04:
            self.name = f"tool.{index}"
        elif roll < 0.06:
            self.name = f"tool_{index // 2}_dup"  # a few duplicate names, for TN104
        else:
            self.name = f"tool_{index}"
        self.description = f"Tool number {index}. " * rng.randint(1, 20)
        self.input_schema = _schema(rng, 0)
        if rng.random() < 0.1:
            self.input_schema["$defs"] = {"D": {"type": "string"}}
            self.input_schema["properties"]["ref"] = {"$ref": "#/$defs/D"}
            self.input_schema["required"].append("ref")
        self.source = rng.choice(SOURCES)

    def execute(self, args: Any, ctx: Any = None) -> Any:
        raise AssertionError("static checks never call a tool")


def make_tools(count: int, seed: int) -> list[Generated]:
    rng = random.Random(seed)
    return [Generated(i, rng) for i in range(count)]


def in_process(count: int, repeat: int, static: list[str], loop: BackgroundLoop) -> float:
    """Tools per CPU second, best over ``repeat`` runs, fresh tool objects each time.

    CPU time, not wall time, is the rate: on a shared machine the wall clock also
    counts other processes' turns. Both are printed.
    """
    best_wall = best_cpu = float("inf")
    verdicts: list[Any] = []
    for run in range(repeat):
        tools = make_tools(count, run)  # fresh objects: no warm cache
        started, cpu = time.perf_counter(), time.process_time()
        subjects = read_subjects(tools, "bench")
        verdicts = check_subjects(subjects, "bench", select=static, loop=loop)
        best_cpu = min(best_cpu, time.process_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - started)
    failed = sum(v.is_failure for v in verdicts)
    print(
        f"in process  {count:6} tools x {len(static)} static checks: {len(verdicts)} verdicts"
        f" ({failed} failed): {best_cpu:7.3f} s CPU = {count / best_cpu:7.0f} tools/s"
        f" (wall {best_wall:.3f} s; best of {repeat})"
    )
    return count / best_cpu


_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


class Session:
    """One pytest session's wall and CPU seconds, peak RSS (MB) and outcome counts."""

    def __init__(self, wall: float, cpu: float, rss: float, counts: dict[str, int]) -> None:
        self.wall, self.cpu, self.rss, self.counts = wall, cpu, rss, counts


def _pytest(folder: Path, *args: str) -> Session:
    """Run one pytest session; its figures are its own (``wait4``), its worker's included.

    ``wait4`` gives the resource use of the one process and of the children it
    waited for (the target's worker), so the peak RSS is this session's, not the
    largest of every session run so far.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
            cwd=folder,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    counts = _COUNTS.findall(last)
    if process.returncode not in (0, 1) or not counts:
        raise SystemExit(f"pytest failed ({process.returncode}):\n{stdout[-3000:]}{stderr}")
    cpu = usage.ru_utime + usage.ru_stime
    rss = usage.ru_maxrss / 1024  # kilobytes on Linux
    return Session(elapsed, cpu, rss, {word: int(n) for n, word in counts})


def through_pytest(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        module = TOOLS_MODULE.format(bench=str(Path(__file__).parent), count=count)
        (folder / "generated_tools.py").write_text(module)
        ours = _pytest(
            folder,
            "--toolnexus-conformance",
            "--toolnexus-only",
            "--toolnexus-execute",
            "none",
            "--toolnexus-granularity",
            "tool",
            "--toolnexus-target",
            "generated_tools:tools",
        )
        items, failed = sum(ours.counts.values()), ours.counts.get("failed", 0)
        (folder / "test_plain.py").write_text(PLAIN.format(count=items, failed=failed))
        plain = _pytest(folder, "-p", "no:toolnexus", "test_plain.py")
    print(
        f"pytest      {count:6} tools: toolnexus    {ours.wall:7.2f} s wall, {ours.cpu:6.2f} s CPU,"
        f" {ours.rss:6.0f} MB peak RSS ({items} items, {failed} failed;"
        " execute none, granularity tool)"
    )
    print(
        f"                         plain pytest {plain.wall:7.2f} s wall, {plain.cpu:6.2f} s CPU,"
        f" {plain.rss:6.0f} MB peak RSS ({sum(plain.counts.values())} tests,"
        f" {plain.counts.get('failed', 0)} failed)"
    )
    print(
        f"                         ratio        {ours.wall / plain.wall:7.2f}x wall,"
        f" {ours.cpu / plain.cpu:6.2f}x CPU, {ours.rss / plain.rss:6.2f}x peak RSS"
        f" (load average {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated tool counts")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-pytest", action="store_true", help="skip the pytest sessions")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    static = [info.code for info in load_catalog().infos() if not info.live]
    loop = BackgroundLoop()
    try:
        rates = [in_process(count, args.repeat, static, loop) for count in sizes]
    finally:
        loop.close()
    if len(sizes) > 1:
        print(
            f"linearity   tools/s at {sizes[-1]} / tools/s at {sizes[0]}:"
            f" {rates[-1] / rates[0]:.2f} (1.0 is linear)"
        )
    if not args.no_pytest:
        for count in sizes:
            through_pytest(count)


if __name__ == "__main__":
    main()
