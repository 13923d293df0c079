"""Live checks through real pytest sessions: a hanging tool, a tool that writes files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from _sessions import RunningSession, Session, early, start_session

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, SELECT, TARGET

HOSTILE = '''
import time
from toolnexus_ref import ToolResult


class Hang:
    """A sync tool that sleeps for a day and ignores its context."""

    name = "hang"
    description = "Sleeps for a day."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        time.sleep(86400)
        return ToolResult.ok("never")


class Scribbler:
    """A tool that writes into its working directory."""

    name = "scribbler"
    description = "Writes a file where it runs."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        with open("scribbled.txt", "a") as handle:
            handle.write("x")
        return ToolResult.ok("wrote scribbled.txt")


hang = [Hang()]
scribbler = [Scribbler()]
'''


def _hostile_project(folder: Path) -> Path:
    """``folder`` with the hostile tools' module in it."""
    folder.mkdir()
    folder.joinpath("hostile_tools.py").write_text(HOSTILE)
    return folder


@early
def hanging_run(folder: Path) -> RunningSession:
    """A session on the day-long sleeper: it mostly waits out the call timeout and grace."""
    return start_session(
        _hostile_project(folder / "hang"),
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "hostile_tools:hang",
        SELECT,
        "TN601,TN702,TN803",
        "--toolnexus-execute",
        "all",
        "--toolnexus-grace",
        "0.3",
        "--toolnexus-call-timeout",
        "0.5",
        REPORT,
        "report.json",
        timeout=120,
    )


def test_a_hanging_sync_tool_is_reported_and_pytest_exits_promptly(
    hanging_run: RunningSession,
) -> None:
    session = hanging_run.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The hang is one finding (a warning); the check it kept from judging says so;
    # ignoring the cancel is a finding of its own.
    result.stdout.fnmatch_lines(
        [
            "TN702 cancel-during *",
            "tool:   hang *",
            "found:  the call was cancelled 0.*s in and had not returned 0.3s later*",
            "*",
            "*TN803 call-answers: the call did not return within 0.5s, for arguments {}*",
        ],
        consecutive=False,
    )
    report = json.loads((session.path / "report.json").read_text())
    results = {r["check"]: r for r in report["results"] if r["tool"] == "hang"}
    assert {code: r["outcome"] for code, r in results.items()} == {
        "TN601": "skipped",
        "TN702": "failed",
        "TN803": "failed",
    }
    assert results["TN601"]["message"] == "not judged: the tool did not answer within 0.5s (TN803)"
    # The day-long sleep is still running in its thread when pytest finishes: that the
    # process exits at all (the session's timeout) is what is tested here.


@dataclass(frozen=True)
class ScribblerRun:
    """The scribbler's session, and the project's files before it started."""

    running: RunningSession
    before: set[str]


@early
def scribbler_run(folder: Path) -> ScribblerRun:
    """A session on the tool that writes where it runs."""
    project = _hostile_project(folder / "scribbler")
    before = {p.name for p in project.iterdir()}
    running = start_session(
        project,
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "hostile_tools:scribbler",
        SELECT,
        "TN5,TN6",
        "--toolnexus-execute",
        "all",
        "--toolnexus-examples",
        "3",
        "-p",
        "no:hypothesispytest",
        timeout=120,
    )
    return ScribblerRun(running, before)


def test_a_tool_writing_files_leaves_the_project_untouched(scribbler_run: ScribblerRun) -> None:
    session = scribbler_run.running.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*scribbler*ok*"])
    # pytester's own files (runpytest-0, stdout, stderr) are all that may appear:
    # with the cache off, not even hypothesis's example database.
    new = {p.name for p in session.path.iterdir()} - scribbler_run.before
    assert new <= {"runpytest-0", "runpytest-current", "stdout", "stderr"}, new
    assert not list(session.path.rglob("scribbled.txt"))


PROPERTIES = '''
from toolnexus_ref import ToolResult, tool


class ExitName:
    description = "Its name property calls sys.exit."
    source = "custom"
    input_schema = {"type": "object", "properties": {}}

    @property
    def name(self):
        raise SystemExit(3)

    def execute(self, args, ctx=None):
        return ToolResult.ok("x")


class InterruptingDescription:
    name = "interrupting"
    source = "custom"
    input_schema = {"type": "object", "properties": {}}

    @property
    def description(self):
        raise KeyboardInterrupt

    def execute(self, args, ctx=None):
        return ToolResult.ok("x")


@tool
def healthy(n: int) -> int:
    """Return n."""
    return n


tools = [ExitName(), InterruptingDescription(), healthy]
'''


@early
def properties_run(folder: Path) -> RunningSession:
    """A session on the tools whose properties raise ``SystemExit`` and ``KeyboardInterrupt``."""
    folder.joinpath("hostile_properties.py").write_text(PROPERTIES)
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "hostile_properties:tools",
        SELECT,
        "TN1,TN2,TN601",
        "--toolnexus-execute",
        "all",
        REPORT,
        "report.json",
        timeout=120,
    )


def test_properties_that_raise_system_exit_or_keyboard_interrupt_are_findings(
    properties_run: RunningSession,
) -> None:
    session = properties_run.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "found:  the name cannot be read: reading 'name' raised SystemExit: 3",
            "*",
            "found:  the description cannot be read: reading 'description' raised KeyboardInterrupt*",
        ],
        consecutive=False,
    )
    report = json.loads((session.path / "report.json").read_text())
    outcomes = {(r["tool"], r["check"]): r["outcome"] for r in report["results"]}
    # The run went on: the neighbour is judged, and the hostile tools were called.
    assert outcomes[("healthy", "TN601")] == "passed"
    assert outcomes[("tool[0]", "TN601")] == "passed"
    assert outcomes[("interrupting", "TN201")] == "failed"


NEVER_RETURN = '''
import threading

from toolnexus_ref import ToolResult, tool

NEVER = threading.Event()


class WaitingName:
    description = "Its name property waits on an event nobody sets."
    source = "custom"
    input_schema = {"type": "object", "properties": {}}

    @property
    def name(self):
        NEVER.wait()

    def execute(self, args, ctx=None):
        return ToolResult.ok("x")


class WaitingSchema:
    name = "waiting_schema"
    description = "Its input_schema property waits on an event nobody sets."
    source = "custom"

    @property
    def input_schema(self):
        NEVER.wait()

    def execute(self, args, ctx=None):
        return ToolResult.ok("x")


class SpinningDescription:
    name = "spinning_description"
    source = "custom"
    input_schema = {"type": "object", "properties": {}}

    @property
    def description(self):
        while True:
            pass

    def execute(self, args, ctx=None):
        return ToolResult.ok("x")


@tool
def healthy(n: int) -> int:
    """Return n."""
    return n


tools = [WaitingName(), WaitingSchema(), SpinningDescription(), healthy]
'''


@early
def never_return_run(folder: Path) -> RunningSession:
    """A session on the tools whose properties never return: it mostly waits out the
    bounded reads."""
    folder.joinpath("never_return.py").write_text(NEVER_RETURN)
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "never_return:tools",
        SELECT,
        "TN1,TN2,TN3,TN601",
        "--toolnexus-call-timeout",
        "0.5",
        "--toolnexus-examples",
        "3",
        REPORT,
        "report.json",
        timeout=120,
    )


def test_properties_that_never_return_are_findings_and_the_session_ends(
    never_return_run: RunningSession,
) -> None:
    """Waits nobody ends and a busy loop: each read is bounded by the call timeout (0.5 s here).

    Finding the tools in the module reads no property (the name that never returns
    included); reading the declarations is bounded, the neighbour read on a fresh thread.
    """
    session = never_return_run.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        ["found:  the name cannot be read: reading 'name' did not return within 0.5s"]
    )
    report = json.loads((session.path / "report.json").read_text())
    records = {(r["tool"], r["check"]): r for r in report["results"]}
    found = {
        ("tool[0]", "TN101"): "the name cannot be read: reading 'name' did not return within 0.5s",
        ("waiting_schema", "TN301"): "the input schema cannot be read: reading 'input_schema'"
        " did not return within 0.5s",
        ("spinning_description", "TN201"): "the description cannot be read: reading"
        " 'description' did not return within 0.5s",
    }
    for key, message in found.items():
        assert records[key]["outcome"] == "failed", records[key]
        assert records[key]["message"] == message
    # Nothing after the hung read was read: not its hints either, so it is not called.
    for hostile in ("tool[0]", "waiting_schema", "spinning_description"):
        skipped = records[(hostile, "TN601")]
        assert skipped["outcome"] == "skipped"
        assert "its safety hints cannot be read (they were not read: reading" in skipped["message"]
    # The neighbour, read on a fresh thread, is judged in full, live check included.
    mine = {check: r["outcome"] for (tool, check), r in records.items() if tool == "healthy"}
    assert "TN601" in mine
    assert set(mine.values()) == {"passed"}, mine


ECHO = '''
from toolnexus_ref import tool


@tool
def echo(text: str) -> str:
    """Says the text back."""
    return text
'''


def _start_echo(folder: Path, *depth: str) -> RunningSession:
    """A session on echo's valid stream (TN601) with ``depth``, in ``folder``."""
    folder.mkdir()
    folder.joinpath("echo_tool.py").write_text(ECHO)
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "echo_tool:echo",
        SELECT,
        "TN601",
        "--toolnexus-examples",
        "3",
        "--toolnexus-seed",
        "1",
        REPORT,
        "report.json",
        *depth,
        timeout=120,
    )


def _calls(session: Session) -> int:
    """The calls of echo's valid stream (TN601's record) in ``session``."""
    result = session.run_result()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    report = json.loads((session.path / "report.json").read_text())
    (record,) = [r for r in report["results"] if r["check"] == "TN601"]
    return int(record["calls"])


@dataclass(frozen=True)
class DepthRuns:
    """Echo's sessions at depth 0 and 40, and one given a negative depth."""

    quick: RunningSession
    deeper: RunningSession
    refused: RunningSession


@early
def depth_runs(folder: Path) -> DepthRuns:
    """The depth's sessions, each in a folder of its own."""
    refused = folder / "refused"
    refused.mkdir()
    return DepthRuns(
        quick=_start_echo(folder / "quick", "--toolnexus-depth", "0"),
        deeper=_start_echo(folder / "deeper", "--toolnexus-depth", "40"),
        refused=start_session(refused, CONFORMANCE, ONLY, "--toolnexus-depth", "-1"),
    )


def test_depth_sets_how_many_examples_a_fast_tool_gets_past_the_floor(
    depth_runs: DepthRuns,
) -> None:
    quick = _calls(depth_runs.quick.result())
    deeper = _calls(depth_runs.deeper.result())
    # The floor and the edge values either way; the depth's examples only when asked
    # (distinct ones: hypothesis draws some strings twice and calls them once).
    assert deeper >= quick + 10, (quick, deeper)
    refused = depth_runs.refused.result().run_result()
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--toolnexus-depth must be 0 or more, got -1*"])
