"""Selection limits calls; a target given twice loads once; many targets share a few workers.

A tool whose items are all deselected (``-k``, ``--deselect``) is never called,
and a tool's exploration makes only the calls of the checks left. Each tool here
writes a line to a file per call, from whatever process calls it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, Session, early, start_session

from pytest_toolnexus._options import CONFORMANCE, ONLY, SELECT, TARGET

TOOLS = '''
import os
from pathlib import Path

from toolnexus_ref import tool

CALLS = Path(os.environ["TOOLNEXUS_TEST_CALLS"])


def _called(name):
    with CALLS.open("a") as handle:
        handle.write(name + "\\n")


@tool
def ok_add(a: int, b: int) -> int:
    """Add two integers."""
    _called("ok_add")
    return a + b


@tool
def writes_marker(text: str) -> str:
    """Return the text unchanged (and write down that it was called)."""
    _called("writes_marker")
    return text


@tool
def lone(text: str) -> str:
    """Return the text unchanged."""
    _called("lone")
    return text


tools = [ok_add, writes_marker]
other = [lone]
'''

SERVER = '''
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

HERE = Path(__file__).resolve().parent
with (HERE / "starts").open("a") as handle:
    handle.write(f"{os.getpid()}\\n")
server = MCPServer("notes")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_note(name: str) -> str:
    """Read a note by name."""
    return f"note {name}"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def wipe_data(confirm: bool) -> str:
    """Delete every note."""
    (HERE / "wiped").touch()
    return "wiped"


if __name__ == "__main__":
    server.run()
'''


def _start(folder: Path, *args: str, files: dict[str, str]) -> RunningSession:
    """A session in ``folder`` (made, with ``files`` in it: name to source) on ``args``.

    The tools write their calls to ``calls.txt`` in ``folder``.
    """
    folder.mkdir()
    for name, source in files.items():
        folder.joinpath(name).write_text(source)
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        "--toolnexus-report",
        "report.json",
        "--toolnexus-examples",
        "3",
        # The tools count their calls in a file of the project: uncontained, so that
        # what selection prevents (not the sandbox) is what these tests see.
        "--toolnexus-sandbox",
        "off",
        "--toolnexus-env",
        "TOOLNEXUS_TEST_CALLS",
        *args,
        env={"TOOLNEXUS_TEST_CALLS": str(folder / "calls.txt")},
    )


def _ran(running: RunningSession) -> tuple[pytest.RunResult, dict[str, Any], Session]:
    """The finished session as pytester gives it, its report, and the session."""
    session = running.result()
    report: dict[str, Any] = json.loads((session.path / "report.json").read_text())
    return session.run_result(), report, session


def _counted(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().split():
            counts[line] = counts.get(line, 0) + 1
    path.unlink(missing_ok=True)
    return counts


def _calls_of(session: Session) -> dict[str, int]:
    """The calls the session's tools made, by tool."""
    return _counted(session.path / "calls.txt")


BASE = (TARGET, "calltools:tools", SELECT, "TN601,TN603")
DESELECTED = "toolnexus:calltools:tools::writes_marker::"


@early
def deselection_runs(folder: Path) -> dict[str, RunningSession]:
    """Sessions on the call-counting tools: one check of one tool, that tool's two checks
    (the other tool deselected by node id), and nothing deselected; each in its own folder."""
    files = {"calltools.py": TOOLS}
    return {
        "one": _start(folder / "one", *BASE, "-k", "ok_add and TN601", files=files),
        "both": _start(
            folder / "both",
            *BASE,
            "--deselect",
            DESELECTED + "TN601-valid-args-no-raise",
            "--deselect",
            DESELECTED + "TN603-ctx-none-accepted",
            files=files,
        ),
        "all": _start(folder / "all", *BASE, files=files),
    }


def test_deselected_tools_and_checks_make_no_calls(
    deselection_runs: dict[str, RunningSession],
) -> None:
    # One check of one tool: only the call that check needs.
    result, report, session = _ran(deselection_runs["one"])
    result.assert_outcomes(passed=1, deselected=3)
    one = _calls_of(session)
    assert set(one) == {"ok_add"}, one
    assert [r["check"] for r in report["results"]] == ["TN601"]
    # Both checks of that tool, the other tool deselected by node id.
    result, _, session = _ran(deselection_runs["both"])
    result.assert_outcomes(passed=2, deselected=2)
    both = _calls_of(session)
    assert set(both) == {"ok_add"}, both
    assert both["ok_add"] > one["ok_add"]  # TN603's calls are made only when it is left
    # Nothing deselected: both tools are called (the assertions above can fail).
    result, _, session = _ran(deselection_runs["all"])
    result.assert_outcomes(passed=4)
    assert set(_calls_of(session)) == {"ok_add", "writes_marker"}


@early
def many_targets_run(folder: Path) -> RunningSession:
    """A session on three targets (one given twice) sharing one worker."""
    return _start(
        folder / "many",
        TARGET,
        "calltools:tools",
        TARGET,
        "calltools:other",
        TARGET,
        "calltools:tools",
        SELECT,
        "TN601",
        "--toolnexus-workers",
        "1",
        files={"calltools.py": TOOLS},
    )


def test_many_targets_share_one_worker_and_a_target_given_twice_loads_once(
    many_targets_run: RunningSession,
) -> None:
    result, report, session = _ran(many_targets_run)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        ["*target 'calltools:tools' is given 2 times*loaded and checked once*"]
    )
    verdicts = {(r["target"], r["tool"]): r["outcome"] for r in report["results"]}
    assert verdicts == {
        ("calltools:tools", "ok_add"): "passed",
        ("calltools:tools", "writes_marker"): "passed",
        ("calltools:other", "lone"): "passed",
    }
    assert set(_calls_of(session)) == {"ok_add", "writes_marker", "lone"}


NOTES = f"stdio:{sys.executable} notes_server.py"
NOTES_ARGS = ("--toolnexus-execute", "all", SELECT, "TN601")


@early
def notes_runs(folder: Path) -> dict[str, RunningSession]:
    """Sessions on the notes server: given twice with its destructive tool deselected,
    and given once with it selected; each in its own folder. Neither without ``mcp``."""
    if importlib.util.find_spec("mcp") is None:
        return {}
    files = {"notes_server.py": SERVER}
    return {
        "deselected": _start(
            folder / "deselected",
            *NOTES_ARGS,
            TARGET,
            NOTES,
            TARGET,
            NOTES,
            "-k",
            "not wipe_data",
            files=files,
        ),
        "selected": _start(folder / "selected", *NOTES_ARGS, TARGET, NOTES, files=files),
    }


def test_a_deselected_destructive_mcp_tool_is_never_called_and_its_server_starts_once(
    notes_runs: dict[str, RunningSession],
) -> None:
    pytest.importorskip("mcp")
    result, report, session = _ran(notes_runs["deselected"])
    result.assert_outcomes(passed=1, deselected=1)
    assert [r["tool"] for r in report["results"]] == ["notes_read_note"]
    assert not (session.path / "wiped").exists()
    assert len((session.path / "starts").read_text().split()) == 1
    # Selected, it is called: the assertion above can fail.
    result, _, session = _ran(notes_runs["selected"])
    result.assert_outcomes(passed=2)
    assert (session.path / "wiped").exists()
