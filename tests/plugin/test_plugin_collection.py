"""The plugin's wiring, tested through real pytest sessions (pytester)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _plugin_tools import TOOLS_MODULE
from _sessions import RunningSession, early, start_session

from pytest_toolnexus._options import (
    CONFORMANCE,
    GRANULARITY,
    IGNORE,
    ONLY,
    REPORT,
    SELECT,
    STRICT,
    TARGET,
)

BASE = ["-p", "no:cacheprovider", CONFORMANCE, ONLY, "--toolnexus-execute", "none"]


def test_without_the_flag_the_plugin_adds_no_items(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_one():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*test_one*", "1 test collected*"])
    result.stdout.no_fnmatch_line("*toolnexus*")


def test_no_target_is_a_usage_error_that_says_how_to_declare_one(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(CONFORMANCE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*{CONFORMANCE} needs at least one target*{TARGET} SPEC*toolnexus_targets*"]
    )


def test_one_item_per_target_tool_and_check_with_readable_ids(
    tools_module: pytest.Pytester,
) -> None:
    result = tools_module.runpytest(*BASE, TARGET, "mytools:good", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "toolnexus:mytools:good::TN001-target-loads",
            "toolnexus:mytools:good::add::TN101-*",
            "toolnexus:mytools:good::echo::TN101-*",
        ]
    )


def test_good_tools_pass(tools_module: pytest.Pytester) -> None:
    result = tools_module.runpytest(*BASE, TARGET, "mytools:good")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*toolnexus conformance*", "mytools:good: 2 tools*"])


def test_broken_targets_fail_once_each_and_the_others_still_run(
    tools_module: pytest.Pytester,
) -> None:
    result = tools_module.runpytest(
        *BASE,
        TARGET,
        "mytools:good",
        TARGET,
        "no_such_module:tools",
        TARGET,
        "mytools:broken_factory",
        TARGET,
        "this is not a target",
        TARGET,
        "mytools:missing_attr",
        TARGET,
        "mytools.py",
    )
    assert result.parseoutcomes()["failed"] == 5
    result.stdout.fnmatch_lines_random(
        [
            "*no_such_module:tools::TN001-target-loads*",
            "*cannot import 'no_such_module'*ModuleNotFoundError*",
            "*the factory behind 'mytools:broken_factory' raised RuntimeError: the factory is broken*",
            "*cannot understand target 'this is not a target'*",
            "*module 'mytools' has no attribute 'missing_attr'*",
            # Not read as an mcp.json, whose error would be "not valid JSON".
            "*target 'mytools.py' names a Python file*as in mytools:tools *",
        ]
    )
    assert "mytools:good: 2 tools" in result.stdout.str()


@pytest.mark.parametrize("deselect", [[], ["-k", "echo"], ["--toolnexus-shard", "2/2"]])
def test_the_header_counts_the_suites_items_as_collected(
    tools_module: pytest.Pytester, deselect: list[str]
) -> None:
    """The suites' items are made after pytest's collectors ran; counted by none of
    them, a run of the suites alone said "collected 0 items", and with ``-k`` or a
    shard "-N selected"."""
    result = tools_module.runpytest(*BASE, TARGET, "mytools:good", *deselect)
    ran = sum(result.parseoutcomes().get(k, 0) for k in ("passed", "failed", "skipped"))
    deselected = result.parseoutcomes().get("deselected", 0)
    assert ran > 0
    if deselected:
        line = f"collected {ran + deselected} items / {deselected} deselected / {ran} selected"
    else:
        line = f"collected {ran} items"
    result.stdout.fnmatch_lines([line])


def test_factories_sync_and_async_are_called(tools_module: pytest.Pytester) -> None:
    result = tools_module.runpytest(
        *BASE, TARGET, "mytools:factory", TARGET, "mytools:async_factory", "--collect-only", "-q"
    )
    result.stdout.fnmatch_lines_random(
        ["*mytools:factory::echo::*", "*mytools:async_factory::add::*"]
    )


def test_failure_explains_itself_in_one_screen(tools_module: pytest.Pytester) -> None:
    result = tools_module.runpytest(*BASE, TARGET, "mytools:mixed", SELECT, "naming")
    assert result.parseoutcomes()["failed"] == 1
    result.stdout.fnmatch_lines(
        [
            "TN102 name-charset [[]naming, error[]]: *",
            "tool:   bad tool   (target mytools:mixed)",
            "found:  *' '*",
            "why:    *",
            "fix:    *sanitize*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_select_and_ignore_take_codes_prefixes_and_categories(
    tools_module: pytest.Pytester,
) -> None:
    result = tools_module.runpytest(
        *BASE, TARGET, "mytools:mixed", SELECT, "TN10", "--collect-only", "-q"
    )
    ids = [line for line in result.stdout.lines if "::TN" in line]
    assert ids
    assert all("::TN10" in line for line in ids)
    result = tools_module.runpytest(
        *BASE, TARGET, "mytools:mixed", SELECT, "naming,description", IGNORE, "TN102"
    )
    assert result.ret == pytest.ExitCode.OK
    assert "TN102" not in result.stdout.str().split("toolnexus conformance")[0]


def test_keyword_selection_works_on_tool_names_and_codes(tools_module: pytest.Pytester) -> None:
    result = tools_module.runpytest(
        *BASE, TARGET, "mytools:good", "-k", "echo and TN101", "--collect-only", "-q"
    )
    ids = [line for line in result.stdout.lines if line.startswith("toolnexus:")]
    assert ids == ["toolnexus:mytools:good::echo::TN101-name-is-string"]


def test_ini_and_conftest_hook_declare_targets(tools_module: pytest.Pytester) -> None:
    tools_module.makeini("[pytest]\ntoolnexus_targets =\n    mytools:factory\n")
    tools_module.makeconftest(
        "import mytools\ndef pytest_toolnexus_targets(config):\n    return [mytools.Add()]\n"
    )
    result = tools_module.runpytest(*BASE, "--collect-only", "-q")
    result.stdout.fnmatch_lines_random(
        ["*mytools:factory::echo::TN101-*", "*toolnexus:add::add::TN101-*"]
    )


WARNING_TOOL = """
from toolnexus_ref import BaseTool


class Loose(BaseTool):
    name = "loose"
    description = "Its schema has additionalProperties, which Gemini refuses."
    input_schema = {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": True}

    def run(self, args, ctx):
        return "ok"


tools = [Loose()]
"""


def test_warnings_fail_only_in_strict_mode(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(warntools=WARNING_TOOL)
    pytester.syspathinsert()
    args = [*BASE, TARGET, "warntools:tools", SELECT, "provider"]
    lenient = pytester.runpytest(*args)
    assert lenient.ret == pytest.ExitCode.OK
    lenient.stdout.fnmatch_lines(["*ToolnexusWarning*", "*warn*"])
    strict = pytester.runpytest(*args, STRICT)
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


def test_the_github_output_alone_still_reads_every_record(
    tools_module: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No report file and no page: the run keeps its records for the GitHub output only.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    result = tools_module.runpytest(*BASE, TARGET, "mytools:mixed", "--toolnexus-github", "on")
    result.stdout.fnmatch_lines(["::error *title=TN102 name-charset%3A bad tool::*"])
    result.stdout.no_fnmatch_line("*no HTML or GitHub output*")


def test_report_has_one_record_per_target_tool_and_check(tools_module: pytest.Pytester) -> None:
    result = tools_module.runpytest(
        *BASE, TARGET, "mytools:mixed", TARGET, "nope:x", REPORT, "out/report.json"
    )
    report = json.loads((tools_module.path / "out" / "report.json").read_text())
    assert report["version"] == 1
    results = report["results"]
    outcomes = result.parseoutcomes()
    assert len(results) == sum(outcomes.get(k, 0) for k in ("passed", "failed", "skipped"))
    # Beside the fixed keys: where the tool is declared, and each finding's evidence.
    optional = {"declared_at", "evidence"}
    assert set(results[0]) - optional == {
        "target",
        "tool",
        "check",
        "category",
        "severity",
        "outcome",
        "message",
        "findings",
    }
    assert {r["outcome"] for r in results} <= {"passed", "failed", "skipped"}
    misnamed = [r for r in results if r["tool"] == "bad tool" and r["check"] == "TN102"]
    assert misnamed[0]["declared_at"] == {
        "file": "mytools.py",
        "line": misnamed[0]["declared_at"]["line"],
    }
    assert misnamed[0]["evidence"] == [{"path": "name"}]
    misnamed = [{k: v for k, v in r.items() if k not in optional} for r in misnamed]
    assert misnamed == [
        {
            "target": "mytools:mixed",
            "tool": "bad tool",
            "check": "TN102",
            "category": "naming",
            "severity": "error",
            "outcome": "failed",
            "message": misnamed[0]["message"],
            "findings": [misnamed[0]["message"]],
        }
    ]
    assert next(r for r in results if r["target"] == "nope:x")["check"] == "TN001"
    summary = report["summary"]
    assert summary["checks"] == len(results)
    assert summary["errors"] == outcomes["failed"]
    assert summary["failed"] == summary["errors"] + summary["warnings"]


@early
def serial_and_parallel(folder: Path) -> dict[str, RunningSession]:
    """The same targets run serially and under ``-n 2``, each in a project of its own
    (the report names files relative to it). Started early: both mostly wait for their
    workers and the tools' processes."""
    args = [*BASE, TARGET, "mytools:mixed", TARGET, "mytools:good"]
    started: dict[str, RunningSession] = {}
    for name, extra in (("serial", []), ("parallel", ["-n", "2"])):
        project = folder / name
        project.mkdir()
        (project / "mytools.py").write_text(TOOLS_MODULE)
        started[name] = start_session(project, *args, REPORT, f"{name}.json", *extra)
    return started


def test_xdist_gives_the_same_report_as_a_serial_run(
    serial_and_parallel: dict[str, RunningSession],
) -> None:
    pytest.importorskip("xdist")
    runs = {name: running.result() for name, running in serial_and_parallel.items()}
    serial = json.loads((runs["serial"].path / "serial.json").read_text())
    parallel = json.loads((runs["parallel"].path / "parallel.json").read_text())
    assert serial["results"], "the serial run produced no records"
    assert parallel == serial


def test_tool_granularity_gives_one_item_per_tool_and_the_same_report(
    tools_module: pytest.Pytester,
) -> None:
    args = [*BASE, TARGET, "mytools:mixed", TARGET, "mytools:good"]
    collected = tools_module.runpytest(*args, GRANULARITY, "tool", "--collect-only", "-q")
    ids = [line for line in collected.stdout.lines if line.startswith("toolnexus:")]
    # Target-level checks stay one item each; a tool's checks become one item.
    assert [i for i in ids if i.endswith("::checks")] == [
        "toolnexus:mytools:mixed::add::checks",
        "toolnexus:mytools:mixed::bad tool::checks",
        "toolnexus:mytools:good::add::checks",
        "toolnexus:mytools:good::echo::checks",
    ]
    assert all(i.count("::") == 1 for i in ids if not i.endswith("::checks"))
    grouped = tools_module.runpytest(*args, GRANULARITY, "tool", REPORT, "grouped.json")
    assert grouped.parseoutcomes()["failed"] == 1
    grouped.stdout.fnmatch_lines(["TN102 name-charset *", "tool:   bad tool *"])
    tools_module.runpytest(*args, REPORT, "each.json")
    each = json.loads((tools_module.path / "each.json").read_text())
    assert json.loads((tools_module.path / "grouped.json").read_text()) == each


def test_a_skip_mark_added_by_the_project_skips_the_item(tools_module: pytest.Pytester) -> None:
    tools_module.makeconftest(
        """
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "TN101" in item.nodeid:
            item.add_marker(pytest.mark.skip(reason="not this one"))
"""
    )
    result = tools_module.runpytest(*BASE, TARGET, "mytools:good", "-rs")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.no_fnmatch_line("*INTERNALERROR*")
    result.stdout.fnmatch_lines(["*SKIPPED*not this one*"])
