"""The MCP checks against real servers: defects found in the right category, safely, in time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from _mcp_testing import PYTHON, SERVERS, START, run_checks, server_command
from _sessions import RunningSession, early, start_session
from mcp.server.lowlevel import Server
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance.live._loop import BackgroundLoop

from toolnexus_ref._mcp_config import ServerConfig
from toolnexus_ref.mcp import open_in_memory, open_servers, open_stdio

MCP_CODES = ["TN15", "TN55", "TN65", "TN75", "TN85"]


def failures(verdicts: list[Verdict]) -> dict[tuple[str, str], Verdict]:
    return {(v.tool, v.check.code): v for v in verdicts if v.outcome is Outcome.FAILED}


def stdio_target(script: str, *args: str) -> str:
    return "stdio:" + " ".join([PYTHON, str(SERVERS / script), *args])


def _folders(folder: Path) -> tuple[Path, Path]:
    """A session's project and, beside it (outside the session's folder), a folder of
    the user's files."""
    (project := folder / "project").mkdir()
    (users_files := folder / "users-files").mkdir()
    return project, users_files


@early
def defective_session(folder: Path) -> tuple[RunningSession, Path]:
    """The plugin's session on the defective server, started early, and the file its
    destructive tool writes (outside the session's folder).

    It mostly waits for ``stall``, which blocks its server 5 s at a time: meanwhile
    other tests run.
    """
    project, users_files = _folders(folder)
    marker = users_files / "wiped"
    running = start_session(
        project,
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-target",
        stdio_target("defective.py", "--marker", str(marker)),
        "--toolnexus-select",
        ",".join([*MCP_CODES, "TN1"]),
        # ``stall`` blocks its server 5 s from the start of a call that asks for
        # progress (the cancel probe's); TN751 sees it if the server is still blocked
        # once the cancel (0.1 s in, up to tenfold on a busy machine) and the grace
        # have passed: half a second leaves room for the load.
        "--toolnexus-grace",
        "0.5",
        "--toolnexus-report",
        "report.json",
    )
    return running, marker


def test_defective_server_through_the_plugin(
    defective_session: tuple[RunningSession, Path],
) -> None:
    running, marker = defective_session
    result = running.result()
    report = result.path / "report.json"
    # Under the sandbox that holds (the default where the platform has one) ``auto``
    # calls the destructive tool too: its write must stay in its scratch, never reach
    # the user's files; where no sandbox holds, ``auto`` must not call it at all.
    assert not marker.exists(), "the destructive tool wrote outside its scratch"
    records = json.loads(report.read_text())
    rows = records["results"]
    failed = {
        (r["tool"], r["check"], r["category"], r["severity"])
        for r in rows
        if r["outcome"] == "failed"
    }
    long_name = "defective_fetch_the_complete_quarterly_financial_report_for_region"
    assert {
        ("defective_search_files", "TN151", "naming", "warning"),
        ("defective_explode", "TN651", "errors", "error"),
        ("defective_stall", "TN751", "cancellation", "error"),
        ("defective_count_items", "TN551", "result", "error"),
        ("defective_diagnose", "TN552", "result", "warning"),
        (long_name, "TN153", "naming", "error"),
    } <= failed, "\n".join(f"{r['tool']} {r['check']} {r['outcome']}: {r['message']}" for r in rows)
    # one report for the long name: TN153 speaks, TN103 defers to it
    [generic] = [r for r in rows if r["tool"] == long_name and r["check"] == "TN103"]
    assert generic["outcome"] == "skipped"
    assert "TN153" in generic["message"]
    wipe = [r for r in rows if r["tool"] == "defective_wipe" and r["check"] == "TN651"]
    assert wipe
    if records["sandbox"]["active"]:
        # Contained, auto calls even the destructive tool: its wipe reaches only its
        # scratch (the marker above, outside, was never written), and the finding on
        # the refused write's protocol error says why the tool was called at all.
        assert "not called" not in wipe[0]["message"]
        assert "called only because its sandbox holds" in wipe[0]["message"]
    else:
        assert wipe[0]["outcome"] == "skipped"
        assert "destructive" in wipe[0]["message"]
    result.stdout.fnmatch_lines(["*defective_explode::TN651-mcp-error-result*"])


@early
def good_session(folder: Path) -> RunningSession:
    """The plugin's session on the well-behaved server, every check, started early: much
    of it waits on the server's calls."""
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-target",
        stdio_target("good.py"),
        "--toolnexus-report",
        "report.json",
    )


def test_well_behaved_server_has_nothing_at_error_severity(
    good_session: RunningSession,
) -> None:
    result = good_session.result()
    records = result.report()
    rows = records["results"]
    errors = [r for r in rows if r["outcome"] == "failed" and r["severity"] == "error"]
    assert errors == []
    assert {r["check"] for r in rows if r["outcome"] == "passed"} >= {
        "TN151",
        "TN152",
        "TN153",
        "TN551",
        "TN651",
    }
    assert result.ret == 0


@early
def execute_all_session(folder: Path) -> tuple[RunningSession, Path]:
    """The destructive tool's session under ``--toolnexus-execute all``, started early,
    and the file that tool writes."""
    # The marker's name must not match ``-k``: the target spec (which names it) is part
    # of every item's id, so "wiped" would select every tool, the blocking one included.
    project, users_files = _folders(folder)
    marker = users_files / "written-by-the-tool"
    running = start_session(
        project,
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-execute",
        "all",
        # The marker is written outside the server's scratch: only uncontained does the
        # call leave evidence the test can see (the sandbox tests show the other side).
        "--toolnexus-sandbox",
        "off",
        "--toolnexus-target",
        stdio_target("defective.py", "--marker", str(marker)),
        "--toolnexus-select",
        "TN552",
        "-k",
        "defective_wipe",
    )
    return running, marker


def test_execute_all_does_call_the_destructive_tool(
    execute_all_session: tuple[RunningSession, Path],
) -> None:
    """The gate, not luck, keeps ``wipe`` uncalled: under ``all`` it runs."""
    running, marker = execute_all_session
    result = running.result()
    outcome = pytest.RunResult(result.ret, result.stdout.lines, result.stderr.splitlines(), 0.0)
    outcome.assert_outcomes(passed=1, deselected=6)
    assert marker.exists()


def test_a_server_that_exits_mid_run_is_its_culprits_finding_alone(loop: BackgroundLoop) -> None:
    source = loop.run(open_stdio(server_command("crashy.py"), timeout=START), timeout=60)
    try:
        verdicts = run_checks(loop, source, ["TN606", "TN651", "TN751", "TN552"])
        crash_items = {v.check.code: v for v in verdicts if v.tool == "crashy_crash"}
        culprit = crash_items.pop("TN606")
        assert culprit.outcome is Outcome.FAILED
        assert "calling 'crash' with {} ended the server 'crashy' (exit status 3)" in (
            culprit.message
        )
        assert "segfault imminent" in culprit.findings[0].message
        for verdict in crash_items.values():
            assert verdict.outcome is Outcome.SKIPPED
            assert "(TN606)" in verdict.message
        # The healthy tool is judged on the restarted server: the exit is not its fault.
        fine = [v for v in verdicts if v.tool == "crashy_fine"]
        assert len(fine) == 4
        assert all(v.outcome is Outcome.PASSED or _too_quick_to_cancel(v) for v in fine), [
            v.message for v in fine
        ]
        assert source.statuses["crashy"].ok
    finally:
        loop.run(source.close(), timeout=30)


def test_a_server_that_does_not_start_fails_the_target_check(loop: BackgroundLoop) -> None:
    configs = [
        ServerConfig("hang", "stdio", command=tuple(server_command("hang_start.py")), timeout=1),
        ServerConfig("legacy", "stdio", command=tuple(server_command("legacy.py")), timeout=START),
    ]
    source = loop.run(open_servers(configs), timeout=60)
    try:
        verdicts = run_checks(loop, source, ["TN851", "TN751"])
        [target] = [v for v in verdicts if v.check.code == "TN851"]
        assert target.outcome is Outcome.FAILED
        assert target.check.category.value == "timeout"
        assert "hang: failed: timed out after 1s during handshake" in target.message
        assert "loading a very large model" in target.findings[0].message
        legacy = [v for v in verdicts if v.tool.startswith("legacy_")]
        assert len(legacy) == 2
        assert all(v.outcome is Outcome.PASSED or _too_quick_to_cancel(v) for v in legacy), [
            v.message for v in legacy
        ]
    finally:
        loop.run(source.close(), timeout=30)


def _named_server(names: list[str]) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=n, description="d", input_schema={"type": "object"}) for n in names
            ]
        )

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="ok")])

    return Server("named", on_list_tools=list_tools, on_call_tool=call_tool)


@pytest.mark.parametrize(
    ("name", "contract", "spec"),
    [
        ("get_weather", True, True),
        ("files.search", False, True),
        ("x" * 100, False, True),
        ("has space", False, False),
        ("naïve", False, False),
        ("x" * 129, False, False),
    ],
)
def test_original_names_are_judged_by_both_rules(
    loop: BackgroundLoop, name: str, contract: bool, spec: bool
) -> None:
    source = loop.run(open_in_memory(_named_server([name]), name="s"), timeout=30)
    try:
        failed = failures(run_checks(loop, source, ["TN151", "TN152"]))
        codes = {code for _, code in failed}
        assert ("TN151" not in codes) is contract
        assert ("TN152" not in codes) is spec
        if not contract and spec:
            assert (
                "valid under the MCP specification"
                in failed[(source.tools[0].name, "TN151")].message
            )
    finally:
        loop.run(source.close(), timeout=30)


@pytest.mark.parametrize("tool", ["t" * 55, "t" * 120])
def test_a_long_prefixed_name_is_reported_once(loop: BackgroundLoop, tool: str) -> None:
    """TN153 reports a prefixed name past 64 characters; TN103 skips it, naming TN153."""
    source = loop.run(open_in_memory(_named_server([tool]), name="warehouse"), timeout=30)
    try:
        verdicts = {v.check.code: v for v in run_checks(loop, source, ["TN103", "TN153"])}
        assert verdicts["TN153"].outcome is Outcome.FAILED
        assert "server prefix 'warehouse'" in verdicts["TN153"].message
        assert verdicts["TN103"].outcome is Outcome.SKIPPED
        assert "TN153 mcp-prefixed-length" in verdicts["TN103"].message
    finally:
        loop.run(source.close(), timeout=30)


def test_a_short_prefixed_name_passes_both(loop: BackgroundLoop) -> None:
    source = loop.run(open_in_memory(_named_server(["lookup"]), name="warehouse"), timeout=30)
    try:
        verdicts = run_checks(loop, source, ["TN103", "TN153"])
        assert {v.check.code: v.outcome for v in verdicts} == {
            "TN103": Outcome.PASSED,
            "TN153": Outcome.PASSED,
        }
    finally:
        loop.run(source.close(), timeout=30)


def test_live_checks_skip_unmarked_tools_under_auto(loop: BackgroundLoop) -> None:
    source = loop.run(open_stdio(server_command("lowlevel.py"), timeout=START), timeout=60)
    try:
        verdicts = run_checks(loop, source, ["TN651"], RunOptions(execute=ExecuteMode.AUTO))
        store = next(v for v in verdicts if v.tool == "lowlevel_store")
        assert store.outcome is Outcome.SKIPPED
        assert "not marked read-only" in store.message
        items = [v for v in verdicts if v.tool.startswith("lowlevel_item")]
        assert {v.outcome for v in items} == {Outcome.PASSED}
    finally:
        loop.run(source.close(), timeout=30)


def test_a_protocol_error_of_a_tool_called_for_its_sandbox_says_why_it_was_called(
    loop: BackgroundLoop, tmp_path: Path
) -> None:
    """Inside a sandbox that holds, ``auto`` calls the destructive ``wipe``, whose write
    may be refused there: its TN651 says so, and a read-only tool's does not."""
    refused = tmp_path / "no such folder" / "wiped"  # the write fails, as a refused one
    command = server_command("defective.py", "--marker", str(refused))
    source = loop.run(open_stdio(command, timeout=START), timeout=60)
    try:
        contained = RunOptions(execute=ExecuteMode.AUTO, contained=frozenset({"t"}))
        failed = failures(run_checks(loop, source, ["TN651"], contained))
    finally:
        loop.run(source.close(), timeout=30)
    wipe = failed[("defective_wipe", "TN651")].message
    assert wipe.startswith("valid arguments got a JSON-RPC error (code -32603)"), wipe
    assert (
        "; the tool was called only because its sandbox holds (its owner marked it"
        " destructive)" in wipe
    ), wipe
    explode = failed[("defective_explode", "TN651")].message
    assert explode.startswith("valid arguments got a JSON-RPC error (code -32603)"), explode
    assert "sandbox" not in explode, explode


def _too_quick_to_cancel(verdict: Verdict) -> bool:
    """TN751's skip for a call that ended before its cancel: judged, with nothing to show."""
    return (
        verdict.check.code == "TN751"
        and verdict.outcome is Outcome.SKIPPED
        and "before it could be cancelled" in verdict.message
    )
