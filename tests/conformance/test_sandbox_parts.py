"""The sandbox's parts: limits, the environment allowlist, the launch, and the audit record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toolnexus_conformance.process._sandbox import (
    Limits,
    Sandbox,
    clean_environment,
    parse_limits,
    probe,
)


def test_limits_are_read_over_the_defaults() -> None:
    limits = parse_limits("as=8G, fsize=512M,cpu=60,nproc=none")
    assert limits == Limits(8 << 30, 512 << 20, 60, None)
    assert parse_limits("") == Limits()
    for bad in ("as", "memory=1G", "cpu=fast", "cpu=-1"):
        with pytest.raises(ValueError, match="limit"):
            parse_limits(bad)


def test_the_environment_keeps_the_allowlist_and_what_is_named() -> None:
    environ = {
        "PATH": "/bin",
        "LC_ALL": "C",
        "PYTHONPATH": "/src",
        "OPENAI_API_KEY": "sk-1",
        "AWS_SECRET_ACCESS_KEY": "x",
        "MY_TOKEN": "t",
    }
    kept = clean_environment(environ, ["MY_TOKEN"], {"PWD": "/scratch"})
    assert kept == {
        "PATH": "/bin",
        "LC_ALL": "C",
        "PYTHONPATH": "/src",
        "MY_TOKEN": "t",
        "PWD": "/scratch",
    }


@pytest.mark.parametrize("mode", ["off", "auto"])
def test_a_started_process_gets_the_limits_and_the_cut_environment(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mode == "auto" and not probe().available:
        pytest.skip(probe().why)
    monkeypatch.setenv("SANDBOX_PARTS_API_KEY", "secret")
    box = Sandbox(mode=mode, limits=Limits(file_size=1 << 20))
    code = (
        "import json, os, resource;"
        "print(json.dumps([resource.getrlimit(resource.RLIMIT_FSIZE)[0], dict(os.environ)]))"
    )
    argv, env = box.wrap([sys.executable, "-c", code], box.environment(), tmp_path)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    size, seen = json.loads(done.stdout)
    assert size == 1 << 20
    assert "SANDBOX_PARTS_API_KEY" not in seen
    assert "PATH" in seen
    if mode == "auto":
        assert seen["HOME"].startswith(str(tmp_path))


@pytest.mark.parametrize("mode", ["off", "auto"])
@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("toolnexus_no_such_command", "no such command on the PATH it was given"),
        ("{scratch}/server.sh", "Permission denied"),  # not executable
    ],
)
def test_a_command_that_cannot_be_started_says_which_and_why(
    mode: str, command: str, says: str, tmp_path: Path
) -> None:
    """An mcp.json naming a server that is not installed is the commonest start-up
    failure; the user reads the server's stderr, which must name the command, not show
    the traceback of the code that started it."""
    if mode == "auto" and not probe().available:
        pytest.skip(probe().why)
    (tmp_path / "server.sh").write_text("#!/bin/sh\n")
    command = command.format(scratch=tmp_path)
    box = Sandbox(mode=mode)
    argv, env = box.wrap([command, "--flag"], box.environment(), tmp_path)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert done.stderr == f"cannot start {command!r}: {says}\n"


def _kit_and_path() -> list[str]:
    """Where an audited subprocess finds the kit (its checkout too), then this path."""
    import toolnexus_conformance

    return [str(Path(toolnexus_conformance.__file__).parents[1]), *sys.path]


AUDITED = """
import json, os, socket, sys
sys.path[:0] = {path!r}
from toolnexus_conformance import _escapes

scratch = {scratch!r}
_escapes.install([scratch])
open(os.path.join(scratch, "inside.txt"), "w").close()   # its scratch: fine
open(__file__).close()                                    # reading: fine
try:
    open("/toolnexus-missing/outside.txt", "w")
except OSError:
    pass
server = socket.socket()
server.bind(("127.0.0.1", 0))                             # its own listener
server.listen()
socket.create_connection(server.getsockname()).close()    # ... reached: fine
try:
    socket.create_connection(("192.0.2.1", 9), timeout=0.01)
except OSError:
    pass
print(json.dumps(_escapes.ESCAPES))
"""


def test_the_audit_record_names_what_left_scratch_and_nothing_else(tmp_path: Path) -> None:
    roots = _kit_and_path()
    script = tmp_path / "audited.py"
    script.write_text(AUDITED.format(path=roots, scratch=str(tmp_path)))
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(done.stdout) == [
        ["write", "/toolnexus-missing/outside.txt"],
        ["connect to", "192.0.2.1:9"],
    ]


LAZY_IMPORT = """
import json, os, sys
sys.path[:0] = {path!r}
from toolnexus_conformance import _escapes

_escapes.install([{scratch!r}])
sys.path.insert(0, {modules!r})
import imported_during_the_call                           # compiled now: fine
open({outside!r}, "w").close()                            # the tool's own write
print(json.dumps(_escapes.ESCAPES))
"""


@pytest.mark.parametrize("prefix", [False, True], ids=["pycache", "pycache-prefix"])
def test_bytecode_written_for_a_lazy_import_is_not_the_tools_escape(
    tmp_path: Path, prefix: bool
) -> None:
    """A module imported during a call is compiled then, into ``__pycache__`` or, under
    ``PYTHONPYCACHEPREFIX``, into that folder: the interpreter's write, not the tool's."""
    for folder in ("scratch", "modules", "elsewhere"):
        (tmp_path / folder).mkdir()
    (tmp_path / "modules" / "imported_during_the_call.py").write_text("VALUE = 1\n")
    outside = tmp_path / "elsewhere" / "written.txt"
    script = tmp_path / "lazy.py"
    roots = _kit_and_path()
    script.write_text(
        LAZY_IMPORT.format(
            path=roots,
            scratch=str(tmp_path / "scratch"),
            modules=str(tmp_path / "modules"),
            outside=str(outside),
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    if prefix:
        env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "bytecode")
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    compiled = tmp_path / ("bytecode" if prefix else "modules")
    assert list(compiled.rglob("imported_during_the_call.*.pyc")), "nothing was compiled"
    assert json.loads(done.stdout) == [["write", str(outside)]]


def test_a_package_imported_from_a_hidden_folder_stays_readable_and_nothing_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install imports from its source folder, not through ``sys.path``: the
    kit checked out under ``/tmp`` had its workers fail on ``ModuleNotFoundError``."""
    if not probe().available:
        pytest.skip(probe().why)
    package = tmp_path / "checkout" / "editable_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "late.py").write_text("VALUE = 7\n")
    (tmp_path / "checkout" / "secret.txt").write_text("not for tools")
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "editable_pkg", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "editable_pkg", module)
    spec.loader.exec_module(module)
    box = Sandbox(mode="auto")
    code = (
        "import json, os, sys;"
        f"late = open({str(package / 'late.py')!r}).read();"
        f"print(json.dumps([late, os.path.exists({str(tmp_path / 'checkout' / 'secret.txt')!r})]))"
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    argv, env = box.wrap([sys.executable, "-c", code], box.environment(), scratch)
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=True)
    late, secret_seen = json.loads(done.stdout)
    assert late == "VALUE = 7\n"
    assert secret_seen is False
