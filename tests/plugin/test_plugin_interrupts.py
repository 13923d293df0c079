"""Interrupted and incomplete runs say so: in the report, the terminal and the exit status.

The signals are real: a pytest subprocess is started, the test waits for the marker
file a tool writes when it is called, and only then sends SIGTERM or SIGINT, so the
signal lands mid-call every time without sleeping for it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _processes import alive
from _sessions import RunningSession, early, start_session

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, SELECT, TARGET

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

#: A target of two tools declared in conftest; ``waiter`` writes ``started`` when it is
#: called and then waits (at most a minute) for a ``release`` file that never comes.
WAITING = '''
import os
import signal
import time
from pathlib import Path

from toolnexus_ref import ToolResult, tool

HERE = Path(__file__).resolve().parent
{extra}

class Waiter:
    name = "waiter"
    description = "Writes a marker, then waits for a release file."
    source = "custom"
    input_schema = {{"type": "object", "properties": {{}}, "additionalProperties": False}}

    def execute(self, args, ctx=None):
        (HERE / "started").touch()
        end = time.monotonic() + 60
        while not (HERE / "release").exists() and time.monotonic() < end:
            time.sleep(0.05)
        return ToolResult.ok("released")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def pytest_toolnexus_targets(config):
    return [[add, Waiter()]]
'''

#: A shell starts a background job with SIGINT ignored, and Python then installs no
#: SIGINT handler at all; a terminal's Ctrl-C has one, so the run is given one.
SIGINT_AS_AT_A_TERMINAL = "signal.signal(signal.SIGINT, signal.default_int_handler)"

#: A project's own SIGTERM handler, which must win over the plugin's.
USER_HANDLER = """
def _on_sigterm(signum, frame):
    (HERE / "user-handler-ran").write_text("yes")
    os._exit(7)


signal.signal(signal.SIGTERM, _on_sigterm)
"""

ARGS = (
    "-p",
    "no:cacheprovider",
    CONFORMANCE,
    ONLY,
    "--toolnexus-execute",
    "all",
    SELECT,
    "TN1,TN601",
    "--toolnexus-call-timeout",
    "30",  # the waiter must still be in its call when the signal comes
    # ``add`` is explored to the end before ``waiter`` is called. A search that has
    # just begun parses modules in its thread (hypothesis collects their constants),
    # and CPython 3.11 keeps the ast module's recursion depth per interpreter, not per
    # thread: pytest parsing sources to render the interrupt at that moment can fail
    # with "SystemError: AST constructor recursion depth mismatch".
    "--toolnexus-concurrency",
    "1",
    REPORT,
    "report.json",
)

#: Bounds on waiting, never asserted: a loaded machine may take its time.
MARKER_WAIT = 90.0
EXIT_WAIT = 90.0


def _start(pytester: pytest.Pytester, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """``python -m pytest`` in ``pytester.path``, its temp dir ``tmp`` there, output to a file."""
    tmp = pytester.path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, TMPDIR=str(tmp))
    out = pytester.path / "out.txt"
    with out.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "pytest", *args],
            cwd=pytester.path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    return process, out


def _signal_when_called(
    pytester: pytest.Pytester, process: subprocess.Popen[bytes], out: Path, signum: int
) -> int:
    """Send ``signum`` once the tool has written its marker; the exit status."""
    marker = pytester.path / "started"
    end = time.monotonic() + MARKER_WAIT
    while not marker.exists():
        if process.poll() is not None or time.monotonic() > end:
            process.kill()
            process.wait()
            pytest.fail(f"the tool was never called:\n{out.read_text()}")
        time.sleep(0.02)
    process.send_signal(signum)
    try:
        return process.wait(EXIT_WAIT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"pytest did not exit after the signal:\n{out.read_text()}")


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((pytester.path / "report.json").read_text())
    return report


def _assert_interrupted(pytester: pytest.Pytester, out: Path, interrupted: str) -> None:
    text = out.read_text()
    report = _report(pytester)
    assert report["complete"] is False
    assert report["interrupted"] == interrupted
    not_judged = report["not_judged"]
    # The call in flight, and everything after it, got no verdict.
    assert "toolnexus:list::waiter::TN601-valid-args-no-raise" in not_judged
    assert "toolnexus:list::add::TN101-name-is-string" not in not_judged
    judged = {(r["tool"], r["check"]) for r in report["results"]}
    assert ("add", "TN101") in judged
    assert not any(r["tool"] == "waiter" and r["check"] == "TN601" for r in report["results"])
    assert f"INTERRUPTED ({interrupted}): {len(not_judged)} of " in text, text
    assert "  toolnexus:list::waiter::TN601-valid-args-no-raise" in text
    assert "report written to report.json" in text
    assert not list((pytester.path / "tmp").glob("toolnexus-scratch-*"))


def test_sigterm_mid_call_reports_an_interrupted_run_and_cleans_up(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(WAITING.format(extra=""))
    process, out = _start(pytester, *ARGS)
    status = _signal_when_called(pytester, process, out, signal.SIGTERM)
    assert status == pytest.ExitCode.INTERRUPTED, out.read_text()
    _assert_interrupted(pytester, out, "SIGTERM")
    assert "KeyboardInterrupt: SIGTERM" in out.read_text()


def test_sigint_mid_call_reports_an_interrupted_run_and_cleans_up(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(WAITING.format(extra=SIGINT_AS_AT_A_TERMINAL))
    process, out = _start(pytester, *ARGS)
    status = _signal_when_called(pytester, process, out, signal.SIGINT)
    assert status == pytest.ExitCode.INTERRUPTED, out.read_text()
    _assert_interrupted(pytester, out, "KeyboardInterrupt")


def test_a_projects_own_sigterm_handler_is_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(WAITING.format(extra=USER_HANDLER))
    process, out = _start(pytester, *ARGS)
    status = _signal_when_called(pytester, process, out, signal.SIGTERM)
    assert status == 7, out.read_text()
    assert (pytester.path / "user-handler-ran").read_text() == "yes"


#: A stdio MCP server whose tool starts a helper process, writes its pid and the
#: server's, writes the marker and then waits: the helper lives in the server's
#: process group, so only a close that ends the whole group ends it.
BLOCKING_SERVER = '''
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer

HERE = Path(__file__).resolve().parent
server = MCPServer("blocker")


@server.tool()
def block() -> str:
    """Start a helper process, then wait for a release file."""
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    (HERE / "pids").write_text(f"{os.getpid()} {helper.pid}")
    (HERE / "started").touch()
    end = time.monotonic() + 60
    while not (HERE / "release").exists() and time.monotonic() < end:
        time.sleep(0.05)
    return "released"


if __name__ == "__main__":
    server.run()
'''


def test_sigterm_mid_call_ends_an_mcp_servers_whole_process_group(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("mcp")
    pytester.makepyfile(blocking_server=BLOCKING_SERVER)
    target = f"stdio:{sys.executable} blocking_server.py"
    # Uncontained, so that the server can say its process ids in the project; this is
    # about the kill of its process group, which the sandbox's namespace only widens.
    process, out = _start(pytester, *ARGS, TARGET, target, "--toolnexus-sandbox", "off")
    status = _signal_when_called(pytester, process, out, signal.SIGTERM)
    assert status == pytest.ExitCode.INTERRUPTED, out.read_text()
    server, helper = (int(p) for p in (pytester.path / "pids").read_text().split())
    end = time.monotonic() + 10  # SIGKILL is sent before pytest exits; the kernel may lag
    while (alive(server) or alive(helper)) and time.monotonic() < end:
        time.sleep(0.02)
    assert not alive(helper), out.read_text()
    assert not alive(server), out.read_text()
    report = _report(pytester)
    assert report["interrupted"] == "SIGTERM"
    assert any("blocker_block::TN601" in nodeid for nodeid in report["not_judged"])
    assert not list((pytester.path / "tmp").glob("toolnexus-scratch-*"))


#: Two tools, and a conftest that ends the xdist worker running ``echo``'s TN102.
CRASHING = '''
import os

from toolnexus_ref import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


def pytest_toolnexus_targets(config):
    return [[add, echo]]


def pytest_runtest_call(item):
    if "::echo::TN102" in item.nodeid:
        os._exit(1)
'''


@early
def crashed_worker_run(folder: Path) -> RunningSession:
    """The run whose xdist worker the conftest ends: its files and arguments are fixed,
    and only its end is read, so it starts early and runs while other tests do."""
    (folder / "conftest.py").write_text(CRASHING)
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        SELECT,
        "TN1",
        REPORT,
        "report.json",
        "-n",
        "2",
        "--max-worker-restart",
        "0",
        timeout=120,
    )


def test_a_crashed_xdist_worker_leaves_its_items_not_judged(
    crashed_worker_run: RunningSession,
) -> None:
    pytest.importorskip("xdist")
    session = crashed_worker_run.result()
    result = session.run_result()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = session.report()
    assert report["complete"] is False
    assert report["interrupted"].startswith("an xdist worker crashed: gw")
    crashed = "toolnexus:list::echo::TN102-name-charset"
    assert crashed in report["not_judged"]
    assert not any(r["tool"] == "echo" and r["check"] == "TN102" for r in report["results"])
    result.stdout.fnmatch_lines(
        ["INTERRUPTED (an xdist worker crashed: gw*): * conformance items were not judged*"]
    )
    result.stdout.fnmatch_lines(["not judged:", f"  {crashed}"], consecutive=False)


TWO_TOOLS = '''
from toolnexus_ref import BaseTool, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Misnamed(BaseTool):
    name = "bad tool"
    description = "A name with a space in it."
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def run(self, args, ctx):
        return "ok"


def pytest_toolnexus_targets(config):
    return [[add, Misnamed()]]
'''

STATIC = ("-p", "no:cacheprovider", CONFORMANCE, ONLY, SELECT, "TN1", REPORT, "report.json")


@pytest.mark.parametrize(
    "extra",
    [(), ("-k", "add"), ("--deselect", "toolnexus:list::bad tool::TN102-name-charset")],
    ids=["all", "keyword", "deselect"],
)
def test_a_complete_run_says_so(pytester: pytest.Pytester, extra: tuple[str, ...]) -> None:
    pytester.makeconftest(TWO_TOOLS)
    result = pytester.runpytest(*STATIC, *extra)
    report = _report(pytester)
    assert report["complete"] is True
    assert report["interrupted"] is None
    assert report["not_judged"] == []
    assert list(report)[:4] == ["version", "complete", "interrupted", "not_judged"]
    assert "INTERRUPTED" not in result.stdout.str()
    assert "INCOMPLETE" not in result.stdout.str()
    # Items deselected were never meant to run: the status is pytest's own.
    expected = pytest.ExitCode.OK if extra else pytest.ExitCode.TESTS_FAILED
    assert result.ret == expected


def test_stopping_at_the_first_failure_reports_what_was_not_judged(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(TWO_TOOLS)
    result = pytester.runpytest(*STATIC, "-x")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # pytest's own, kept
    report = _report(pytester)
    assert report["complete"] is False
    assert report["interrupted"] is None
    assert report["not_judged"] == [
        "toolnexus:list::bad tool::TN103-name-length",
        "toolnexus:list::bad tool::TN104-name-unique",
        "toolnexus:list::bad tool::TN105-source-known",
    ]
    result.stdout.fnmatch_lines(
        [
            "INCOMPLETE (pytest stopped early: stopping after 1 failures):"
            " 3 of 10 conformance items were not judged*",
        ]
    )
    assert "the exit status is 1" not in result.stdout.str()


#: A plugin that takes over ``bad tool``'s items and never runs them.
SWALLOWING = """
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    return True if "bad tool" in item.nodeid else None
"""


def test_items_that_ran_all_passing_but_not_all_judged_fail_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(TWO_TOOLS + SWALLOWING)
    result = pytester.runpytest(*STATIC)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = _report(pytester)
    assert report["complete"] is False
    assert report["interrupted"] is None
    assert len(report["not_judged"]) == 5
    assert report["summary"]["failed"] == 0
    result.stdout.fnmatch_lines(
        [
            "INCOMPLETE: 5 of 10 conformance items were not judged*",
            "the exit status is 1 (tests failed)*",
            "not judged:",
            "  toolnexus:list::bad tool::TN101-name-is-string",
        ]
    )


def test_items_skipped_by_the_project_are_not_missing(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        TWO_TOOLS
        + """
import pytest


def pytest_runtest_setup(item):
    if "bad tool" in item.nodeid:
        pytest.skip("known bad")
"""
    )
    result = pytester.runpytest(*STATIC)
    assert result.ret == pytest.ExitCode.OK
    report = _report(pytester)
    assert (report["complete"], report["not_judged"]) == (True, [])


def test_collect_only_judges_nothing_and_misses_nothing(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(TWO_TOOLS)
    result = pytester.runpytest(*STATIC, "--collect-only")
    assert result.ret == pytest.ExitCode.OK
    report = _report(pytester)
    assert (report["complete"], report["not_judged"]) == (True, [])


def test_more_than_twenty_missing_items_are_counted_not_listed(
    pytester: pytest.Pytester,
) -> None:
    many = "\n".join(
        f'''
@tool
def add{n}(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
        for n in range(6)
    )
    pytester.makeconftest(
        "from toolnexus_ref import tool\n"
        + many
        + "\n\ndef pytest_toolnexus_targets(config):\n"
        + "    return [["
        + ", ".join(f"add{n}" for n in range(6))
        + "]]\n"
        + """

def pytest_runtest_call(item):
    if "::add0::TN101" in item.nodeid:
        raise KeyboardInterrupt
"""
    )
    result = pytester.runpytest(*STATIC, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    report = _report(pytester)
    assert report["interrupted"] == "KeyboardInterrupt"
    assert len(report["not_judged"]) == 30
    result.stdout.fnmatch_lines(
        [
            "INTERRUPTED (KeyboardInterrupt): 30 of 30 conformance items were not judged*",
            "not judged:",
            "  toolnexus:list::add0::TN101-name-is-string",
        ]
    )
    result.stdout.fnmatch_lines(["  and 10 more"])
    assert "toolnexus:list::add5::TN105" not in result.stdout.str().split("not judged:")[1]
