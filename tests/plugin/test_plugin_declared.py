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
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest
from _processes import processes_marked
from _sessions import (
    RunningSession,
    Session,
    SessionsByKey,
    early,
    healthy_judged,
    start_session,
    verdicts_of,
)

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


def _ran(running: RunningSession) -> tuple[pytest.RunResult, Any, Session]:
    """The ended session as pytester gives it, its report, and the session."""
    session = running.result()
    report = json.loads((session.path / "report.json").read_text())
    return session.run_result(), report, session


def _assert_nothing_left(session: Session) -> None:
    """No process of the run was left as it ended (its ``at_end``): looked for then, as
    each test here looked right after its session."""
    left = session.at_end
    assert left == [], f"processes of the run still running: {left}"


def _start(
    project: Path,
    target: str,
    *extra: str,
    modules: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 180,
) -> RunningSession:
    """A session on ``target`` in ``project``, set up as each test here sets up its own:
    the corpus and its targets, the conftest noting pytest's pid, ``modules`` (name:
    source) and the variables ``env`` more."""
    project.mkdir(exist_ok=True)
    marker = uuid.uuid4().hex
    project.joinpath("live_process.py").write_text(CORPUS.read_text())
    project.joinpath("targets.py").write_text(TARGETS)
    project.joinpath("conftest.py").write_text(CONFTEST_PID)
    for module, source in (modules or {}).items():
        project.joinpath(f"{module}.py").write_text(source)
    return start_session(
        project,
        *_session_args(target, *extra),
        env={
            "TOOLNEXUS_TEST_RUN": marker,
            "TOOLNEXUS_IMPORTED_IN": str(project / "imported_in.txt"),
            "TOOLNEXUS_PYTEST_PID": str(project / "pytest_pid.txt"),
            **(env or {}),
        },
        timeout=timeout,
        at_end=lambda: processes_marked(marker),
    )


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


def _pids(project: Path) -> tuple[str, list[str]]:
    pytest_pid = (project / "pytest_pid.txt").read_text().strip()
    imported = project / "imported_in.txt"
    lines = imported.read_text().split() if imported.exists() else []
    return pytest_pid, lines


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")


def _start_patching(folder: Path, isolation: str) -> RunningSession:
    return _start(
        folder,
        "patches:tools",
        "--toolnexus-execute",
        "none",
        SELECT,
        "TN1",
        "--toolnexus-isolation",
        isolation,
        modules={"patches": PATCHES_PYTEST},
    )


@early
def patching_runs(folder: Path) -> SessionsByKey[str]:
    """A session on the target that patches pytest at import, by ``--toolnexus-isolation``."""
    return SessionsByKey(folder, _start_patching, ahead=["process", "none"])


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_target_that_patches_pytest_at_import_never_reaches_pytests_process(
    patching_runs: SessionsByKey[str], isolation: str
) -> None:
    result, report, session = _ran(patching_runs.start(isolation))
    pytest_pid, imported_in = _pids(session.path)
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
    _assert_nothing_left(session)


@early
def lingering_run(folder: Path) -> RunningSession:
    """A session on the target whose ``atexit`` hook sleeps for ten minutes."""
    # Were the hook run in pytest's process, the run would outlast this timeout.
    return _start(
        folder,
        "lingers:tools",
        "--toolnexus-execute",
        "none",
        modules={"lingers": SLEEPS_AT_EXIT},
        timeout=120,
    )


def test_an_atexit_hook_of_the_target_never_delays_pytest(lingering_run: RunningSession) -> None:
    result, report, session = _ran(lingering_run)
    assert result.ret == pytest.ExitCode.OK
    pytest_pid, lines = _pids(session.path)
    assert pytest_pid not in lines
    assert verdicts_of(report, "convert_units")["TN101"]["outcome"] == "passed"
    _assert_nothing_left(session)


#: The targets of ``TARGETS`` judged in one session (each tool in a process of its
#: own, a worker restarted when one kills it); each test reads its target's part.
SHARED_TARGETS = ["targets:kills_its_worker", "targets:terms_its_worker", "targets:memory_bomb"]


@dataclass(frozen=True)
class SharedRun:
    """One session on the targets whose tools end the processes they run in.

    ``session`` and ``report`` wait for its end: it mostly waits for its workers to be
    killed and restarted, beside other tests.
    """

    running: RunningSession

    @cached_property
    def session(self) -> Session:
        session = self.running.result()
        assert (session.path / "report.json").exists(), session.text()
        return session

    @cached_property
    def report(self) -> dict[str, Any]:
        return self.session.report()


@early
def shared(folder: Path) -> SharedRun:
    """The set-up of each test here, once, for a session on every ``SHARED_TARGETS``."""
    more = [arg for target in SHARED_TARGETS[1:] for arg in (TARGET, target)]
    return SharedRun(
        _start(
            folder,
            SHARED_TARGETS[0],
            *more,
            "--toolnexus-concurrency",
            "2",
            timeout=240,
        )
    )


def test_the_shared_run_fails_judges_every_target_and_leaves_nothing_running(
    shared: SharedRun,
) -> None:
    """What the ``run`` fixture and each test assert of a whole session, for the shared one."""
    assert shared.session.ret == pytest.ExitCode.TESTS_FAILED, shared.session.text()
    assert {r["target"] for r in shared.report["results"]} == set(SHARED_TARGETS)
    assert not any(r.get("kit_failure") for r in shared.report["results"])
    left = shared.session.at_end
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


#: The credential the leaking tool's session is given (its own, unique to this run).
TOKEN = f"tok-{uuid.uuid4().hex}"


@early
def leaking_run(folder: Path) -> RunningSession:
    """A session on the tool whose error carries a credential of its environment."""
    # Named, so the tool is given it (the rest of the environment never reaches a tool).
    return _start(
        folder,
        "leaks:tools",
        "--junitxml",
        "junit.xml",
        "-rA",
        "--toolnexus-env",
        "MY_SERVICE_TOKEN",
        modules={"leaks": LEAKS_A_TOKEN},
        env={"MY_SERVICE_TOKEN": TOKEN},
    )


def test_a_credential_of_the_environment_is_masked_everywhere_and_is_tn561(
    leaking_run: RunningSession,
) -> None:
    token = TOKEN
    result, report, session = _ran(leaking_run)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    mine = verdicts_of(report, "leaks_token")
    assert mine["TN561"]["outcome"] == "failed", mine["TN561"]
    assert verdicts_of(report, "convert_units")["TN561"]["outcome"] == "passed"
    healthy_judged(report)
    stdout = result.stdout.str() + result.stderr.str()
    assert "service refused token ***" in stdout  # the tool's error is shown, masked
    for shown in (stdout, (session.path / "junit.xml").read_text(), json.dumps(report)):
        assert token not in shown
    _assert_nothing_left(session)


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
