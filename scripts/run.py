#!/usr/bin/env python3
"""The two quick-start commands; each sets up its own virtual environment first.

    python3 scripts/run.py conformance   # the suites against the bundled example toolkit
    python3 scripts/run.py test          # ruff, mypy --strict, and the whole test suite
                                         # (two workers per core; `-n 0` for one process)

Extra arguments after the command go to pytest. Needs only Python 3.11+ and access
to the package registry; the environment lives in .venv and is reinstalled when
pyproject.toml changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".toolnexus-installed"
EXAMPLE_TARGET = "toolnexus_ref.examples:toolkit"


def _run(*args: str | Path, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(a) for a in args), flush=True)
    return subprocess.call([str(a) for a in args], cwd=ROOT, env=env)


def setup() -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 (this script may be run by an older python3)
        sys.exit(f"Python 3.11+ is needed; this is {sys.version.split()[0]}")
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if PYTHON.exists() and STAMP.exists() and STAMP.read_text() == digest:
        return
    if not PYTHON.exists():
        print(f"+ creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    steps = [
        (PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip"),
        (PYTHON, "-m", "pip", "install", "--quiet", "-e", ".[mcp,test]"),
    ]
    for step in steps:
        if _run(*step) != 0:
            sys.exit("installation failed")
    STAMP.write_text(digest)


def conformance(extra: list[str]) -> int:
    return _run(
        PYTHON,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        EXAMPLE_TARGET,
        "--toolnexus-report",
        "toolnexus-report.json",
        *extra,
    )


def test(extra: list[str]) -> int:
    for check in (
        (PYTHON, "-m", "ruff", "check", "."),
        (PYTHON, "-m", "mypy"),
    ):
        if _run(*check) != 0:
            return 1
    # Two pytest-xdist workers (a test dependency) per core: a third of the suite's time
    # is spent waiting on the sessions, servers and tools it starts, so on two cores
    # four workers take 0.8 of the time two take, and 0.5 of the serial time. Each test
    # file whole to one worker: a module's shared sessions (module-scoped fixtures) then
    # run once, not once per worker that got one of its tests (on two cores, four
    # workers: 226 and 240 s against 261 and 272 s for xdist's default). `-n 0` after
    # the command runs it serially.
    with _bytecode_kept() as env:
        return _run(
            PYTHON, "-m", "pytest", "-n", str(_workers()), "--dist", "loadfile", *extra, env=env
        )


@contextlib.contextmanager
def _bytecode_kept() -> Iterator[dict[str, str] | None]:
    """The suite's environment: bytecode cached for the run, even under PYTHONDONTWRITEBYTECODE.

    The suite's tests start many Python processes (pytest sessions, their workers,
    servers); with nothing cached, each compiles the project's modules and has pytest
    rewrite every plugin's again: about a second of CPU for each pytest session.
    Where the variable is set (many CI images set it), the run keeps its bytecode in
    a folder of its own, outside the tree, and removes it at the end.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        yield None
        return
    folder = tempfile.mkdtemp(prefix="toolnexus-bytecode-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = folder
    try:
        yield env
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _workers() -> int:
    """Two per core, but no more than the memory holds (a worker of this suite grows to
    about a gigabyte)."""
    cores = os.cpu_count() or 1
    try:
        with open("/proc/meminfo") as meminfo:
            fields = dict(line.split(":", 1) for line in meminfo)
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return cores
    return max(1, min(2 * cores, available // (3 << 29)))  # 1.5 GB each


def main() -> int:
    commands = {"conformance": conformance, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__)
        return 2
    setup()
    return commands[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
