"""The one rule for what a value holds, and the one ``module:attr`` importer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from toolnexus_ref import (
    ImportSpecError,
    NotToolsError,
    Toolkit,
    as_tools,
    as_tools_async,
    import_object,
    is_tool,
    tool,
)
from toolnexus_ref.mcp.serve_cli import load_tools
from toolnexus_ref.native import NativeTool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


class Group:
    @tool
    def ping(self) -> str:
        """Answer pong."""
        return "pong"


class MethodToolkit:
    """A toolkit whose ``tools`` is a method, as upstream toolnexus's is."""

    def tools(self) -> list[Any]:
        return [add, echo]


class MappingToolkit:
    """A toolkit whose ``tools`` maps names to tools, as pydantic-ai's toolsets do."""

    tools = {"add": add}


def names(tools: list[Any]) -> list[str]:
    return [t.name for t in tools]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(add, ["add"], id="a tool"),
        pytest.param([add, echo], ["add", "echo"], id="a list"),
        pytest.param((t for t in [echo]), ["echo"], id="a generator"),
        pytest.param(Toolkit([add, echo]), ["add", "echo"], id="a Toolkit"),
        pytest.param(MethodToolkit(), ["add", "echo"], id="tools() method"),
        pytest.param(MappingToolkit(), ["add"], id="tools mapping"),
        pytest.param([Toolkit([add]), echo], ["add", "echo"], id="a toolkit in a list"),
        pytest.param(lambda: [add], ["add"], id="a factory"),
        pytest.param(Group(), ["ping"], id="a method group"),
        pytest.param([], [], id="an empty list"),
    ],
)
def test_each_accepted_form_gives_its_tools(value: Any, expected: list[str]) -> None:
    assert names(as_tools(value)) == expected


async def make_tools() -> list[Any]:
    return [echo]


def test_an_async_factory_is_awaited_without_a_running_loop() -> None:
    assert names(as_tools(make_tools)) == ["echo"]


@pytest.mark.anyio
async def test_inside_a_loop_the_async_rule_awaits_and_the_sync_one_says_what_to_use() -> None:
    assert names(await as_tools_async(make_tools)) == ["echo"]
    with pytest.raises(NotToolsError, match="as_tools_async"):
        as_tools(make_tools)


def plain_multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_a_plain_function_with_parameters_becomes_a_tool_by_inference() -> None:
    (made,) = as_tools(plain_multiply)
    assert isinstance(made, NativeTool)
    assert made.name == "plain_multiply"
    assert made.input_schema["required"] == ["a", "b"]


def untyped(a, *rest):  # type: ignore[no-untyped-def]
    return a


def test_a_function_that_cannot_be_inferred_says_how_to_fix_it() -> None:
    with pytest.raises(NotToolsError) as caught:
        as_tools([untyped], label="'mod:untyped'")
    message = str(caught.value)
    assert "cannot make a tool of the function untyped()" in message
    assert "@tool(name=..., description=...)" in message


@pytest.mark.parametrize(
    ("value", "found"),
    [
        pytest.param(42, "found a builtins.int: 42", id="an int"),
        pytest.param({"add": add}, "a mapping", id="a mapping"),
        pytest.param(Group, "the class", id="a class"),
        pytest.param("add", "found a builtins.str", id="a string"),
    ],
)
def test_a_value_matching_nothing_names_what_was_found_and_lists_the_forms(
    value: Any, found: str
) -> None:
    with pytest.raises(NotToolsError) as caught:
        as_tools(value, label="'mod:thing'")
    message = str(caught.value)
    assert message.startswith("'mod:thing' holds no tools")
    assert found in message
    assert "a toolkit (an object whose `tools` is a list" in message
    assert "a LangChain BaseTool" in message


def test_a_raising_factory_is_reported_with_its_exception() -> None:
    def broken() -> list[Any]:
        raise RuntimeError("no database")

    with pytest.raises(NotToolsError, match="raised RuntimeError: no database"):
        as_tools(broken)


def test_items_that_are_no_tools_stay_for_the_checks_to_judge() -> None:
    junk = object()
    assert as_tools([add, junk]) == [add, junk]


class _Computed:
    """A tool whose name and execute are properties; reading either one is recorded."""

    def __init__(self) -> None:
        self.read: list[str] = []

    @property
    def name(self) -> str:
        self.read.append("name")
        return "computed"

    @property
    def execute(self) -> Any:
        self.read.append("execute")
        return lambda args, ctx=None: None


class _Proxy:
    """A tool that answers through ``__getattr__``: it must be asked."""

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "name":
            return "proxy"
        if attribute == "execute":
            return lambda args, ctx=None: None
        raise AttributeError(attribute)


class _NotCallable:
    name = "not_callable"
    execute = None


def test_telling_a_tool_runs_none_of_its_properties() -> None:
    """A property may never return: finding the tools must not be the read that hangs."""
    computed = _Computed()
    proxy = _Proxy()
    assert is_tool(computed)
    assert computed.read == []
    assert as_tools([computed, proxy]) == [computed, proxy]
    assert computed.read == []
    assert is_tool(proxy)
    assert not is_tool(_NotCallable())


def test_the_toolkit_uses_the_rule_and_still_refuses_junk_by_position() -> None:
    assert Toolkit(add).names == ("add",)
    assert Toolkit([MethodToolkit(), plain_multiply]).names == ("add", "echo", "plain_multiply")
    with pytest.raises(TypeError, match="tool #1"):
        Toolkit([add, object()])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "proj_tools_mod.py").write_text(
        "from toolnexus_ref import tool\n\n"
        "@tool\n"
        "def hello(who: str) -> str:\n"
        '    """Greet someone."""\n'
        "    return 'hello ' + who\n\n"
        "nothing = []\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield tmp_path
    sys.modules.pop("proj_tools_mod", None)


def test_the_importer_finds_a_project_module_and_explains_what_is_wrong(project: Path) -> None:
    assert import_object("proj_tools_mod:hello", base_dir=project).name == "hello"
    with pytest.raises(ImportSpecError, match=r"expected package\.module:attr"):
        import_object("proj_tools_mod")
    with pytest.raises(ImportSpecError, match="has no attribute 'missing'"):
        import_object("proj_tools_mod:missing", base_dir=project)
    with pytest.raises(ImportSpecError, match="cannot import 'no_such_mod_x'"):
        import_object("no_such_mod_x:thing")


def test_toolnexus_serve_loads_through_the_same_rule(project: Path) -> None:
    assert names(load_tools("proj_tools_mod:hello")) == ["hello"]
    with pytest.raises(SystemExit, match="holds no tools"):
        load_tools("proj_tools_mod:nothing")
    with pytest.raises(SystemExit, match="has no attribute"):
        load_tools("proj_tools_mod:missing")


def test_the_mcp_server_serves_what_the_rule_finds() -> None:
    pytest.importorskip("mcp")
    from toolnexus_ref.mcp import build_server

    build_server(MethodToolkit())  # a toolkit whose tools() is a method
    with pytest.raises(NotToolsError):
        build_server(42)


def test_snapshots_read_toolkits_by_the_rule() -> None:
    from pytest_toolnexus.snapshots import to_snapshot_data

    data = to_snapshot_data(MethodToolkit())
    assert [d["name"] for d in data] == ["add", "echo"]
    assert to_snapshot_data({"plain": "data"}) == {"plain": "data"}
    assert to_snapshot_data(["a", "b"]) == ["a", "b"]


def test_a_project_package_sharing_a_libraries_name_is_not_mistaken_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project's own ``agents`` package is not the OpenAI Agents SDK."""
    from toolnexus_ref.adapters import adapt, foreign_kind

    class Agent:
        pass

    Agent.__module__ = "agents.mine"
    monkeypatch.setitem(sys.modules, "agents", type(sys)("agents"))  # no FunctionTool in it
    assert foreign_kind(Agent()) == "agents"
    assert adapt(Agent()) is None
