"""The arguments file and the hook's results, read directly (the sessions are in test_plugin_arguments)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from toolnexus_conformance._options import RunOptions, ToolArguments

from pytest_toolnexus._arguments import (
    ArgumentsError,
    draw_values,
    escape_key,
    from_hook,
    merge,
    read_file,
    tool_arguments,
    unmatched_keys,
)

ROOT = Path("/project")


def read(tmp_path: Path, name: str, text: str, **env: str) -> dict[str, ToolArguments]:
    path = tmp_path / name
    path.write_text(text)
    return read_file(path, rootdir=ROOT, environ=env)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "a.toml",
            '[tools.t]\nexamples = [{ p = "${V}/x" }]\n[tools.t.values]\nq = [1, "{rootdir}"]\n',
        ),
        (
            "a.yaml",
            "tools:\n  t:\n    examples: [{p: '${V}/x'}]\n    values: {q: [1, '{rootdir}']}\n",
        ),
        (
            "a.yml",
            "tools:\n  t:\n    examples: [{p: '${V}/x'}]\n    values: {q: [1, '{rootdir}']}\n",
        ),
        (
            "a.json",
            '{"tools": {"t": {"examples": [{"p": "${V}/x"}], "values": {"q": [1, "{rootdir}"]}}}}',
        ),
    ],
)
def test_each_format_reads_the_same(tmp_path: Path, name: str, text: str) -> None:
    assert read(tmp_path, name, text, V="v") == {
        "t": ToolArguments(({"p": "v/x"},), {"q": (1, "/project")})
    }


def test_dollars_and_braces_that_are_not_placeholders_stay(tmp_path: Path) -> None:
    found = read(tmp_path, "a.toml", '[tools.t]\nexamples = [{ p = "$${V} {x} $V {ROOTDIR}" }]\n')
    assert found["t"].examples == ({"p": "${V} {x} $V {ROOTDIR}"},)


def test_an_empty_file_gives_nothing(tmp_path: Path) -> None:
    assert read(tmp_path, "a.yaml", "") == {}
    assert read(tmp_path, "a.toml", "") == {}


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("a.toml", "[tools.t\n", "not valid TOML"),
        ("a.yaml", "tools: [\n", "not valid YAML"),
        ("a.json", "{", "not valid JSON"),
        ("a.toml", "[tools.t]\nexample = []\n", "unknown key(s) 'example'"),
        ("a.toml", "[tool.t]\nexamples = []\n", "unknown top-level key(s) 'tool'"),
        ("a.yaml", "- 1\n", "the top level must be a table"),
        ("a.yaml", "tools: [1]\n", "'tools' must be a table"),
        ("a.yaml", "tools: {t: [1]}\n", "tools.t: expected a table"),
        ("a.toml", "[tools.t]\nexamples = [1]\n", "'examples' must be a list of argument objects"),
        ("a.toml", '[tools.t]\nvalues = { q = "x" }\n', "values.q must be a list of values"),
        ("a.toml", "[tools.t]\nvalues = [1]\n", "'values' must be a table"),
        (
            "a.toml",
            '[tools.t]\nexamples = [{ p = "${UNSET}" }]\n',
            "environment variable UNSET is not set",
        ),
        ("a.ini", "", "unknown format '.ini'"),
    ],
)
def test_a_bad_file_says_where_and_why(tmp_path: Path, name: str, text: str, expected: str) -> None:
    with pytest.raises(ArgumentsError) as raised:
        read(tmp_path, name, text)
    assert str(raised.value).startswith(str(tmp_path / name))
    assert expected in str(raised.value)


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ArgumentsError, match="cannot be read"):
        read_file(tmp_path / "none.toml", rootdir=ROOT)


def test_hook_results_take_tool_arguments_and_refuse_what_cannot_cross() -> None:
    given = ToolArguments(({"a": 1},), {"b": (2,)})
    assert tool_arguments(given, "w") == given
    with pytest.raises(ArgumentsError, match="must be plain data"):
        tool_arguments({"examples": [{"a": lambda: 1}]}, "w")
    with pytest.raises(ArgumentsError, match=r"values\.b must be a list"):
        tool_arguments({"values": {"b": st.integers()}}, "w")  # no drawing outside the hook


def test_strategies_are_drawn_distinct_bounded_and_the_same_for_a_seed() -> None:
    first = draw_values(st.integers(0, 1000), "w", count=5, seed=7)
    assert len(first) == 5
    assert len(set(first)) == 5
    assert draw_values(st.integers(0, 1000), "w", count=5, seed=7) == first
    assert set(draw_values(st.sampled_from(["a", "b"]), "w", count=5, seed=7)) == {"a", "b"}
    with pytest.raises(ArgumentsError, match="a list of values or a hypothesis strategy"):
        draw_values("abc", "w", count=5, seed=7)


def test_merge_keeps_order_and_options_merge_the_keys() -> None:
    merged = merge(
        {"t": ToolArguments(({"a": 1},), {"p": (1,)})},
        {"t": ToolArguments(({"a": 2},), {"p": (2,), "q": (3,)})},
    )
    assert merged == {"t": ToolArguments(({"a": 1}, {"a": 2}), {"p": (1, 2), "q": (3,)})}
    key = f"{escape_key('tg[1]')}::{escape_key('we*rd?')}"
    options = RunOptions(arguments={key: ToolArguments(({"x": 1},))})
    assert options.arguments_for("tg[1]", "we*rd?").examples == ({"x": 1},)
    assert options.arguments_for("tg1", "weird!").examples == ()


def test_unmatched_keys() -> None:
    tools = [("t1", "get_user"), ("t2", "ping")]
    keys = ["get_user", "t2::*", "*", "get_usr", "t3::ping", "t1::ping"]
    assert unmatched_keys(keys, tools) == ["get_usr", "t3::ping", "t1::ping"]
    # A target that did not load may hold the tool: its own finding says why.
    assert unmatched_keys(keys, tools, unloaded=["t3"]) == ["t1::ping"]


def test_from_hook_merges_every_implementation_and_keeps_going_past_problems(
    pytester: pytest.Pytester,
) -> None:
    class Plugin:
        @pytest.hookimpl
        def pytest_toolnexus_arguments(self, config: Any, target: str, tool: str) -> Any:
            if tool == "skips":
                pytest.skip("no database")
            if tool == "exits":
                raise SystemExit(3)
            if tool == "bad":
                return {"examples": [{"a": 1}], "value": {}}
            if tool == "t[1]":
                return ToolArguments(({"a": 1},))
            return None

    class Strategies:
        @pytest.hookimpl
        def pytest_toolnexus_arguments(self, config: Any, target: str, tool: str) -> Any:
            return {"values": {"v": st.just(5)}} if tool == "t[1]" else None

    config = pytester.parseconfigure()
    config.pluginmanager.register(Plugin())
    config.pluginmanager.register(Strategies())
    tools = [("tg", n) for n in ("skips", "exits", "bad", "t[1]", "none")]
    found, problems = from_hook(config, tools, count=3, seed=1)
    assert list(found) == ["tg::t[[]1]"]
    options = RunOptions(arguments=found)
    assert options.arguments_for("tg", "t[1]") == ToolArguments(({"a": 1},), {"v": (5,)})
    assert problems[0].endswith("tool='skips') raised Skipped: no database")
    assert problems[1].endswith("tool='exits') raised SystemExit: 3")
    assert "tool='bad'): unknown key(s) 'value'" in problems[2]
    assert len(problems) == 3


def test_the_docs_example_file_reads(tmp_path: Path) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
    text = docs.read_text(encoding="utf-8")
    block = text.split("```toml\n# toolnexus-arguments.toml\n", 1)[1].split("```", 1)[0]
    found = read(tmp_path, "toolnexus-arguments.toml", block, INVOICE_API_KEY="k")
    assert found["get_user"].values == {"user_id": ("u-1001", "u-1002")}
    assert found["fetch_invoice"].values == {"api_key": ("k",)}
    assert found["stdio:python -m my_server::*search*"].examples == (
        {"query": "readme", "root": "/project/docs"},
    )
