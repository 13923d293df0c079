"""Targets through the plugin: one verdict for a target that holds nothing, or no tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _kit import run_kit

SERVERS = Path(__file__).resolve().parent / "servers"

MODULE = '''
from toolnexus_ref import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


empty = []


def empty_factory():
    return []


class Settings:
    timeout = 3


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class NoSchema:
    name = "no_schema"
    description = "A tool that forgot its input schema."
    source = "custom"

    def execute(self, args, ctx=None):
        return "ok"


no_schema = NoSchema()


settings = Settings()
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(target_forms=MODULE)
    return pytester


@pytest.mark.parametrize(
    ("attr", "says"),
    [
        ("empty", "yields no tools: it is an empty list"),
        ("empty_factory", "yields no tools"),
        ("settings", "holds no tools: found a target_forms.Settings"),
    ],
)
def test_a_target_with_no_tools_is_one_tn001_failure_saying_so(
    project: pytest.Pytester, attr: str, says: str
) -> None:
    run = run_kit(project, f"target_forms:{attr}")
    (record,) = run.records
    assert (record["check"], record["outcome"]) == ("TN001", "failed")
    assert says in record["message"]


def test_a_target_matching_nothing_lists_the_accepted_forms(project: pytest.Pytester) -> None:
    run = run_kit(project, "target_forms:settings")
    project_message = run.records[0]["message"]
    assert "Accepted:" in project_message
    assert "a factory: a function with no required parameters" in project_message
    assert run.result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_good_target_still_loads(project: pytest.Pytester) -> None:
    run = run_kit(project, "target_forms:add")
    assert not run.failed(severity="error")
    assert {r["tool"] for r in run.records} == {"add", "*"}


def test_an_mcp_server_listing_no_tools_fails_tn001(pytester: pytest.Pytester) -> None:
    pytest.importorskip("mcp.server.mcpserver")
    command = f"stdio:{sys.executable} {SERVERS / 'no_tools.py'}"
    run = run_kit(pytester, command)
    (record,) = run.records
    assert (record["check"], record["outcome"]) == ("TN001", "failed")
    assert "yields no tools: its servers list none" in record["message"]
    assert "(connected)" in record["message"]


def test_a_plain_function_target_is_inferred_and_judged(project: pytest.Pytester) -> None:
    run = run_kit(project, "target_forms:multiply")
    assert not run.failed(severity="error")
    assert "TN601" in run.live_passed("multiply")


def test_a_tool_without_input_schema_gets_schema_findings_not_a_load_failure(
    project: pytest.Pytester,
) -> None:
    run = run_kit(project, "target_forms:no_schema")
    failed = {r["check"] for r in run.failed()}
    assert "TN001" not in failed
    assert "TN304" in failed
