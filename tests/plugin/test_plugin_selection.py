"""Selection limits calls; a target given twice loads once; many targets share a few workers.

A tool whose items are all deselected (``-k``, ``--deselect``) is never called,
and a tool's exploration makes only the calls of the checks left. Each tool here
writes a line to a file per call, from whatever process calls it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

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


def _run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess(
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
    )
    report: dict[str, Any] = json.loads((pytester.path / "report.json").read_text())
    return result, report


@pytest.fixture
def calls(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytester.makepyfile(calltools=TOOLS)
    path = pytester.path / "calls.txt"
    monkeypatch.setenv("TOOLNEXUS_TEST_CALLS", str(path))
    return path


def _counted(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().split():
            counts[line] = counts.get(line, 0) + 1
    path.unlink(missing_ok=True)
    return counts


def test_deselected_tools_and_checks_make_no_calls(pytester: pytest.Pytester, calls: Path) -> None:
    base = (TARGET, "calltools:tools", SELECT, "TN601,TN603")
    # One check of one tool: only the call that check needs.
    result, report = _run(pytester, *base, "-k", "ok_add and TN601")
    result.assert_outcomes(passed=1, deselected=3)
    one = _counted(calls)
    assert set(one) == {"ok_add"}, one
    assert [r["check"] for r in report["results"]] == ["TN601"]
    # Both checks of that tool, the other tool deselected by node id.
    prefix = "toolnexus:calltools:tools::writes_marker::"
    result, _ = _run(
        pytester,
        *base,
        "--deselect",
        prefix + "TN601-valid-args-no-raise",
        "--deselect",
        prefix + "TN603-ctx-none-accepted",
    )
    result.assert_outcomes(passed=2, deselected=2)
    both = _counted(calls)
    assert set(both) == {"ok_add"}, both
    assert both["ok_add"] > one["ok_add"]  # TN603's calls are made only when it is left
    # Nothing deselected: both tools are called (the assertions above can fail).
    result, _ = _run(pytester, *base)
    result.assert_outcomes(passed=4)
    assert set(_counted(calls)) == {"ok_add", "writes_marker"}


def test_many_targets_share_one_worker_and_a_target_given_twice_loads_once(
    pytester: pytest.Pytester, calls: Path
) -> None:
    result, report = _run(
        pytester,
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
    )
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
    assert set(_counted(calls)) == {"ok_add", "writes_marker", "lone"}


def test_a_deselected_destructive_mcp_tool_is_never_called_and_its_server_starts_once(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("mcp")
    pytester.makepyfile(notes_server=SERVER)
    target = f"stdio:{sys.executable} notes_server.py"
    args = ("--toolnexus-execute", "all", SELECT, "TN601")
    result, report = _run(pytester, *args, TARGET, target, TARGET, target, "-k", "not wipe_data")
    result.assert_outcomes(passed=1, deselected=1)
    assert [r["tool"] for r in report["results"]] == ["notes_read_note"]
    assert not (pytester.path / "wiped").exists()
    assert len((pytester.path / "starts").read_text().split()) == 1
    # Selected, it is called: the assertion above can fail.
    result, _ = _run(pytester, *args, TARGET, target)
    result.assert_outcomes(passed=2)
    assert (pytester.path / "wiped").exists()
