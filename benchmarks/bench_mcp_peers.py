"""Our live suites beside the MCP testers users already have, on the same real servers.

Run:  .venv/bin/python benchmarks/bench_mcp_peers.py [--repeat 3] [--servers time,everything]

The first run installs what it compares against, each in its own environment under
``benchmarks/.peers/`` (from PyPI and npm; nothing is committed):

- ``amagi-mcp-probe`` (``amagi-mcp-probe -- CMD``: one call per tool),
- ``mcp-toolproof`` with ``hypothesis==6.150.0``, the version its fuzzer needs
  (``toolproof fuzz --seed 1 -- CMD``),
- the servers: ``mcp-server-time`` (PyPI) and ``@modelcontextprotocol/server-everything``
  (npm, stdio).

- this project, ``pip install -e .[mcp]`` in an environment of its own, as a user
  installs it (the development environment also loads the pytest plugins of every
  test dependency, langsmith's among them, which cost a second at start-up).

Each command is a whole process started from nothing (imports, server start-up and
shutdown included), run in turn (ours, amagi, toolproof, ours, ...), ``--repeat``
times. It prints each figure's median wall seconds, our exit status and error count,
and the ratio of ours to each peer. Our run is the plugin as a user runs it:
``pytest --toolnexus-conformance --toolnexus-only --toolnexus-target "stdio:CMD"``.
No test asserts on these numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "benchmarks" / ".peers"


def _bin(env: str, name: str) -> Path:
    return PEERS / env / ("Scripts" if os.name == "nt" else "bin") / name


def _venv(name: str, *packages: str) -> None:
    marker = PEERS / name / ".installed"
    if marker.exists():
        return
    print(f"installing {' '.join(packages)} into {PEERS / name}", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(PEERS / name)
    pip = [str(_bin(name, "python")), "-m", "pip", "install", "--quiet", *packages]
    subprocess.run(pip, check=True)
    marker.write_text("ok")


def _npm(package: str) -> Path:
    folder = PEERS / "npm"
    entry = folder / "node_modules" / package
    if not entry.exists():
        if shutil.which("npm") is None:
            raise SystemExit(f"npm is needed for {package}")
        folder.mkdir(parents=True, exist_ok=True)
        print(f"installing {package} with npm into {folder}", flush=True)
        subprocess.run(["npm", "install", "--silent", "--prefix", str(folder), package], check=True)
    return entry


def servers(names: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    if "time" in names:
        _venv("servers", "mcp-server-time")
        found["mcp-server-time"] = f"{_bin('servers', 'python')} -m mcp_server_time"
    if "everything" in names:
        entry = _npm("@modelcontextprotocol/server-everything")
        found["server-everything"] = f"node {entry / 'dist' / 'index.js'} stdio"
    return found


def _timed(command: list[str], cwd: Path) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    return time.perf_counter() - started, done.returncode, done.stdout + done.stderr


def ours(server: str, cwd: Path) -> list[str]:
    return [
        str(_bin("ours", "python")),
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{server}",
        "--toolnexus-report",
        str(cwd / "report.json"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--servers", default="time,everything")
    args = parser.parse_args()
    _venv("ours", "-e", f"{ROOT}[mcp]")
    _venv("amagi", "amagi-mcp-probe")
    _venv("toolproof", "mcp-toolproof", "hypothesis==6.150.0")
    runners = {
        "ours": ours,
        "amagi-mcp-probe": lambda s, _cwd: [
            str(_bin("amagi", "amagi-mcp-probe")),
            "--",
            *s.split(),
        ],
        "mcp-toolproof": lambda s, _cwd: [
            str(_bin("toolproof", "toolproof")),
            "fuzz",
            "--seed",
            "1",
            "--",
            *s.split(),
        ],
    }
    for label, server in servers(args.servers.split(",")).items():
        walls: dict[str, list[float]] = {name: [] for name in runners}
        errors: list[int] = []
        codes: list[int] = []
        with tempfile.TemporaryDirectory() as scratch:
            cwd = Path(scratch)
            for _ in range(args.repeat):
                for name, runner in runners.items():  # interleaved: A B C A B C ...
                    wall, code, _output = _timed(runner(server, cwd), cwd)
                    walls[name].append(wall)
                    if name == "ours":
                        codes.append(code)
                        summary = json.loads((cwd / "report.json").read_text())["summary"]
                        errors.append(summary["errors"])
        median = {name: statistics.median(values) for name, values in walls.items()}
        print(f"\n{label} (stdio), {args.repeat} interleaved runs, median wall seconds:")
        for name, value in median.items():
            spread = f"{min(walls[name]):.1f}-{max(walls[name]):.1f}"
            print(f"  {name:16} {value:6.1f} s  (min-max {spread})")
        print(f"  ours: exit status {codes}, error-severity failures {errors}")
        for name in runners:
            if name != "ours":
                print(f"  ours / {name}: {median['ours'] / median[name]:.2f}")


if __name__ == "__main__":
    main()
