"""What CI shards gain: one run over M stdio servers against the same run over N shards.

Run:  .venv/bin/python benchmarks/bench_shards.py [--servers 12] [--shards 4] [--heavy 2] [--repeat 3]

Each server is the suite's well-behaved test server (``tests/mcp/servers/good.py``,
three tools), started through a wrapper that notes each start. The baseline is the
whole run on one machine (``pytest --toolnexus-conformance``, depth 0, sandbox off,
bytecode cached); the shards run one after another here, as N machines would run
them at once, so a matrix takes its longest shard. Printed, as medians of
interleaved repeats: the whole run's wall time, the longest shard's, the speed-up
(N at best), each shard's CPU, and the server starts per server over all shards
(1.00: each server started in one shard only).

Then the same with ``--heavy`` of the servers the seeded-bug corpus's server
(``conformance/corpus/servers/seeded_bugs.py``, 24 tools), placed every N-th, where
dealing the servers out in turn puts them all in shard 1 (an unlucky order, not an
average one: ``sim_balance.py`` gives that): the shards cut in turn against the
shards weighed by the whole run's report of the same repeat
(``--toolnexus-shard-costs``).

Then Python targets (``--python-targets``, default 16, ``--python-only``: this alone):
one-module targets of two tools whose import takes 0.3 s of CPU (a heavy package),
over the same shards, cut by tool after collection (every shard imports every
target) against weighed by the whole run's report (a target measured and no heavier
than a shard's mean goes whole to one shard, which alone imports it). Printed: the
longest shard and the imports per target, over all shards (each costs 0.3 s of CPU;
the CPU of the workers that import them is not seen from here: they are reaped by
their template process, not by pytest).

Last, the plan alone at scale: the time every shard spends placing an mcp.json of
1,000 servers by the measured seconds of their 6,000 tools (``--plan-only``: this
alone).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOOD = ROOT / "tests" / "mcp" / "servers" / "good.py"
SEEDED = ROOT / "conformance" / "corpus" / "servers" / "seeded_bugs.py"
COUNTED = """
import pathlib, runpy, sys

with open(pathlib.Path(__file__).with_name("starts.log"), "a") as log:
    log.write(sys.argv[1] + "\\n")
runpy.run_path(sys.argv[2], run_name="__main__")
"""
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _pytest(
    folder: Path, targets: list[str], *args: str, ok: tuple[int, ...] = (0,)
) -> tuple[float, float]:
    """One conformance run over ``targets`` in ``folder`` (importable there): its wall
    time and the CPU of the processes it reaped; another exit status than ``ok`` stops."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    command += ["--toolnexus-conformance", "--toolnexus-only", "--toolnexus-sandbox", "off"]
    command += ["--toolnexus-depth", "0", *args]
    for target in targets:
        command += ["--toolnexus-target", target]
    env = {**ENV, "PYTHONPATH": str(folder)}
    cpu, started = _cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr}")
    return wall, _cpu() - cpu


def _run(folder: Path, scripts: list[Path], *args: str) -> tuple[float, float]:
    """The stdio servers ``scripts``, each started through the wrapper that notes it."""
    targets = [
        f"stdio:{sys.executable} counted.py s{i} {script}" for i, script in enumerate(scripts)
    ]
    return _pytest(folder, targets, *args, ok=(0, 1))  # 1: the seeded bugs are found


def _shards(
    folder: Path, scripts: list[Path], shards: int, *args: str
) -> list[tuple[float, float]]:
    return [
        _run(folder, scripts, "--toolnexus-shard", f"{k}/{shards}", *args)
        for k in range(1, shards + 1)
    ]


HEAVY_IMPORT = """
import pathlib, time

from toolnexus_ref import BaseTool

with open(pathlib.Path(__file__).with_name("imports.log"), "a") as log:
    log.write(__name__ + "\\n")
end = time.process_time() + 0.3  # a heavy import: 0.3 s of CPU
while time.process_time() < end:
    pass


class Echo(BaseTool):
    description = "Echo the text it is given."
    input_schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "additionalProperties": False,
    }

    def __init__(self, name):
        self.name = name

    def run(self, args, ctx):
        return str(args.get("text", ""))


tools = [Echo(__name__ + "_a"), Echo(__name__ + "_b")]
"""


def _run_python(folder: Path, targets: int, *args: str) -> tuple[float, float]:
    return _pytest(folder, [f"heavy{index}:tools" for index in range(targets)], *args)


def python_targets(targets: int, shards: int, repeat: int) -> None:
    """Heavy-import Python targets over shards: cut by tool against weighed."""
    figures: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        for index in range(targets):
            (folder / f"heavy{index}.py").write_text(HEAVY_IMPORT)
        log = folder / "imports.log"
        for _ in range(repeat):
            figures.setdefault("whole", []).append(
                _run_python(folder, targets, "--toolnexus-report", "whole.json")[0]
            )
            for key, extra in (
                ("by tool", ()),
                ("weighed", ("--toolnexus-shard-costs", "whole.json")),
            ):
                log.unlink(missing_ok=True)
                runs = [
                    _run_python(folder, targets, "--toolnexus-shard", f"{k}/{shards}", *extra)
                    for k in range(1, shards + 1)
                ]
                figures.setdefault(f"{key} longest", []).append(max(w for w, _ in runs))
                imports = len(log.read_text().splitlines()) if log.exists() else 0
                figures.setdefault(f"{key} imports", []).append(imports / targets)
    median = {key: statistics.median(values) for key, values in figures.items()}
    print(f"{targets} Python targets (0.3 s of CPU to import each) over {shards} shards")
    print(f"  one run            {median['whole']:6.2f} s")
    for key in ("by tool", "weighed"):
        print(
            f"  {key:8} longest shard {median[key + ' longest']:6.2f} s,"
            f" imports per target {median[key + ' imports']:4.2f}"
        )


def plan_at_scale(servers: int = 1000, tools: int = 6, shards: int = 16) -> None:
    """How long a shard takes to place a large mcp.json's servers by measured seconds."""
    import json

    from pytest_toolnexus._shard_targets import shard_targets

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        entries = {f"s{i}": {"command": "server", "args": [str(i)]} for i in range(servers)}
        (folder / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
        costs = {
            f"toolnexus:mcp.json::s{i}_tool_{j}": 0.1 * (j + 1) * (1 + i % 7)
            for i in range(servers)
            for j in range(tools)
        }
        times = []
        for k in range(1, shards + 1):
            started = time.perf_counter()
            share = shard_targets(["mcp.json"], folder, k, shards, costs)
            times.append(time.perf_counter() - started)
        busiest = max(share.loads) / (sum(share.loads) / shards)
    print(
        f"placing {servers} servers ({servers * tools} tools measured) over {shards} shards:"
        f" {statistics.median(times) * 1000:.0f} ms a shard (median), busiest shard"
        f" {busiest:.3f}x the mean"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--servers", type=int, default=12)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--heavy", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python-targets", type=int, default=16)
    parser.add_argument("--plan-only", action="store_true")
    parser.add_argument("--python-only", action="store_true")
    args = parser.parse_args()
    if args.plan_only:
        plan_at_scale()
        return
    if args.python_only:
        python_targets(args.python_targets, args.shards, args.repeat)
        return
    alike = [GOOD] * args.servers
    mixed = [
        SEEDED if i % args.shards == 0 and i // args.shards < args.heavy else GOOD
        for i in range(args.servers)
    ]
    figures: dict[str, list[float]] = {}

    def note(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "counted.py").write_text(COUNTED)
        log = folder / "starts.log"
        for _ in range(args.repeat):
            note("whole", _run(folder, alike)[0])
            log.unlink(missing_ok=True)
            runs = _shards(folder, alike, args.shards)
            note("longest", max(wall for wall, _ in runs))
            note("cpu", statistics.median(cpu for _, cpu in runs))
            note("starts", len(log.read_text().splitlines()) / args.servers)
            note("mixed whole", _run(folder, mixed, "--toolnexus-report", "whole.json")[0])
            note("in turn", max(wall for wall, _ in _shards(folder, mixed, args.shards)))
            weighed = _shards(folder, mixed, args.shards, "--toolnexus-shard-costs", "whole.json")
            note("weighed", max(wall for wall, _ in weighed))
            log.unlink()
    median = {key: statistics.median(values) for key, values in figures.items()}
    one, sharded = median["whole"], median["longest"]
    print(f"{args.servers} stdio servers over {args.shards} shards ({args.repeat} repeats)")
    print(f"  one run            {one:6.2f} s")
    print(f"  longest shard      {sharded:6.2f} s   speed-up {one / sharded:4.2f}x")
    print(f"  CPU of a shard     {median['cpu']:6.2f} s")
    print(f"  starts per server  {median['starts']:6.2f}   (1.00: each in one shard)")
    one = median["mixed whole"]
    print(f"the same, {args.heavy} of them the 24-tool seeded server, every {args.shards}th")
    print(f"  one run            {one:6.2f} s")
    for key in ("in turn", "weighed"):
        print(f"  longest, {key:9} {median[key]:6.2f} s   speed-up {one / median[key]:4.2f}x")
    python_targets(args.python_targets, args.shards, args.repeat)
    plan_at_scale()


if __name__ == "__main__":
    main()
