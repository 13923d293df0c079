"""Many one-tool Python targets in one pytest run: wall time, peak memory, every verdict.

Run:  .venv/bin/python benchmarks/bench_many_targets.py --targets 100 [--targets 1000]
          [--checks live|static] [--workers N]

Writes ``--targets`` tiny modules (one trivial tool each) to a temporary directory,
lists them in its ``pytest.ini`` and runs the plugin there as a subprocess. While
it runs, the resident memory of pytest and every process descending from it (its
worker processes, their tools' processes) is summed from ``/proc`` every 0.2 s.
Reported: wall time, the peak of that sum and of the tree's proportional set size
(``Pss`` of ``/proc/PID/smaps_rollup``: shared pages counted once, the figure to read
for workers forked from one template), the most processes alive at once, and
the verdicts in the JSON report against the items pytest collected. Linux only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TOOL = """
from toolnexus_ref import BaseTool, ToolAnnotations


class Lookup(BaseTool):
    name = "lookup_{index}"
    description = "Looks a word up in a small table."
    input_schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 20}},
        "required": ["word"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    def run(self, args, ctx):
        return {"word": args["word"], "length": len(args["word"])}


tools = [Lookup()]
"""

CHECKS = {"live": "TN5,TN6,TN7,TN8,TN9", "static": "TN1,TN2,TN3,TN4"}
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _pss(pid: int) -> int:
    """Proportional set size: each shared page divided among the processes sharing it.

    Workers are forked from one warm template, so most of their pages are shared
    copy-on-write; summing RSS counts those pages once per process, PSS once in all.
    """
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree(root: int) -> tuple[int, int, int]:
    """Resident bytes, proportional bytes and count of ``root`` and its descendants."""
    parents: dict[int, int] = {}
    resident: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        resident[int(entry)] = int(fields[21]) * PAGE
    inside = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in inside and pid not in inside:
                inside.add(pid)
                grew = True
    alive = inside & resident.keys()
    return sum(resident[pid] for pid in alive), sum(_pss(pid) for pid in alive), len(alive)


def run(count: int, checks: str, workers: int | None, limit: float | None = None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        for index in range(count):
            (where / f"many_{index}.py").write_text(TOOL.replace("{index}", str(index)))
        targets = "\n".join(f"    many_{index}:tools" for index in range(count))
        (where / "pytest.ini").write_text(f"[pytest]\ntoolnexus_targets =\n{targets}\n")
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--toolnexus-conformance",
            "--toolnexus-only",
            "--toolnexus-select",
            CHECKS[checks],
            "--toolnexus-report",
            "report.json",
        ]
        if workers is not None:
            command += ["--toolnexus-workers", str(workers)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT / "src"), str(ROOT / "conformance"), str(ROOT), env.get("PYTHONPATH", "")]
        )
        started = time.perf_counter()
        with open(where / "out.txt", "wb") as out:
            process = subprocess.Popen(
                command,
                cwd=where,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
            peak_bytes = peak_pss = peak_count = 0
            while process.poll() is None:
                if limit is not None and time.perf_counter() - started > limit:
                    os.killpg(process.pid, signal.SIGTERM)  # its own session: nothing else
                    process.wait()
                    break
                size, proportional, alive = _tree(process.pid)
                peak_bytes, peak_count = max(peak_bytes, size), max(peak_count, alive)
                peak_pss = max(peak_pss, proportional)
                time.sleep(0.2)
        wall = time.perf_counter() - started
        tail = (where / "out.txt").read_text(errors="replace").strip().splitlines()[-1:]
        if tail and tail[0].lstrip(".").startswith(" ["):
            tail = [f"stopped at {tail[0].rsplit('[', 1)[-1]}"]
        try:
            report = json.loads((where / "report.json").read_text())
            verdicts = len(report["results"])
            complete = report.get("complete")
        except (OSError, ValueError, KeyError):
            verdicts, complete = 0, None
        print(
            f"{count:5} targets ({checks}, workers {workers or 'default'}): wall {wall:7.1f} s"
            f"  peak RSS {peak_bytes / 2**20:7.0f} MiB  PSS {peak_pss / 2**20:6.0f} MiB"
            f"  peak processes {peak_count:4}"
            f"  verdicts {verdicts}  complete={complete}  exit {process.returncode}"
            f"  | {tail[0] if tail else ''}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=int, action="append", help="repeatable; default 100")
    parser.add_argument("--checks", choices=sorted(CHECKS), default="live")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--limit", type=float, default=None, help="stop the run after SECONDS")
    args = parser.parse_args()
    for count in args.targets or [100]:
        run(count, args.checks, args.workers, args.limit)


if __name__ == "__main__":
    main()
