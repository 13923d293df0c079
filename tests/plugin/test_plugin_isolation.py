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
from pathlib import Path
from typing import Any

import pytest

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
        result = pytester.runpytest_subprocess(
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
            # The processes the kit starts get only the variables named: the marker, and
            # what the corpus reads.
            "--toolnexus-env",
            "TOOLNEXUS_TEST_RUN,TOOLNEXUS_CORPUS_KEY,TOOLNEXUS_CORPUS_LATE",
            *extra,
            timeout=120,
        )
        report = json.loads((pytester.path / "report.json").read_text())
        return result, report

    yield go
    left = _processes_marked(marker)
    assert left == [], f"processes of the run still running: {left}"
    scratch = [p.name for p in tmp.iterdir() if p.name.startswith("toolnexus-")]
    assert scratch == [], f"scratch left in the run's temp dir: {scratch}"
    # pytester's own: the subprocess's basetemp and its captured output.
    new = {
        p.name
        for p in set(pytester.path.iterdir()) - before
        if not p.name.startswith("runpytest") and p.suffix != ".py"  # the tests' own modules
    }
    assert new <= {"report.json", "stdout", "stderr", "__pycache__"}, new


def _processes_marked(marker: str) -> list[str]:
    """Command lines of the processes whose environment carries ``marker`` (Linux /proc)."""
    needle = f"TOOLNEXUS_TEST_RUN={marker}".encode()
    found = []
    deadline = time.monotonic() + 5.0  # a killed process may take a moment to be reaped
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or entry.name == str(os.getpid()):
                continue
            try:
                if needle in (entry / "environ").read_bytes():
                    status = (entry / "status").read_text()
                    if "\nState:\tZ" in status:
                        continue  # a zombie is gone already; its parent reaps it
                    found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _verdicts(report: dict[str, Any], tool: str) -> dict[str, dict[str, Any]]:
    return {r["check"]: r for r in report["results"] if r["tool"] == tool}


def _healthy_judged(report: dict[str, Any]) -> None:
    mine = _verdicts(report, "convert_units")
    assert mine, "the healthy neighbour got no verdicts"
    assert mine["TN601"]["outcome"] == "passed", mine["TN601"]
    assert mine["TN601"]["calls"] > 0  # counted in the tool's process, carried back
    assert all(r["outcome"] != "failed" for r in mine.values()), mine


pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")


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
    run: Any, target: str, tool: str, says: str
) -> None:
    result, report = run(target)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # never green by accident
    verdicts = _verdicts(report, tool)
    assert verdicts["TN606"]["outcome"] == "failed"
    assert says in verdicts["TN606"]["message"]
    assert verdicts["TN601"]["outcome"] == "skipped"
    assert "(TN606)" in verdicts["TN601"]["message"]
    _healthy_judged(report)
    result.stdout.fnmatch_lines(["*FAILED*TN606-call-keeps-process*"])


def test_exit_status_three_shows_the_tools_own_output(run: Any) -> None:
    _, report = run("targets:exits_three")
    assert "giving up" in _verdicts(report, "exits_three")["TN606"]["message"]


def test_a_tool_that_removes_a_variable_does_not_fail_its_neighbour(run: Any) -> None:
    _, report = run("targets:neighbours")
    needs = _verdicts(report, "needs_the_variable")
    for code in ("TN601", "TN602", "TN603"):
        assert needs[code]["outcome"] == "passed", needs[code]


def test_processes_a_tool_starts_end_with_its_process(run: Any) -> None:
    _result, report = run("targets:leaves_children")
    assert _verdicts(report, "leaves_children")["TN601"]["outcome"] == "passed"
    _healthy_judged(report)  # and the fixture asserts no ``sleep`` is left running


def test_a_write_after_the_call_was_abandoned_lands_in_scratch(
    run: Any, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLNEXUS_CORPUS_LATE", "1.5")  # past the 1 s call timeout
    _, report = run("targets:writes_late")
    assert _verdicts(report, "writes_late")["TN803"]["outcome"] == "failed"
    time.sleep(2.0)  # long enough for an abandoned call to have written, had it survived
    assert not (pytester.path / "config.json").exists()


IMPORTS = {
    "exits_at_import": "import os\nos._exit(0)\n",
    "raises_systemexit_at_import": "raise SystemExit(4)\n",
    "hangs_at_import": "import threading\nthreading.Event().wait()\n",
}


@pytest.mark.parametrize(
    ("module", "says"),
    [
        ("exits_at_import", "ended the process that imported it (exit status 0)"),
        ("raises_systemexit_at_import", "raised SystemExit: 4"),
        ("hangs_at_import", "took longer than 5s"),
    ],
)
def test_a_target_whose_import_ends_or_hangs_fails_alone(
    run: Any, pytester: pytest.Pytester, module: str, says: str
) -> None:
    pytester.makepyfile(**{module: IMPORTS[module] + "tools = []\n"})
    result, report = run(
        f"{module}:tools",
        TARGET,
        "targets:leaves_children",
        "--toolnexus-load-timeout",
        "5",  # the other target's worker starts in a sandbox, on a busy machine
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    load = [
        r for r in report["results"] if r["check"] == "TN001" and r["target"] == f"{module}:tools"
    ]
    assert load
    assert load[0]["outcome"] == "failed"
    assert says in load[0]["message"]
    _healthy_judged(report)  # the other target is judged


def test_isolation_none_keeps_calls_in_process(run: Any) -> None:
    _, report = run("targets:neighbours", "--toolnexus-isolation", "none")
    verdicts = _verdicts(report, "removes_a_variable")
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


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_target_that_replaces_the_kits_code_is_not_judged(
    run: Any, pytester: pytest.Pytester, isolation: str
) -> None:
    pytester.makepyfile(tampers=TAMPERS)
    result, report = run(
        "tampers:tools", TARGET, "targets:neighbours", "--toolnexus-isolation", isolation
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    load = [r for r in report["results"] if r["target"] == "tampers:tools"]
    assert [r["check"] for r in load] == ["TN001"]
    assert (
        "replaced the kit's own code (toolnexus_conformance._runner.run_check)"
        in (load[0]["message"])
    )
    # The code was put back: the next target is judged by the real checks.
    removes = _verdicts(report, "removes_a_variable")
    assert removes["TN701"]["outcome"] == "failed"


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


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_a_tool_blocking_the_loop_leaves_the_session_where_it_was(
    run: Any, pytester: pytest.Pytester, isolation: str
) -> None:
    pytester.makepyfile(blocker=BLOCKER)
    pytester.makeconftest(WHERE_AT_THE_END)
    result, report = run(
        "blocker:tools", TARGET, "targets:neighbours", "--toolnexus-isolation", isolation
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert _verdicts(report, "blocks_the_loop")["TN501"]["outcome"] == "failed"
    assert (pytester.path / "cwd-at-end.txt").read_text() == str(pytester.path)
    (pytester.path / "cwd-at-end.txt").unlink()


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
