"""xdist workers on other hosts get whole tools too: real execnet socket gateways on loopback.

A socket gateway is what xdist runs on another machine (``--tx socket=HOST:PORT``), and
the plugin treats it as one: it shares no listing with it, so the worker loads the
target itself, and it is sent the costs the controller cut the run by. Here both
hosts are execnet's own socket server, started by the test on 127.0.0.1 in the
project's folder; nothing leaves the machine.
"""

from __future__ import annotations

import selectors
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from _sessions import run_session, session_environment

execnet = pytest.importorskip("execnet")
pytest.importorskip("xdist")

TOOLS = """
import os

from toolnexus_ref import BaseTool

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "imports.log"), "a") as log:
    log.write(f"{os.getpid()}\\n")


def make(i):
    class Echo(BaseTool):
        name = f"tool_{i}"
        description = f"Returns its text unchanged (tool number {i})."
        input_schema = {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        }

        def run(self, args, ctx):
            with open(os.path.join(HERE, "calls.log"), "a") as log:
                log.write(f"{os.getpid()} {self.name}\\n")
            return args["text"]

    return Echo()


tools = [make(i) for i in range(4)]
"""

PROJECT_TESTS = """
import os


def test_plain():
    assert os.environ.get("PYTEST_XDIST_WORKER")
"""


def _listening(server: subprocess.Popen[str], within: float = 60.0) -> int:
    """The port execnet's socket server says it accepts on (it binds port 0)."""
    assert server.stdout is not None
    end = time.monotonic() + within
    with selectors.DefaultSelector() as selector:
        selector.register(server.stdout, selectors.EVENT_READ)
        while time.monotonic() < end:
            if not selector.select(end - time.monotonic()):
                break
            line = server.stdout.readline()
            if not line:
                break
            if "Entering Accept loop" in line:
                return int(line.rstrip().rstrip(")").rsplit(",", 1)[1])
    raise AssertionError(f"execnet's socket server did not start (exit {server.poll()})")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "remotetools.py").write_text(TOOLS)
    (tmp_path / "test_project.py").write_text(PROJECT_TESTS)
    return tmp_path


@pytest.fixture
def hosts(project: Path) -> Iterator[list[str]]:
    """Two ``--tx`` specs, each execnet's socket server on a loopback port of its own,
    running in the project's folder with the environment a session gets."""
    script = Path(execnet.__file__).parent / "script" / "socketserver.py"
    servers = [
        subprocess.Popen(
            [sys.executable, "-u", str(script), "127.0.0.1:0"],
            cwd=project,
            env=session_environment(project),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        yield [f"socket=127.0.0.1:{_listening(s)}//chdir={project}" for s in servers]
    finally:
        for server in servers:
            server.kill()
            server.communicate()


def test_workers_on_other_hosts_get_whole_tools_and_load_the_target_themselves(
    project: Path, hosts: list[str]
) -> None:
    args = ["-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-sandbox", "off"]
    args += ["--toolnexus-target", "remotetools:tools", "--toolnexus-isolation", "none"]
    args += ["--toolnexus-select", "TN5,TN101", "--toolnexus-examples", "2"]
    args += ["-d", *(f"--tx={spec}" for spec in hosts), "--toolnexus-report=r.json"]
    session = run_session(project, *args)
    run = session.run_result()
    outcomes = run.parseoutcomes()
    assert session.ret == 0, session.text()
    assert outcomes["passed"] > 4, session.text()
    callers: dict[str, set[str]] = defaultdict(set)
    for line in (project / "calls.log").read_text().splitlines():
        pid, tool = line.split()
        callers[tool].add(pid)
    assert sorted(callers) == [f"tool_{i}" for i in range(4)]
    # Each tool explored by one host, and both hosts had tools.
    assert all(len(pids) == 1 for pids in callers.values()), callers
    assert len(set().union(*callers.values())) == 2, callers
    # Listings are shared only on this machine: each host imported the target itself
    # (the controller imports nothing).
    importers = set((project / "imports.log").read_text().split())
    assert len(importers) == 2
    assert importers == set().union(*callers.values())
    report = session.report("r.json")
    assert report["complete"]
    assert report["summary"]["tools"] == 4
    assert report["summary"]["failed"] == 0
