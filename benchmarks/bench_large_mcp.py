"""What a large MCP server costs: the plugin on a stdio server of N trivial tools.

Run:  .venv/bin/python benchmarks/bench_large_mcp.py [--counts 200,1000] [--repeat 1]
      .venv/bin/python benchmarks/bench_large_mcp.py --probes [--counts 200,1000]

The server is ``toolnexus-serve`` (``toolnexus_ref.mcp.serve_cli``) over a module of
``N`` one-line tools, started by the plugin as a user's ``stdio:`` target; the run is
the plugin's whole suite (static and live checks), installed as in
``bench_mcp_peers.py`` (its environment under ``benchmarks/.peers/ours``). Each
count's runs are whole pytest processes, interleaved; it prints median wall seconds
and median CPU seconds (pytest and the server it started), each run's calls per tool
(the budgets are wall seconds stretched by the load: compare like with like) and
load average at its start, and each count's CPU against the first count's: a server whose cost grows with its tools and nothing else
is linear (1,000 tools about 5x 200). No test asserts on these numbers.

``--probes`` measures, in this process, one liveness probe of such a server (asked
once per tool by the live checks): a ``tools/list`` (what a probe was) against
``ServerConnection.probe`` (``ping`` or ``server/discover``), in client CPU and wall
milliseconds per probe. A probe whose cost grows with the tools makes a run's grow
as their square.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_mcp_peers import ROOT, _bin, _ours_env

TOOLS = """
from toolnexus_ref import BaseTool, ToolAnnotations


def make(index):
    class Lookup(BaseTool):
        name = f"lookup_{index}"
        description = "Looks a word up."
        input_schema = {
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 40}},
            "required": ["word"],
            "additionalProperties": False,
        }
        annotations = ToolAnnotations(read_only=True, idempotent=True)

        def run(self, args, ctx):
            return {"word": args["word"], "hits": len(args["word"])}

    return Lookup()


tools = [make(i) for i in range({count})]
"""


def command(python: str, count: int, report: Path) -> list[str]:
    server = f"{python} -m toolnexus_ref.mcp.serve_cli large_{count}:tools"
    return [
        python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{server}",
        "--toolnexus-report",
        str(report),
    ]


def timed(cmd: list[str], cwd: str) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the process and everything it waited for, exit status."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, check=False, timeout=3600)
    wall = time.perf_counter() - started
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, done.returncode


async def _probe_costs(folder: str, count: int, times: int = 20) -> None:
    import resource

    sys.path[:0] = [str(ROOT / "src")]
    from toolnexus_ref.mcp._source import open_stdio

    def cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    server = [sys.executable, "-m", "toolnexus_ref.mcp.serve_cli", f"large_{count}:tools"]
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        source = await open_stdio(server, timeout=120)
    finally:
        os.chdir(cwd)
    try:
        (connection,) = source.connections.values()
        client = connection._client
        assert client is not None, connection.status.describe()
        probes = {
            "tools/list": lambda: client.list_tools(cache_mode="bypass"),
            "probe()": lambda: connection.probe(30.0),
        }
        for label, probe in probes.items():
            used, started = cpu(), time.perf_counter()
            for _ in range(times):
                await probe()
            print(
                f"  {count:5} tools  {label:10} {(cpu() - used) / times * 1000:7.1f} ms CPU"
                f"  {(time.perf_counter() - started) / times * 1000:7.1f} ms wall per probe"
            )
    finally:
        await source.close()


def _calls_per_tool(report: Path) -> float:
    """The mean of the calls each tool's exploration made (its records carry ``calls``).

    The search's budgets are wall seconds, stretched by the machine's load: two
    counts whose runs made different calls per tool did different work, and their
    CPU ratio says so only beside this figure.
    """
    try:
        records = json.loads(report.read_text())["results"]
    except (OSError, ValueError, KeyError):
        return float("nan")
    calls = {(r["target"], r["tool"]): r["calls"] for r in records if r.get("calls") is not None}
    return statistics.mean(calls.values()) if calls else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="200,1000")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--probes", action="store_true", help="the cost of one probe only")
    args = parser.parse_args()
    if args.probes:
        import asyncio

        with tempfile.TemporaryDirectory() as folder:
            print("one liveness probe of a stdio server of N trivial tools (client side):")
            for count in [int(c) for c in args.counts.split(",")]:
                Path(folder, f"large_{count}.py").write_text(TOOLS.replace("{count}", str(count)))
                asyncio.run(_probe_costs(folder, count))
        return
    _ours_env("ours", ROOT)
    python = str(_bin("ours", "python"))
    counts = [int(c) for c in args.counts.split(",")]
    walls: dict[int, list[float]] = {c: [] for c in counts}
    cpus: dict[int, list[float]] = {c: [] for c in counts}
    with tempfile.TemporaryDirectory() as folder:
        for count in counts:
            Path(folder, f"large_{count}.py").write_text(TOOLS.replace("{count}", str(count)))
        for _ in range(args.repeat):
            for count in counts:
                report = Path(folder, "r.json")
                load = os.getloadavg()[0]
                wall, cpu, code = timed(command(python, count, report), folder)
                walls[count].append(wall)
                cpus[count].append(cpu)
                print(
                    f"  {count:5} tools: {wall:7.1f} s wall {cpu:7.1f} s CPU (exit {code})"
                    f"  calls per tool {_calls_per_tool(report):6.1f}  load at start {load:.1f}"
                )
    first = statistics.median(cpus[counts[0]])
    print(f"\nMCP stdio server of N trivial tools, {args.repeat} interleaved run(s), medians:")
    for count in counts:
        cpu = statistics.median(cpus[count])
        print(
            f"  {count:5} tools  wall {statistics.median(walls[count]):7.1f} s  CPU {cpu:7.1f} s"
            f"  CPU x{cpu / first:5.2f} of {counts[0]} ({count / counts[0]:g}x the tools)"
        )


if __name__ == "__main__":
    main()
