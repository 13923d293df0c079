#!/usr/bin/env python3
"""Build the distribution and prove the built wheel works where nothing else is installed.

    python3 scripts/check_package.py

Builds an sdist and a wheel into ``dist/`` with ``python -m build``, checks their
metadata with ``twine check``, installs the wheel (with the ``mcp`` extra) into a
fresh virtual environment, and from an empty folder runs the conformance suites
against the bundled example toolkit twice: imported as a Python target, and served
over MCP stdio by the wheel's own ``toolnexus-serve``. An editable install hides a
wheel that lacks modules; this does not. It also checks that pytest rewrote the
plugin's modules but neither library's (``pytest_toolnexus._plain_imports``): pytest
marks every package of an installed plugin's distribution, an editable one's none.
Needs only Python 3.11+ and the registry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".venv" / "package-tools"
DIST = ROOT / "dist"
EXAMPLE = "toolnexus_ref.examples:toolkit"
#: The distribution's libraries, imported unrewritten under pytest.
LIBRARIES = ("toolnexus_ref", "toolnexus_conformance")
#: The runs write bytecode, so pytest leaves its rewritten modules' behind to be counted.
WRITES_BYTECODE = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    print("+", " ".join(str(a) for a in args), flush=True)
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    if done.returncode != 0:
        print(done.stdout)
        sys.exit(f"failed ({done.returncode}): {' '.join(str(a) for a in args)}")
    return done.stdout


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def _fresh_env(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    venv.EnvBuilder(with_pip=True).create(path)
    _run(_python(path), "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    return _python(path)


def main() -> int:
    if not _python(TOOLS).exists():
        _fresh_env(TOOLS)
    _run(_python(TOOLS), "-m", "pip", "install", "--quiet", "build>=1.2", "twine>=6.0")
    shutil.rmtree(DIST, ignore_errors=True)
    _run(_python(TOOLS), "-m", "build", "--outdir", DIST, ROOT)
    built = sorted(DIST.iterdir())
    _run(_python(TOOLS), "-m", "twine", "check", "--strict", *built)
    (wheel,) = [p for p in built if p.suffix == ".whl"]
    with tempfile.TemporaryDirectory(prefix="toolnexus-wheel-") as scratch:
        where = Path(scratch)
        python = _fresh_env(where / "env")
        _run(python, "-m", "pip", "install", "--quiet", f"{wheel}[mcp]")
        serve = where / "env" / "bin" / "toolnexus-serve"
        for target in (EXAMPLE, f"stdio:{serve} {EXAMPLE}"):
            out = _run(
                python,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--toolnexus-conformance",
                "--toolnexus-only",
                "--toolnexus-target",
                target,
                cwd=where,
                env=WRITES_BYTECODE,
            )
            print("\n".join(out.rstrip().splitlines()[-4:]), flush=True)
        _check_rewritten(where / "env")
    print(f"the wheel {wheel.name} installs and runs the suites", flush=True)
    return 0


def _check_rewritten(env: Path) -> None:
    """pytest rewrote the plugin's modules (its cached ``*-pytest-*.pyc`` are there) and
    no module of the libraries."""
    (site,) = env.glob("lib/python3*/site-packages")
    plugin = list((site / "pytest_toolnexus").rglob("*-pytest-*.pyc"))
    rewritten = sorted(
        str(p.relative_to(site)) for lib in LIBRARIES for p in (site / lib).rglob("*-pytest-*.pyc")
    )
    if not plugin:
        sys.exit("pytest rewrote no module of the plugin: the check below proves nothing")
    if rewritten:
        sys.exit("pytest rewrote the libraries' modules: " + ", ".join(rewritten))
    print(
        f"pytest rewrote {len(plugin)} of the plugin's modules, none of the libraries'", flush=True
    )


if __name__ == "__main__":
    sys.exit(main())
