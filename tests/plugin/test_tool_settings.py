"""Settings per tool, read directly: the tables, what a tool gets, what may call it, what is wrong.

The sessions that prove them where tools are explored are in ``test_plugin_tool_settings``.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance._options import ExecuteMode, RunOptions, ToolArguments, ToolSettings
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._safety import may_execute
from toolnexus_conformance._subject import read_subject

from pytest_toolnexus._tool_settings import (
    SettingsError,
    ToolTables,
    ignores,
    parse_tables,
    read_tables,
)

ROOT = Path("/project")
CATALOG = {c.code: c.info for c in load_catalog()}


def test_a_table_holds_settings_and_arguments_with_placeholders_expanded() -> None:
    tables = parse_tables(
        {
            "tools": {
                "get_*": {"call": True, "call_timeout": 90, "ignore": ["TN3", "timeout"]},
                "srv::get_user": {
                    "ignore": "TN201, TN202",
                    "examples": [{"path": "{rootdir}/x", "key": "${KEY}"}],
                    "values": {"limit": [1, 2]},
                },
            }
        },
        "pyproject.toml [tool.toolnexus]",
        rootdir=ROOT,
        environ={"KEY": "k"},
    )
    assert tables.tools == {
        "get_*": ToolSettings(call=True, call_timeout=90.0, ignore=("TN3", "timeout")),
        "srv::get_user": ToolSettings(ignore=("TN201", "TN202")),
    }
    assert tables.arguments == {
        "srv::get_user": ToolArguments(({"path": "/project/x", "key": "k"},), {"limit": (1, 2)})
    }


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([], "the top level must be a table with the key 'tools'"),
        ({"tool": {}}, "unknown key(s) 'tool'; the only key is 'tools'"),
        ({"tools": []}, "'tools' must be a table of tool keys"),
        ({"tools": {"t": 1}}, "tools.t: expected a table, got int"),
        ({"tools": {"t": {"timeout": 1}}}, "tools.t: unknown key(s) 'timeout'; the keys are"),
        ({"tools": {"t": {"call": "yes"}}}, "tools.t: 'call' must be true or false, got 'yes'"),
        ({"tools": {"t": {"call_timeout": 0}}}, "'call_timeout' must be a positive number"),
        ({"tools": {"t": {"call_timeout": True}}}, "'call_timeout' must be a positive number"),
        ({"tools": {"t": {"ignore": [1]}}}, "tools.t: 'ignore' must be a list of check codes"),
        ({"tools": {"t": {"examples": [1]}}}, "'examples' must be a list of argument objects"),
    ],
)
def test_a_table_not_exactly_right_says_where(data: Any, expected: str) -> None:
    with pytest.raises((SettingsError, ValueError), match=r"^src") as caught:
        parse_tables(data, "src", rootdir=ROOT, environ={})
    assert expected in str(caught.value)


def test_a_tool_gets_every_matching_key_in_order_exact_keys_last() -> None:
    options = RunOptions(
        call_timeout=30.0,
        tools={
            "add": ToolSettings(call_timeout=5.0, ignore=("TN201",)),  # exact: applies last
            "*": ToolSettings(call=False, call_timeout=60.0, ignore=("TN3",)),
            "t::a*": ToolSettings(call=True, ignore=("TN201", "timeout")),
            "other::*": ToolSettings(call_timeout=1.0),
        },
    )
    assert options.settings_for("t", "add") == ToolSettings(
        call=True, call_timeout=5.0, ignore=("TN3", "TN201", "timeout")
    )
    assert options.settings_for("t", "zip") == ToolSettings(False, 60.0, ("TN3",))
    assert options.for_tool("t", "add").call_timeout == 5.0
    assert options.for_tool("other", "x").call_timeout == 1.0  # two globs: the later wins
    assert RunOptions().for_tool("t", "add") == RunOptions()
    info = CATALOG["TN201"]
    assert ignores(ToolSettings(ignore=("description",)), info)
    assert ignores(ToolSettings(ignore=("TN2",)), info)
    assert ignores(ToolSettings(ignore=("description-present",)), info)
    assert not ignores(ToolSettings(ignore=("TN3", "schema")), info)


class _Tool:
    description = "Delete everything."
    input_schema: dict[str, Any] = {"type": "object"}
    source = "mcp"  # not marked read-only: auto does not call it

    def __init__(self, name: str) -> None:
        self.name = name

    def execute(self, args: Any, ctx: Any = None) -> Any:
        raise AssertionError("never called here")


@pytest.mark.parametrize("mode", list(ExecuteMode))
def test_a_tools_call_setting_outranks_execute_both_ways(mode: ExecuteMode) -> None:
    tools = {"wipe": ToolSettings(call=True), "t::keep": ToolSettings(call=False)}
    options = RunOptions(execute=mode, tools=tools)
    assert may_execute(read_subject(_Tool("wipe"), "t"), options) is None
    assert may_execute(read_subject(_Tool("keep"), "t"), options) == (
        "not called: its per-tool settings say call = false"
    )
    other = may_execute(read_subject(_Tool("other"), "t"), options)
    assert (other is None) == (mode is ExecuteMode.ALL)


def test_keys_naming_no_tool_and_ignores_naming_no_check_list_what_there_is() -> None:
    tables = ToolTables(
        "pyproject.toml [tool.toolnexus]",
        {
            "add": ToolSettings(ignore=("TN9999", "schema")),
            "t::nope": ToolSettings(),
            "gone::*": ToolSettings(),  # a target that did not load: given the benefit
            "e*": ToolSettings(ignore=("speed",)),
        },
        # A bare name might be a tool of the target that did not load: not listed.
        {"nothing": ToolArguments()},
    )
    problems = tables.problems([("t", "add"), ("t", "echo")], unloaded=["gone"])
    assert len(problems) == 2
    assert problems[0] == (
        "pyproject.toml [tool.toolnexus]: 1 key(s) match no tool of any target: 't::nope'."
        " A key is a tool name or target::name, either may be a glob; the tools"
        " are:\n  t::add\n  t::echo"
    )
    head, *listing = problems[1].splitlines()
    assert head.startswith(
        "pyproject.toml [tool.toolnexus]: 2 ignore(s) name no check: tools.add.ignore:"
        " 'TN9999'; tools.e*.ignore: 'speed'."
    )
    assert listing[0].startswith("  categories: naming, description, schema,")
    assert listing[1].startswith("  codes: TN001 target-loads, TN101 name-is-string,")
    assert any("TN901 concurrent-calls" in line for line in listing)
    assert ToolTables("s", {"*": ToolSettings(ignore=("TN1",))}).problems([("t", "a")]) == []


def test_pyproject_or_the_file_the_ini_names_and_not_both(pytester: pytest.Pytester) -> None:
    pytester.makepyprojecttoml(
        textwrap.dedent(
            """
            [tool.pytest.ini_options]
            addopts = "-q"

            [tool.toolnexus.tools.add]
            call_timeout = 9
            """
        )
    )
    config = pytester.parseconfig()
    from_pyproject = read_tables(config, None)
    assert from_pyproject.source == "pyproject.toml [tool.toolnexus]"
    assert from_pyproject.tools == {"add": ToolSettings(call_timeout=9.0)}
    named = pytester.path / "tools.yaml"
    named.write_text("tools:\n  echo:\n    call: false\n")
    from_file = read_tables(config, named)
    assert (from_file.source, from_file.tools) == (str(named), {"echo": ToolSettings(call=False)})
    named.write_text("tools:\n  echo:\n    cal: false\n")
    with pytest.raises(pytest.UsageError, match=r"toolnexus settings: .*unknown key"):
        read_tables(config, named)


def test_the_docs_tables_are_what_the_kit_reads() -> None:
    """Every settings and baseline example in docs/conformance.md reads without an error."""
    import re
    import tomllib

    from pytest_toolnexus._baseline import parse_entries

    page = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
    blocks = re.findall(r"^```toml\n(.*?)^```", page.read_text(), re.DOTALL | re.MULTILINE)
    settings = [b for b in blocks if b.startswith("[tool.toolnexus.")]
    baselines = [b for b in blocks if b.startswith("[accepted.")]
    assert settings
    assert baselines
    for block in settings:
        tables = parse_tables(tomllib.loads(block)["tool"]["toolnexus"], "docs", rootdir=ROOT)
        assert tables.tools
    for block in baselines:
        assert parse_entries(tomllib.loads(block), "docs")
