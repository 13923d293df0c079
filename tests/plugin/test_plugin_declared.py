"""Verdicts no target can forge or lose, and secrets no output shows.

Each test runs a real pytest session on a hostile target beside a healthy
neighbour and asserts the hostile tool's verdict, the neighbour's and the exit
status: a target that patches pytest at import never reaches pytest's process; an
``atexit`` hook of the target never delays it; a tool that kills its worker, or
exhausts its process's memory, is a finding; a run killed outright leaves the
records it judged; a credential of the environment is masked everywhere. The
targets whose tools end their process are judged in one shared session, each test
reading its own target's part of its report.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _sessions import Session, healthy_judged, run_session, verdicts_of

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, SELECT, TARGET

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "bad" / "live_process.py"
FAST = ("--toolnexus-call-timeout", "1", "--toolnexus-grace", "0.3", "--toolnexus-examples", "3")

TARGETS = """
from toolnexus_ref.examples import toolkit

import live_process as corpus

healthy = [t for t in toolkit.tools if t.name == "convert_units"]

kills_its_worker = [corpus.kills_its_worker, *healthy]
terms_its_worker = [corpus.terms_its_worker, *healthy]
memory_bomb = [corpus.memory_bomb, *healthy]
"""

#: Patches pytest at import: every report passes. Notes the pid of each process that imports it.
PATCHES_PYTEST = """
import os

import _pytest.reports

with open(os.environ["TOOLNEXUS_IMPORTED_IN"], "a") as out:
    out.write(f"{os.getpid()}\\n")

_original = _pytest.reports.TestReport.__init__


def _always_passed(self, *args, **kwargs):
    _original(self, *args, **kwargs)
    self.outcome = "passed"
    self.longrepr = None


_pytest.reports.TestReport.__init__ = _always_passed

from toolnexus_ref import ToolResult
from toolnexus_ref.examples import toolkit


class BadName:
    name = "has spaces in it"
    description = "A tool whose name no provider accepts: its naming checks fail."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    async def execute(self, args, ctx=None):
        return ToolResult.ok("fine")


tools = [BadName(), *[t for t in toolkit.tools if t.name == "convert_units"]]
"""

#: Records its own pid, then sleeps at exit for far longer than any run.
SLEEPS_AT_EXIT = """
import atexit
import os
import time


def _linger():
    with open(os.environ["TOOLNEXUS_IMPORTED_IN"], "a") as out:
        out.write(f"atexit {os.getpid()}\\n")
    time.sleep(600)


atexit.register(_linger)

from toolnexus_ref.examples import toolkit

tools = [t for t in toolkit.tools if t.name == "convert_units"]
"""

#: Writes pytest's own pid where the tests can read it.
CONFTEST_PID = """
import os


def pytest_configure(config):
    with open(os.environ["TOOLNEXUS_PYTEST_PID"], "w") as out:
        out.write(str(os.getpid()))
"""

#: A tool whose error message carries a credential of the environment.
LEAKS_A_TOKEN = """
import os

from toolnexus_ref import ToolResult, tool
from toolnexus_ref.examples import toolkit


@tool
def leaks_token(text: str) -> ToolResult:
    '''Look a text up in the service; the error says how it authenticated.'''
    return ToolResult.error(f"service refused token {os.environ['MY_SERVICE_TOKEN']} for {text!r}")


tools = [leaks_token, *[t for t in toolkit.tools if t.name == "convert_units"]]
"""


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Run the plugin on a target; yields ``(result, report)``, then checks nothing is left running."""
    pytester.path.joinpath("live_process.py").write_text(CORPUS.read_text())
    pytester.makepyfile(targets=TARGETS)
    marker = uuid.uuid4().hex
    monkeypatch.setenv("TOOLNEXUS_TEST_RUN", marker)
    monkeypatch.setenv("TOOLNEXUS_IMPORTED_IN", str(pytester.path / "imported_in.txt"))
    monkeypatch.setenv("TOOLNEXUS_PYTEST_PID", str(pytester.path / "pytest_pid.txt"))
    pytester.makeconftest(CONFTEST_PID)

    def go(target: str, *extra: str, timeout: float = 180) -> tuple[pytest.RunResult, Any]:
        result = pytester.runpytest_subprocess(*_session_args(target, *extra), timeout=timeout)
        return result, json.loads((pytester.path / "report.json").read_text())

    yield go
    left = _processes_marked(marker)
    assert left == [], f"processes of the run still running: {left}"


def _session_args(target: str, *extra: str) -> list[str]:
    """The session's arguments for ``target``, then ``extra``."""
    return [
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        target,
        "--toolnexus-execute",
        "all",
        *FAST,
        REPORT,
        "report.json",
        # The target writes where it was imported to a file of the project.
        "--toolnexus-sandbox",
        "off",
        "--toolnexus-env",
        "TOOLNEXUS_IMPORTED_IN",
        *extra,
    ]


def _processes_marked(marker: str) -> list[str]:
    needle = f"TOOLNEXUS_TEST_RUN={marker}".encode()
    deadline = time.monotonic() + 5.0
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or entry.name == str(os.getpid()):
                continue
            try:
                if needle in (entry / "environ").read_bytes():
                    if "\nState:\tZ" in (entry / "status").read_text():
                        continue
                    found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _pids(pytester: pytest.Pytester) -> tuple[str, list[str]]:
    pytest_pid = (pytester.path / "pytest_pid.txt").read_text().strip()
    imported = pytester.path / "imported_in.txt"
    lines = imported.read_text().split() if imported.exists() else []
    return pytest_pid, lines


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_target_that_patches_pytest_at_import_never_reaches_pytests_process(
    run: Any, pytester: pytest.Pytester, isolation: str
) -> None:
    pytester.makepyfile(patches=PATCHES_PYTEST)
    result, report = run(
        "patches:tools",
        "--toolnexus-execute",
        "none",
        SELECT,
        "TN1",
        "--toolnexus-isolation",
        isolation,
    )
    pytest_pid, imported_in = _pids(pytester)
    assert imported_in, "the target was never imported"
    bad = verdicts_of(report, "has spaces in it")
    assert any(r["outcome"] == "failed" for r in bad.values()), bad
    assert all(r["outcome"] == "passed" for r in verdicts_of(report, "convert_units").values())
    if isolation == "process":
        assert pytest_pid not in imported_in  # imported in the worker only
        assert result.ret == pytest.ExitCode.TESTS_FAILED
    else:  # in pytest's own process, as documented: the patch decides the exit status
        assert pytest_pid in imported_in
        assert result.ret == pytest.ExitCode.OK


def test_an_atexit_hook_of_the_target_never_delays_pytest(
    run: Any, pytester: pytest.Pytester
) -> None:
    pytester.makepyfile(lingers=SLEEPS_AT_EXIT)
    # Were the hook run in pytest's process, the run would outlast this timeout.
    result, report = run("lingers:tools", "--toolnexus-execute", "none", timeout=120)
    assert result.ret == pytest.ExitCode.OK
    pytest_pid, lines = _pids(pytester)
    assert pytest_pid not in lines
    assert verdicts_of(report, "convert_units")["TN101"]["outcome"] == "passed"


@dataclass(frozen=True)
class SharedRun:
    """One session on the targets whose tools end the processes they run in."""

    session: Session
    report: dict[str, Any]
    marker: str


#: The targets of ``TARGETS`` judged in one session (each tool in a process of its
#: own, a worker restarted when one kills it); each test reads its target's part.
SHARED_TARGETS = ["targets:kills_its_worker", "targets:terms_its_worker", "targets:memory_bomb"]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> SharedRun:
    """The ``run`` fixture's set-up, once, for a session on every ``SHARED_TARGETS``."""
    project = tmp_path_factory.mktemp("shared")
    project.joinpath("live_process.py").write_text(CORPUS.read_text())
    project.joinpath("targets.py").write_text(TARGETS)
    project.joinpath("conftest.py").write_text(CONFTEST_PID)
    marker = uuid.uuid4().hex
    more = [arg for target in SHARED_TARGETS[1:] for arg in (TARGET, target)]
    session = run_session(
        project,
        *_session_args(SHARED_TARGETS[0], *more, "--toolnexus-concurrency", "2"),
        env={
            "TOOLNEXUS_TEST_RUN": marker,
            "TOOLNEXUS_IMPORTED_IN": str(project / "imported_in.txt"),
            "TOOLNEXUS_PYTEST_PID": str(project / "pytest_pid.txt"),
        },
        timeout=240,
    )
    assert (project / "report.json").exists(), session.text()
    return SharedRun(session, session.report(), marker)


def test_the_shared_run_fails_judges_every_target_and_leaves_nothing_running(
    shared: SharedRun,
) -> None:
    """What the ``run`` fixture and each test assert of a whole session, for the shared one."""
    assert shared.session.ret == pytest.ExitCode.TESTS_FAILED, shared.session.text()
    assert {r["target"] for r in shared.report["results"]} == set(SHARED_TARGETS)
    assert not any(r.get("kit_failure") for r in shared.report["results"])
    left = _processes_marked(shared.marker)
    assert left == [], f"processes of the run still running: {left}"


@pytest.mark.parametrize("tool", ["kills_its_worker", "terms_its_worker"])
def test_a_tool_that_kills_its_worker_is_tn606_and_its_neighbour_is_judged(
    shared: SharedRun, tool: str
) -> None:
    target = f"targets:{tool}"
    mine = verdicts_of(shared.report, tool, target)
    assert mine["TN606"]["outcome"] == "failed", mine["TN606"]
    assert "killed the worker process that ran it" in mine["TN606"]["message"]
    healthy_judged(shared.report, target)


def test_a_memory_bomb_is_a_finding_not_a_skip(shared: SharedRun) -> None:
    target = "targets:memory_bomb"
    mine = verdicts_of(shared.report, "memory_bomb", target)
    assert mine["TN606"]["outcome"] == "failed", mine["TN606"]
    assert "ran out of" in mine["TN606"]["message"]
    skipped = {code: r["message"] for code, r in mine.items() if r["outcome"] == "skipped"}
    assert not skipped, skipped
    healthy_judged(shared.report, target)


def test_a_credential_of_the_environment_is_masked_everywhere_and_is_tn561(
    run: Any, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"tok-{uuid.uuid4().hex}"
    monkeypatch.setenv("MY_SERVICE_TOKEN", token)
    pytester.makepyfile(leaks=LEAKS_A_TOKEN)
    # Named, so the tool is given it (the rest of the environment never reaches a tool).
    result, report = run(
        "leaks:tools", "--junitxml", "junit.xml", "-rA", "--toolnexus-env", "MY_SERVICE_TOKEN"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    mine = verdicts_of(report, "leaks_token")
    assert mine["TN561"]["outcome"] == "failed", mine["TN561"]
    assert verdicts_of(report, "convert_units")["TN561"]["outcome"] == "passed"
    healthy_judged(report)
    stdout = result.stdout.str() + result.stderr.str()
    assert "service refused token ***" in stdout  # the tool's error is shown, masked
    for shown in (stdout, (pytester.path / "junit.xml").read_text(), json.dumps(report)):
        assert token not in shown


KILLED_MID_RUN = """
import os
import time

_count = 0


def pytest_runtest_teardown(item):
    global _count
    _count += 1
    if _count == 3:  # three items judged: wait here to be killed
        open(os.environ["TOOLNEXUS_READY"], "w").close()
        time.sleep(600)
"""


def test_pytest_killed_mid_run_leaves_an_incomplete_report_of_what_it_judged(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(KILLED_MID_RUN)
    pytester.makepyfile(
        several="from toolnexus_ref.examples import toolkit\ntools = toolkit.tools\n"
    )
    ready = pytester.path / "ready"
    tmp = pytester.path / "tmp"  # where the session's scratch folders go
    tmp.mkdir()
    env = dict(os.environ, TOOLNEXUS_READY=str(ready), TMPDIR=str(tmp))
    out = (pytester.path / "out.txt").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            CONFORMANCE,
            ONLY,
            TARGET,
            "several:tools",
            "--toolnexus-execute",
            "none",
            REPORT,
            "report.json",
        ],
        cwd=pytester.path,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    out.close()
    try:
        end = time.monotonic() + 120
        while not ready.exists() and process.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        assert ready.exists(), (pytester.path / "out.txt").read_text()
        os.killpg(process.pid, signal.SIGKILL)
        assert process.wait(30) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    # The kit's processes outlive the session's group: each finds its session gone and
    # removes its scratch; a worker stopped once its target was read has none left.
    end = time.monotonic() + 10
    while list(tmp.glob("toolnexus-*")) and time.monotonic() < end:
        time.sleep(0.1)
    assert list(tmp.glob("toolnexus-*")) == []
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["complete"] is False
    assert "did not finish" in report["interrupted"]
    assert len(report["results"]) == 3
    assert report["summary"]["checks"] == 3
    assert len({(r["tool"], r["check"]) for r in report["results"]}) == 3
