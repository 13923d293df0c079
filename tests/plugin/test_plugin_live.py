"""Live checks through real pytest sessions: a hanging tool, a tool that writes files."""

from __future__ import annotations

import json

import pytest

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


@pytest.fixture
def hostile(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(hostile_tools=HOSTILE)
    return pytester


def test_a_hanging_sync_tool_is_reported_and_pytest_exits_promptly(
    hostile: pytest.Pytester,
) -> None:
    result = hostile.runpytest_subprocess(
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
    report = json.loads((hostile.path / "report.json").read_text())
    results = {r["check"]: r for r in report["results"] if r["tool"] == "hang"}
    assert {code: r["outcome"] for code, r in results.items()} == {
        "TN601": "skipped",
        "TN702": "failed",
        "TN803": "failed",
    }
    assert results["TN601"]["message"] == "not judged: the tool did not answer within 0.5s (TN803)"
    # The day-long sleep is still running in its thread when pytest finishes: that the
    # process exits at all (runpytest_subprocess's timeout) is what is tested here.


def test_a_tool_writing_files_leaves_the_project_untouched(hostile: pytest.Pytester) -> None:
    before = {p.name for p in hostile.path.iterdir()}
    result = hostile.runpytest_subprocess(
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
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*scribbler*ok*"])
    # pytester's own files (runpytest-0, stdout, stderr) are all that may appear:
    # with the cache off, not even hypothesis's example database.
    new = {p.name for p in hostile.path.iterdir()} - before
    assert new <= {"runpytest-0", "runpytest-current", "stdout", "stderr"}, new
    assert not list(hostile.path.rglob("scribbled.txt"))


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


def test_properties_that_raise_system_exit_or_keyboard_interrupt_are_findings(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(hostile_properties=PROPERTIES)
    result = pytester.runpytest_subprocess(
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
    report = json.loads((pytester.path / "report.json").read_text())
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


def test_properties_that_never_return_are_findings_and_the_session_ends(
    pytester: pytest.Pytester,
) -> None:
    """Waits nobody ends and a busy loop: each read is bounded by the call timeout (0.5 s here).

    Finding the tools in the module reads no property (the name that never returns
    included); reading the declarations is bounded, the neighbour read on a fresh thread.
    """
    pytester.makepyfile(never_return=NEVER_RETURN)
    result = pytester.runpytest_subprocess(
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
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        ["found:  the name cannot be read: reading 'name' did not return within 0.5s"]
    )
    report = json.loads((pytester.path / "report.json").read_text())
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


def _calls(pytester: pytest.Pytester, *depth: str) -> int:
    """The calls of echo's valid stream (TN601's record) in a session with ``depth``."""
    result = pytester.runpytest_subprocess(
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
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    report = json.loads((pytester.path / "report.json").read_text())
    (record,) = [r for r in report["results"] if r["check"] == "TN601"]
    return int(record["calls"])


def test_depth_sets_how_many_examples_a_fast_tool_gets_past_the_floor(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(echo_tool=ECHO)
    quick = _calls(pytester, "--toolnexus-depth", "0")
    deeper = _calls(pytester, "--toolnexus-depth", "40")
    # The floor and the edge values either way; the depth's examples only when asked
    # (distinct ones: hypothesis draws some strings twice and calls them once).
    assert deeper >= quick + 10, (quick, deeper)
    refused = pytester.runpytest_subprocess(CONFORMANCE, ONLY, "--toolnexus-depth", "-1")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*--toolnexus-depth must be 0 or more, got -1*"])
