"""What CI shards gain: one run over M stdio servers against the same run over N shards.

Run:  .venv/bin/python benchmarks/bench_shards.py [--servers 12] [--shards 4] [--repeat 3]

Each server is the suite's well-behaved test server (``tests/mcp/servers/good.py``),
started through a wrapper that notes each start. The baseline is the whole run on
one machine (``pytest --toolnexus-conformance``, depth 0, sandbox off, bytecode
cached); the shards run one after another here, as N machines would run them at
once, so a matrix takes its longest shard. Printed, as medians of interleaved
repeats: the whole run's wall time, the longest shard's, the speed-up (N at best),
each shard's CPU, and the server starts per server over all shards (1.00: each
server started in one shard only).
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
COUNTED = f"""
import pathlib, runpy, sys

with open(pathlib.Path(__file__).with_name("starts.log"), "a") as log:
    log.write(sys.argv[1] + "\\n")
runpy.run_path({str(GOOD)!r}, run_name="__main__")
"""
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _run(folder: Path, servers: int, shard: str | None) -> tuple[float, float]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    command += ["--toolnexus-conformance", "--toolnexus-only", "--toolnexus-sandbox", "off"]
    command += ["--toolnexus-depth", "0"]
    for index in range(servers):
        command += ["--toolnexus-target", f"stdio:{sys.executable} counted.py s{index}"]
    if shard is not None:
        command += ["--toolnexus-shard", shard]
    cpu, started = _cpu(), time.perf_counter()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr}")
    return wall, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--servers", type=int, default=12)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    whole: list[float] = []
    longest: list[float] = []
    shard_cpu: list[float] = []
    starts: list[float] = []
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "counted.py").write_text(COUNTED)
        log = folder / "starts.log"
        for _ in range(args.repeat):
            whole.append(_run(folder, args.servers, None)[0])
            log.unlink(missing_ok=True)
            runs = [
                _run(folder, args.servers, f"{k}/{args.shards}") for k in range(1, args.shards + 1)
            ]
            longest.append(max(wall for wall, _ in runs))
            shard_cpu.append(statistics.median(cpu for _, cpu in runs))
            starts.append(len(log.read_text().splitlines()) / args.servers)
            log.unlink()
    one, sharded = statistics.median(whole), statistics.median(longest)
    print(f"{args.servers} stdio servers over {args.shards} shards ({args.repeat} repeats)")
    print(f"  one run            {one:6.2f} s")
    print(f"  longest shard      {sharded:6.2f} s   speed-up {one / sharded:4.2f}x")
    print(f"  CPU of a shard     {statistics.median(shard_cpu):6.2f} s")
    print(f"  starts per server  {statistics.median(starts):6.2f}   (1.00: each in one shard)")


if __name__ == "__main__":
    main()
