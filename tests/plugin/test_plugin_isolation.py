"""Python targets in a worker process: whatever a tool or its import does, the session goes on.

Each test runs a real pytest session (``runpytest_subprocess``) on the process corpus
(``conformance/corpus/bad/live_process.py``) beside a healthy neighbour, and asserts
what the user gets: a verdict for the hostile tool and for its neighbour, a non-zero
exit status, nothing left running (every process of the run carries a marker in
its environment) and nothing written outside the run's scratch directories.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pytest
from _processes import processes_marked
from _sessions import (
    RunningSession,
    Session,
    early,
    healthy_judged,
    start_session,
    verdicts_of,
)

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, TARGET

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "bad" / "live_process.py"

TARGETS = """
from toolnexus_ref.examples import toolkit

import live_process as corpus

healthy = [t for t in toolkit.tools if t.name == "convert_units"]

exits_zero = [corpus.exits_zero, *healthy]
exits_three = [corpus.exits_three, *healthy]
segfaults = [corpus.segfaults, *healthy]
holds_the_gil = [corpus.holds_the_gil, *healthy]
freezes_the_clock = [corpus.freezes_the_clock, *healthy]
neighbours = corpus.neighbours
leaves_children = [corpus.leaves_children, *healthy]
writes_late = [corpus.writes_late, *healthy]
"""

FAST = ("--toolnexus-call-timeout", "1", "--toolnexus-grace", "0.3", "--toolnexus-examples", "3")


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Run the plugin on a target of ``targets.py``; yields ``(result, report)``.

    Every process of the run inherits ``TOOLNEXUS_TEST_RUN``; after the run none may
    be left, and the run's temporary directory must hold no scratch of the kit's.
    """
    pytester.path.joinpath("live_process.py").write_text(CORPUS.read_text())
    pytester.makepyfile(targets=TARGETS)
    marker = uuid.uuid4().hex
    tmp = pytester.path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TOOLNEXUS_TEST_RUN", marker)
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("TOOLNEXUS_CORPUS_KEY", "present")
    before = set(pytester.path.iterdir())

    def go(target: str, *extra: str) -> tuple[pytest.RunResult, dict[str, Any]]:
        result = pytester.runpytest_subprocess(*_session_args([target], *extra), timeout=120)
        report = json.loads((pytester.path / "report.json").read_text())
        return result, report

    yield go
    _assert_nothing_left(processes_marked(marker), tmp, pytester.path, before)


def _session_args(targets: list[str], *extra: str) -> list[str]:
    """The session's arguments for ``targets`` (``targets.py`` specs), then ``extra``."""
    return [
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        *[arg for target in targets for arg in (TARGET, target)],
        *extra,
        "--toolnexus-execute",
        "all",
        *FAST,
        REPORT,
        "report.json",
        # The processes the kit starts get only the variables named: the marker, and
        # what the corpus reads.
        "--toolnexus-env",
        "TOOLNEXUS_TEST_RUN,TOOLNEXUS_CORPUS_KEY,TOOLNEXUS_CORPUS_LATE",
    ]


def _assert_nothing_left(
    left: list[str],
    tmp: Path,
    project: Path,
    before: set[Path],
    written: frozenset[str] = frozenset(),
) -> None:
    """No process of the run was ``left`` as it ended, no scratch of the kit's is, no file
    in the project but those the project's own conftest is known to have ``written``."""
    assert left == [], f"processes of the run still running: {left}"
    scratch = [p.name for p in tmp.iterdir() if p.name.startswith("toolnexus-")]
    assert scratch == [], f"scratch left in the run's temp dir: {scratch}"
    # pytester's own: the subprocess's basetemp and its captured output.
    new = {
        p.name
        for p in set(project.iterdir()) - before
        if not p.name.startswith("runpytest") and p.suffix != ".py"  # the tests' own modules
    }
    assert new <= {"report.json", "stdout", "stderr", "__pycache__", *written}, new


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")


#: The targets of ``targets.py`` that need no session of their own: one session judges
#: them all (each target has its own worker, each tool its own process), and each test
#: below reads its target's part of the report.
SHARED_TARGETS = [
    "targets:exits_zero",
    "targets:exits_three",
    "targets:segfaults",
    "targets:holds_the_gil",
    "targets:freezes_the_clock",
    "targets:neighbours",
    "targets:leaves_children",
    "targets:writes_late",
]


@dataclass(frozen=True)
class SharedRun:
    """The shared session, still running or ended, and what the checks after it need.

    ``session`` and ``report`` wait for its end: it runs beside the module's other
    tests (``early``), and only the tests that read it wait for it.
    """

    running: RunningSession
    project: Path
    marker: str
    tmp: Path
    before: set[Path]

    @cached_property
    def session(self) -> Session:
        session = self.running.result()
        assert (self.project / "report.json").exists(), session.text()
        return session

    @cached_property
    def report(self) -> dict[str, Any]:
        return self.session.report()

    def assert_nothing_left(self, written: frozenset[str] = frozenset()) -> None:
        """What the ``run`` fixture asserts after each of its sessions, for this one."""
        # The run's processes still running as it ended (``at_end``): one left behind may
        # end on its own before a test reads the session.
        left = self.session.at_end
        _assert_nothing_left(left, self.tmp, self.session.path, self.before, written)


def _start_shared(
    project: Path,
    targets: list[str],
    *extra: str,
    modules: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> SharedRun:
    """One session on ``targets`` in ``project``, set up as the ``run`` fixture sets up its own.

    ``modules`` are more target modules (name: source); ``env`` more variables. The
    session mostly waits (hung calls, frozen tools): started early (``early``), it runs
    beside other tests.
    """
    project.joinpath("live_process.py").write_text(CORPUS.read_text())
    project.joinpath("targets.py").write_text(TARGETS)
    for module, source in (modules or {}).items():
        project.joinpath(f"{module}.py").write_text(source)
    tmp = project / "tmp"
    tmp.mkdir()
    marker = uuid.uuid4().hex
    before = set(project.iterdir())
    running = start_session(
        project,
        *_session_args(targets, *extra),
        env={
            "TOOLNEXUS_TEST_RUN": marker,
            "TMPDIR": str(tmp),
            "TOOLNEXUS_CORPUS_KEY": "present",
            **(env or {}),
        },
        timeout=240,
        at_end=lambda: processes_marked(marker),
    )
    return SharedRun(running, project, marker, tmp, before)


@early
def shared(folder: Path) -> SharedRun:
    # writes_late sleeps past the 1 s call timeout, then writes (no other tool reads it).
    return _start_shared(
        folder,
        SHARED_TARGETS,
        env={"TOOLNEXUS_CORPUS_LATE": "1.5"},
    )


def test_the_shared_run_fails_and_leaves_nothing_behind(shared: SharedRun) -> None:
    """What the ``run`` fixture asserts after each of its sessions, for the shared one."""
    assert shared.session.ret == pytest.ExitCode.TESTS_FAILED, shared.session.text()
    shared.assert_nothing_left()


@pytest.mark.parametrize(
    ("target", "tool", "says"),
    [
        ("targets:exits_zero", "exits_zero", "the tool ended its process (exit status 0)"),
        ("targets:exits_three", "exits_three", "the tool ended its process (exit status 3)"),
        ("targets:segfaults", "segfaults", "the tool ended its process (killed by SIGSEGV)"),
        ("targets:holds_the_gil", "holds_the_gil", "the tool froze its process"),
        ("targets:freezes_the_clock", "freezes_the_clock", "stopped making progress"),
    ],
)
def test_a_tool_that_ends_or_freezes_its_process_is_a_finding_and_the_run_goes_on(
    shared: SharedRun, target: str, tool: str, says: str
) -> None:
    verdicts = verdicts_of(shared.report, tool, target)
    assert verdicts["TN606"]["outcome"] == "failed"
    assert says in verdicts["TN606"]["message"]
    assert verdicts["TN601"]["outcome"] == "skipped"
    assert "(TN606)" in verdicts["TN601"]["message"]
    healthy_judged(shared.report, target)
    # Its own item failed the run (never green by accident; the run's status is one).
    shared.session.stdout.fnmatch_lines([f"*FAILED*{target}::{tool}::TN606-call-keeps-process*"])


def test_exit_status_three_shows_the_tools_own_output(shared: SharedRun) -> None:
    assert "giving up" in verdicts_of(shared.report, "exits_three")["TN606"]["message"]


def test_a_tool_that_removes_a_variable_does_not_fail_its_neighbour(shared: SharedRun) -> None:
    needs = verdicts_of(shared.report, "needs_the_variable")
    for code in ("TN601", "TN602", "TN603"):
        assert needs[code]["outcome"] == "passed", needs[code]


def test_processes_a_tool_starts_end_with_its_process(shared: SharedRun) -> None:
    assert verdicts_of(shared.report, "leaves_children")["TN601"]["outcome"] == "passed"
    healthy_judged(shared.report, "targets:leaves_children")
    # and test_the_shared_run_fails_and_leaves_nothing_behind: no ``sleep`` is left running


def test_a_write_after_the_call_was_abandoned_lands_in_scratch(shared: SharedRun) -> None:
    assert verdicts_of(shared.report, "writes_late")["TN803"]["outcome"] == "failed"
    # The abandoned call sleeps, then writes: no process of the run is left to write later.
    assert processes_marked(shared.marker) == []
    assert not (shared.session.path / "config.json").exists()


IMPORTS = {
    "exits_at_import": "import os\nos._exit(0)\n",
    "raises_systemexit_at_import": "raise SystemExit(4)\n",
    "hangs_at_import": "import threading\nthreading.Event().wait()\n",
}


@early
def broken_imports(folder: Path) -> SharedRun:
    """One session on the three broken imports and a healthy target beside them."""
    return _start_shared(
        folder,
        [*(f"{module}:tools" for module in IMPORTS), "targets:leaves_children"],
        "--toolnexus-load-timeout",
        "5",  # the other target's worker starts in a sandbox, on a busy machine
        modules={module: source + "tools = []\n" for module, source in IMPORTS.items()},
    )


def test_the_broken_imports_run_fails_and_leaves_nothing_behind(
    broken_imports: SharedRun,
) -> None:
    assert broken_imports.session.ret == pytest.ExitCode.TESTS_FAILED
    broken_imports.assert_nothing_left()


@pytest.mark.parametrize(
    ("module", "says"),
    [
        ("exits_at_import", "ended the process that imported it (exit status 0)"),
        ("raises_systemexit_at_import", "raised SystemExit: 4"),
        ("hangs_at_import", "took longer than 5s"),
    ],
)
def test_a_target_whose_import_ends_or_hangs_fails_alone(
    broken_imports: SharedRun, module: str, says: str
) -> None:
    report = broken_imports.report
    load = [
        r for r in report["results"] if r["check"] == "TN001" and r["target"] == f"{module}:tools"
    ]
    assert load
    assert load[0]["outcome"] == "failed"
    assert says in load[0]["message"]
    healthy_judged(report, "targets:leaves_children")  # the other target is judged


def test_isolation_none_keeps_calls_in_process(foreign_none: SharedRun) -> None:
    verdicts = verdicts_of(foreign_none.report, "removes_a_variable")
    assert verdicts["TN606"]["outcome"] == "skipped"
    assert "worker process" in verdicts["TN606"]["message"]


TAMPERS = """
from toolnexus_conformance import _runner
from toolnexus_conformance._model import Outcome, Verdict

from live_process import exits_zero


def _always_passes(check, subject, options, **kwargs):
    return Verdict(subject.target, "*", check.info, Outcome.PASSED)


_runner.run_check = _always_passes
tools = [exits_zero]
"""


BLOCKER = """
import time

from toolnexus_ref import ToolResult


class BlocksTheLoop:
    name = "blocks_the_loop"
    description = "An async tool that never awaits: it stops the event loop it runs on."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    async def execute(self, args, ctx=None):
        time.sleep(30)
        return ToolResult.ok("late")


tools = [BlocksTheLoop()]
"""

WHERE_AT_THE_END = """
import os


def pytest_sessionfinish(session):
    with open(os.path.join(str(session.config.rootpath), "cwd-at-end.txt"), "w") as out:
        out.write(os.getcwd())
"""
#: The file ``WHERE_AT_THE_END`` writes in the project.
CWD_AT_THE_END = "cwd-at-end.txt"


def _start_foreign(project: Path, isolation: str, *modules: str) -> SharedRun:
    """One session under ``--toolnexus-isolation ISOLATION`` on the ``tools`` of
    ``modules`` (``tampers``: a target that replaces the kit's code; ``blocker``: one
    whose tool blocks the event loop), then on the neighbours."""
    (project / "conftest.py").write_text(WHERE_AT_THE_END)
    sources = {"tampers": TAMPERS, "blocker": BLOCKER}
    return _start_shared(
        project,
        [*(f"{module}:tools" for module in modules), "targets:neighbours"],
        "--toolnexus-isolation",
        isolation,
        modules={module: sources[module] for module in modules},
    )


@early
def foreign_process(folder: Path) -> SharedRun:
    """Each target in a worker of its own: one session holds them all."""
    return _start_foreign(folder, "process", "tampers", "blocker")


@early
def foreign_none(folder: Path) -> SharedRun:
    return _start_foreign(folder, "none", "tampers")


@early
def blocker_none(folder: Path) -> SharedRun:
    """A session of its own: in pytest's process, a tool blocking the loop leaves the
    other targets' calls after it unjudged (an earlier call blocked the event loop)."""
    return _start_foreign(folder, "none", "blocker")


@pytest.fixture
def foreign(
    foreign_process: SharedRun, foreign_none: SharedRun, blocker_none: SharedRun
) -> dict[str, SharedRun]:
    """The sessions above by name: each starts early (``early``), and a test waits only
    for the one it reads."""
    return {
        "foreign_process": foreign_process,
        "foreign_none": foreign_none,
        "blocker_none": blocker_none,
    }


#: The sessions of a tampering target and of a blocking tool, by isolation.
TAMPERING = {"process": "foreign_process", "none": "foreign_none"}
BLOCKING = {"process": "foreign_process", "none": "blocker_none"}


@pytest.mark.parametrize("name", ["foreign_process", "foreign_none", "blocker_none"])
def test_the_foreign_runs_fail_and_leave_nothing_behind(
    foreign: dict[str, SharedRun], name: str
) -> None:
    """What the ``run`` fixture asserts after each of its sessions, for these."""
    run = foreign[name]
    assert run.session.ret == pytest.ExitCode.TESTS_FAILED, run.session.text()
    run.assert_nothing_left(frozenset({CWD_AT_THE_END}))


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_target_that_replaces_the_kits_code_is_not_judged(
    foreign: dict[str, SharedRun], isolation: str
) -> None:
    run = foreign[TAMPERING[isolation]]
    assert run.session.ret == pytest.ExitCode.TESTS_FAILED
    load = [r for r in run.report["results"] if r["target"] == "tampers:tools"]
    assert [r["check"] for r in load] == ["TN001"]
    assert (
        "replaced the kit's own code (toolnexus_conformance._runner.run_check)"
        in (load[0]["message"])
    )
    # The code was put back: the next target is judged by the real checks.
    removes = verdicts_of(run.report, "removes_a_variable")
    assert removes["TN701"]["outcome"] == "failed"


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_tool_blocking_the_loop_leaves_the_session_where_it_was(
    foreign: dict[str, SharedRun], isolation: str
) -> None:
    run = foreign[BLOCKING[isolation]]
    assert run.session.ret == pytest.ExitCode.TESTS_FAILED
    assert verdicts_of(run.report, "blocks_the_loop")["TN501"]["outcome"] == "failed"
    assert (run.project / CWD_AT_THE_END).read_text() == str(run.project)


SLOW = """
import time
from pathlib import Path

from toolnexus_ref import ToolResult


class Slow:
    name = "slow"
    description = "Says it started, then takes a minute to answer."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        Path("started").touch()  # in its scratch: the one folder it may write
        time.sleep(60)
        return ToolResult.ok("late")


tools = [Slow()]
"""


def test_a_session_killed_outright_leaves_no_worker_behind(
    run: Any, pytester: pytest.Pytester
) -> None:
    """SIGKILL gives pytest no chance to clean up: the worker sees its session gone."""
    import signal
    import subprocess
    import sys

    pytester.makepyfile(slow=SLOW)
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
            "slow:tools",
            "--toolnexus-execute",
            "all",
            "--toolnexus-env",
            "TOOLNEXUS_TEST_RUN",
        ],
        cwd=pytester.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def started() -> bool:
        return any((pytester.path / "tmp").glob("toolnexus-worker-*/tool-*/**/started"))

    deadline = time.monotonic() + 60
    while not started() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started(), "the tool was never called"
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    # The fixture then asserts that no process of the run is left (it waits up to 5 s:
    # the worker looks for its session once a second) and that no scratch remains.


def test_without_fork_the_run_says_tools_are_called_in_process(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "fork")
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "toolnexus_ref.examples:toolkit",
        "--toolnexus-select",
        "TN606",
        "-rs",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*no os.fork*called in pytest's own process*"])
