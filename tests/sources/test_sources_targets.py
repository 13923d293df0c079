"""Targets through the plugin: one verdict for a target that holds nothing, or no tools.

Every Python form below is a target of one session (each target loads and is judged
on its own), and each test reads its own target's records from that session's report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from _kit import LIVE_PREFIXES, KitRun, start_kit
from _sessions import RunningSession, Session, early

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


#: The attributes of ``target_forms`` judged, each a target of the one session.
FORMS = ("empty", "empty_factory", "settings", "add", "multiply", "no_schema")


@early
def forms_session(folder: Path) -> RunningSession:
    """One session judging every form in ``FORMS``, each a target of its own: started
    early, as its files and arguments are known before any test, and mostly waiting
    for the tools' processes."""
    (folder / "target_forms.py").write_text(MODULE)
    return start_kit(folder, *(f"target_forms:{attr}" for attr in FORMS))


@pytest.fixture(scope="module")
def forms(forms_session: RunningSession) -> Session:
    """The finished session of ``forms_session``, read by each test for its own target."""
    return forms_session.result()


def _records(session: Session, attr: str) -> list[dict[str, Any]]:
    """The records of the target ``target_forms:ATTR``."""
    target = f"target_forms:{attr}"
    return [r for r in session.report()["results"] if r["target"] == target]


@pytest.mark.parametrize(
    ("attr", "says"),
    [
        ("empty", "yields no tools: it is an empty list"),
        ("empty_factory", "yields no tools"),
        ("settings", "holds no tools: found a target_forms.Settings"),
    ],
)
def test_a_target_with_no_tools_is_one_tn001_failure_saying_so(
    forms: Session, attr: str, says: str
) -> None:
    (record,) = _records(forms, attr)
    assert (record["check"], record["outcome"]) == ("TN001", "failed")
    assert says in record["message"]


def test_a_target_matching_nothing_lists_the_accepted_forms(forms: Session) -> None:
    project_message = _records(forms, "settings")[0]["message"]
    assert "Accepted:" in project_message
    assert "a factory: a function with no required parameters" in project_message
    assert forms.ret == pytest.ExitCode.TESTS_FAILED
    # Its own item is one that failed the run.
    forms.stdout.fnmatch_lines(["FAILED toolnexus:target_forms:settings::TN001*"])


def test_a_good_target_still_loads(forms: Session) -> None:
    records = _records(forms, "add")
    assert not [r for r in records if r["outcome"] == "failed" and r["severity"] == "error"]
    assert {r["tool"] for r in records} == {"add", "*"}


@early
def no_tools_server_kit(folder: Path) -> RunningSession:
    """The kit through the plugin on an MCP server that lists no tools: started early,
    as its arguments are fixed and it mostly waits for the server to start."""
    command = f"stdio:{sys.executable} {SERVERS / 'no_tools.py'}"
    return start_kit(folder, command)


def test_an_mcp_server_listing_no_tools_fails_tn001(no_tools_server_kit: RunningSession) -> None:
    pytest.importorskip("mcp.server.mcpserver")
    done = no_tools_server_kit.result()
    run = KitRun.of(done)
    (record,) = run.records
    assert (record["check"], record["outcome"]) == ("TN001", "failed")
    assert "yields no tools: its servers list none" in record["message"]
    assert "(connected)" in record["message"]


def test_a_plain_function_target_is_inferred_and_judged(forms: Session) -> None:
    records = _records(forms, "multiply")
    assert not [r for r in records if r["outcome"] == "failed" and r["severity"] == "error"]
    live_passed = [
        r["check"]
        for r in records
        if r["tool"] == "multiply"
        and r["check"].startswith(LIVE_PREFIXES)
        and r["outcome"] == "passed"
    ]
    assert "TN601" in live_passed


def test_a_tool_without_input_schema_gets_schema_findings_not_a_load_failure(
    forms: Session,
) -> None:
    failed = {r["check"] for r in _records(forms, "no_schema") if r["outcome"] == "failed"}
    assert "TN001" not in failed
    assert "TN304" in failed


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("mytools.py", "mytools:tools"),
        ("mytools.py:add", "mytools:add"),
        ("./agents/search.py:tools", "agents.search:tools"),
        ("src/my_pkg/tools.py:registry", "my_pkg.tools:registry"),
    ],
)
def test_a_python_files_path_says_which_module_to_name(
    written: str, meant: str, tmp_path: Path
) -> None:
    """A path is the first thing a new user gives; read as an mcp.json, the file's
    Python would be "not valid JSON". The message names the module to write instead."""
    from toolnexus_conformance.targets import TargetError, parse_target

    (tmp_path / "mytools.py").write_text("tools = []\n")
    with pytest.raises(TargetError, match="names a Python file") as raised:
        parse_target(written, base_dir=tmp_path)
    assert f"as in {meant}" in str(raised.value)
    absolute = str(tmp_path / "mytools.py")  # inside the project: its module path
    with pytest.raises(TargetError, match="as in mytools:tools"):
        parse_target(absolute, base_dir=tmp_path)
