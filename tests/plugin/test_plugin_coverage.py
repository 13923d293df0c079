"""Coverage beside the suites: the tools' own processes are measured, and what is not is said.

Real sessions with pytest-cov (a test dependency) on a one-tool module: under process
isolation (the sandbox on, where the machine allows it) the tools run in processes
coverage never started, and their lines still reach pytest-cov's report, serial and
under xdist, and ``coverage run -m pytest``'s data; a Python MCP server's too; under
``--toolnexus-isolation none`` they run in pytest's process. Where coverage cannot be carried into those processes
(a coverage before 7.10, which cannot serialize its configuration) the summary says
what it did not see.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_toolnexus._coverage import unmeasured_line
from pytest_toolnexus._options import CONFORMANCE, ONLY, TARGET

TOOLS = '''
def shout(text: str) -> str:
    """Say the text louder."""
    return text.upper()


tools = [shout]
'''

RUN = (CONFORMANCE, ONLY, TARGET, "shouting:tools", "--cov=shouting", "--cov-report=term-missing")
#: What the summary says where coverage could not follow the tools.
UNMEASURED = (
    "coverage: the tools of shouting:tools ran in sandboxed processes, which coverage"
    " does not measure; --toolnexus-isolation none calls them in pytest's process,"
    " where it does (uncontained)"
)
#: A coverage that cannot serialize its configuration, as before 7.10.
OLD_COVERAGE = """
import coverage.config

del coverage.config.CoverageConfig.serialize
"""


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("toolnexus-coverage-*"))


SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_note(name: str) -> str:
    """Read a note by name."""
    return f"note {name}"


if __name__ == "__main__":
    server.run()
'''


def _row(lines: list[str], module: str) -> list[str] | None:
    """pytest-cov's figures for a module (``Stmts Miss Cover``)."""
    row = next((line for line in lines if re.match(rf"{module}\.py\s", line)), None)
    return row.split()[1:4] if row is not None else None


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_the_tools_own_processes_are_measured(
    pytester: pytest.Pytester, workers: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Python target's tool body runs only in the processes the kit starts for it, a
    Python MCP server's only in the server: each is covered there, and combined into
    pytest-cov's report (under xdist, into the worker's, which the controller
    combines). The server measures itself through coverage's own start-up hook, saves
    as it exits, and is closed before the combining. Their data folder goes with the run."""
    pytester.makepyfile(shouting=TOOLS, notes_server=SERVER)
    temporary = pytester.mkdir("temporary")
    monkeypatch.setenv("TMPDIR", str(temporary))
    server = f"stdio:{sys.executable} notes_server.py"
    result = pytester.runpytest_subprocess(*RUN, TARGET, server, "--cov=notes_server", *workers)
    assert result.ret == 0, result.stdout.str()
    assert _row(result.stdout.lines, "shouting") == ["3", "0", "100%"], result.stdout.str()
    assert _row(result.stdout.lines, "notes_server") == ["8", "0", "100%"], result.stdout.str()
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)
    assert _leftovers(temporary) == []


def test_coverage_run_gets_the_tools_processes_too(pytester: pytest.Pytester) -> None:
    """``coverage run -m pytest``: no pytest-cov, one data file, which holds the tool's lines."""
    pytester.makepyfile(shouting=TOOLS)
    run = pytester.run(
        sys.executable, "-m", "coverage", "run", "--source=.", "-m", "pytest",
        "-p", "no:cacheprovider", CONFORMANCE, ONLY, TARGET, "shouting:tools",
    )  # fmt: skip
    assert run.ret == 0, run.stdout.str()
    report = pytester.run(sys.executable, "-m", "coverage", "report", "-m")
    assert _row(report.stdout.lines, "shouting") == ["3", "0", "100%"], report.stdout.str()


def test_a_coverage_that_cannot_be_carried_is_said(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(shouting=TOOLS)
    pytester.makeconftest(OLD_COVERAGE)
    result = pytester.runpytest_subprocess(*RUN)
    assert result.ret == 0, result.stdout.str()
    # What coverage says alone: nothing measured, and not why.
    assert _row(result.stdout.lines, "shouting") is None, result.stdout.str()
    result.stdout.fnmatch_lines(["*toolnexus conformance*", UNMEASURED])


def test_in_pytests_process_coverage_measures_every_line_and_nothing_is_said(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest_subprocess(*RUN, "--toolnexus-isolation", "none")
    assert result.ret == 0, result.stdout.str()
    assert _row(result.stdout.lines, "shouting") == ["3", "0", "100%"], result.stdout.str()
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)


def test_without_coverage_nothing_is_said(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest(
        CONFORMANCE, ONLY, TARGET, "shouting:tools", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)


def test_with_coverage_turned_off_nothing_is_said(pytester: pytest.Pytester) -> None:
    """``--no-cov`` (pytest-cov's, for a debugger) keeps its plugin but measures nothing."""
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest_subprocess(*RUN, "--no-cov")
    assert result.ret == 0, result.stdout.str()
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)


def test_the_line_names_a_few_targets_and_counts_the_rest() -> None:
    assert unmeasured_line([]) is None
    line = unmeasured_line(["a:t", "b:t", "a:t", "c:t", "d:t", "e:t"])
    assert line is not None
    assert line.startswith("coverage: the tools of a:t, b:t, c:t and 2 more ran in sandboxed")


def test_what_a_tool_left_in_the_data_folder_never_stops_the_run(tmp_path: Path) -> None:
    """The folder is writable inside the sandbox: a tool may leave anything there.
    A file coverage cannot read is coverage's warning; the files it can read join."""
    import coverage
    from coverage.exceptions import CoverageWarning

    from pytest_toolnexus._coverage import ToolCoverage

    measured = coverage.Coverage(data_file=str(tmp_path / ".coverage"))
    measured.start()
    try:
        carried = ToolCoverage("", "", tmp_path / "carried")
        carried.folder.mkdir()
        good = coverage.CoverageData(basename=str(carried.folder / ".coverage"), suffix="good")
        good.add_lines({str(tmp_path / "tool.py"): [1, 2]})
        good.write()
        (carried.folder / ".coverage.planted").write_text("not a database")
        with pytest.warns(CoverageWarning, match="Couldn.t use data file"):
            combined = carried.combine()
        lines = measured.get_data().lines(str(tmp_path / "tool.py"))
    finally:
        measured.stop()
    assert combined == 2
    assert carried.problem is None
    assert sorted(lines or []) == [1, 2]
