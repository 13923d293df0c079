"""A server installed under a folder the sandbox hides still starts: its installation is shown.

pipx and ``uv tool`` install under the home folder, nvm puts node there, and a server
tried out in ``/tmp`` lies in a hidden folder too. The sandbox shows back, read-only,
what the command names and the installation each path belongs to, and never a hidden
folder whole.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolnexus_conformance.process._command_roots import command_roots, program_inside
from toolnexus_conformance.process._sandbox import Sandbox, probe


def _venv(root: Path, base: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(
        f"home = {base / 'bin'}\ninclude-system-site-packages = false\n"
    )
    script = root / "bin" / "my-server"
    script.write_text(f"#!{root / 'bin' / 'python'}\nprint('hi')\n")
    script.chmod(0o755)
    (root / "bin" / "python").write_text("")
    return script


def test_a_script_of_a_virtual_environment_brings_the_environment_and_its_python(
    tmp_path: Path,
) -> None:
    base = tmp_path / "pythons" / "3.11"
    (base / "bin").mkdir(parents=True)
    script = _venv(tmp_path / "venvs" / "server", base)
    link_folder = tmp_path / "local-bin"
    link_folder.mkdir()
    (link_folder / "my-server").symlink_to(script)
    roots = command_roots(["my-server", "--flag"], {"PATH": str(link_folder)}, private=[tmp_path])
    assert tmp_path / "venvs" / "server" in roots
    assert base in roots
    assert tmp_path not in roots
    assert link_folder in roots  # where the link lies; the link is run by its real path
    inside = program_inside(["my-server", "--flag"], {"PATH": str(link_folder)}, private=[tmp_path])
    assert inside == [str(script), "--flag"]


def test_a_virtual_environments_python_is_run_by_its_own_name(tmp_path: Path) -> None:
    """Its ``bin/python`` links to the Python it was made from; run by that target, it
    would not find its ``pyvenv.cfg``, and start without the environment's packages."""
    base = tmp_path / "pythons" / "3.11"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "python3.11").write_text("")
    _venv(tmp_path / "venvs" / "server", base)
    python = tmp_path / "venvs" / "server" / "bin" / "python"
    python.unlink()
    python.symlink_to(base / "bin" / "python3.11")
    link = tmp_path / "local-bin" / "server-python"  # a link to it from elsewhere
    link.parent.mkdir()
    link.symlink_to(python)
    for named in (python, link):
        inside = program_inside([str(named), "-m", "server"], private=[tmp_path])
        assert inside == [str(python), "-m", "server"]


def test_a_script_in_node_modules_brings_the_folder_that_holds_them(tmp_path: Path) -> None:
    script = tmp_path / "npm" / "node_modules" / "@scope" / "server" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("")
    (tmp_path / "npm" / "node_modules" / "dep" / "node_modules").mkdir(parents=True)
    roots = command_roots([sys.executable, str(script)], private=[tmp_path])
    assert tmp_path / "npm" in roots


def test_a_hidden_folder_is_never_shown_whole(tmp_path: Path) -> None:
    """A script lying directly in the home folder is shown alone, never the home."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".ssh").mkdir()
    script = home / "server.py"
    script.write_text("")
    roots = command_roots([sys.executable, str(script), str(home)], private=[home])
    assert script in roots
    assert home not in roots
    assert not any(home in root.parents and root.is_dir() for root in roots)
    assert program_inside(["python3", "x"], {"PATH": "/usr/bin"}, private=[home]) == [
        "python3",
        "x",
    ]


def test_a_script_of_a_source_checkout_brings_the_checkout(tmp_path: Path) -> None:
    """A server run from its checkout reads its modules and data above its script (the
    corpus's seeded server, cloned under /tmp, failed to start: its data was hidden)."""
    checkout = tmp_path / "checkout"
    script = checkout / "servers" / "server.py"
    script.parent.mkdir(parents=True)
    script.write_text("")
    (checkout / "pyproject.toml").write_text("")
    roots = command_roots([sys.executable, str(script)], private=[tmp_path])
    assert checkout in roots
    assert tmp_path not in roots


def test_a_home_folder_under_version_control_is_still_never_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    script = home / "tools" / "server.py"
    script.parent.mkdir()
    script.write_text("")
    roots = command_roots([sys.executable, str(script)], private=[home])
    assert home not in roots
    assert script.parent in roots or script in roots


def test_an_env_line_is_followed_to_its_program(tmp_path: Path) -> None:
    tools = tmp_path / "tools" / "bin"
    tools.mkdir(parents=True)
    interpreter = tools / "mylang"
    interpreter.write_text("")
    interpreter.chmod(0o755)
    script = tmp_path / "apps" / "server"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env -S mylang --quiet\n")
    roots = command_roots([str(script)], {"PATH": str(tools)}, private=[tmp_path])
    assert tools in roots
    assert tmp_path / "apps" in roots


def test_nothing_is_named_for_a_command_that_is_not_there() -> None:
    assert command_roots([]) == []
    assert command_roots(["no-such-program-anywhere"], {"PATH": "/nonexistent"}) == []


needs_sandbox = pytest.mark.skipif(
    not hasattr(os, "fork") or not probe().available, reason=probe().why or "no sandbox here"
)


@needs_sandbox
def test_a_server_in_a_hidden_folder_starts_in_the_sandbox(tmp_path: Path) -> None:
    """``tmp_path`` is under ``/tmp``, which the sandbox shows empty."""
    script = tmp_path / "server" / "run.py"
    script.parent.mkdir()
    script.write_text("import sys\nprint('started from', sys.argv[0])\n")
    secret = tmp_path / "server-secret.txt"  # beside the server, not named: stays hidden
    secret.write_text("s3cret")
    reader = tmp_path / "server" / "read.py"
    reader.write_text(f"print(open({str(secret)!r}).read())\n")
    launch = Sandbox(mode="auto").launcher()
    for program, expect in ((script, "started from"), (reader, "No such file")):
        argv, env = launch([sys.executable, str(program)], {"PATH": os.environ["PATH"]}, None)
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert expect in done.stdout + done.stderr, (done.stdout, done.stderr)


@needs_sandbox
def test_a_server_run_by_the_python_of_a_hidden_virtual_environment_has_its_packages(
    tmp_path: Path,
) -> None:
    """A server installed in a virtual environment under ``/tmp`` (``python -m venv``,
    ``pip install mcp-server-fetch``) ran without its packages: "No module named"."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    module = venv / "lib" / version / "site-packages" / "venv_server.py"
    module.write_text("import sys\nprint('served from', sys.prefix)\n")
    launch = Sandbox(mode="auto").launcher()
    argv, env = launch(
        [str(venv / "bin" / "python"), "-m", "venv_server"], {"PATH": os.environ["PATH"]}, None
    )
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"served from {venv}", (done.stdout, done.stderr)
