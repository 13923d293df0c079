"""LangChain tools (real langchain-core) as Tools, alone and through the plugin."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest
from _installed import skip_unless_installed
from _kit import KitRun, shown, start_kit
from _sessions import RunningSession, early
from toolnexus_conformance.targets import load_target, parse_target

from toolnexus_ref import ToolContext, as_tools
from toolnexus_ref.adapters.langchain import LangChainTool

skip_unless_installed("langchain_core")


@pytest.fixture(scope="module")
def lc() -> SimpleNamespace:
    """The LangChain tools these tests adapt, made (and langchain-core imported) when a
    test here first runs rather than at collection."""
    from langchain_core.tools import StructuredTool, ToolException, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers and return the sum."""
        return a + b

    @tool
    async def shout(text: str) -> str:
        """Return the text in capitals."""
        return text.upper()

    @tool
    async def wait_long(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return "woke"

    def _divide(a: float, b: float) -> float:
        if b == 0:
            raise ToolException("cannot divide by zero")
        return a / b

    def _crash(a: int) -> int:
        raise RuntimeError("the database is down")

    return SimpleNamespace(
        add=add,
        shout=shout,
        wait_long=wait_long,
        divide=StructuredTool.from_function(_divide, name="divide", description="Divide a by b."),
        handled=StructuredTool.from_function(
            _divide, name="divide_handled", description="Divide a by b.", handle_tool_error=True
        ),
        crash=StructuredTool.from_function(_crash, name="crash", description="Always fails."),
    )


def test_a_single_langchain_tool_target_is_one_tool_not_its_fields(lc: SimpleNamespace) -> None:
    loaded = asyncio.run(load_target(parse_target(lc.add)))
    assert len(loaded.tools) == 1
    (only,) = loaded.tools
    assert isinstance(only, LangChainTool)
    assert only.name == "add"


def test_the_declaration_is_what_langchain_sends_to_providers(lc: SimpleNamespace) -> None:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    (adapted,) = as_tools(lc.add)
    sent = convert_to_openai_tool(lc.add)["function"]
    assert adapted.name == sent["name"]
    assert adapted.description == sent["description"]
    assert adapted.input_schema == sent["parameters"]
    assert adapted.wrapped is lc.add


@pytest.mark.anyio
async def test_calls_map_langchain_outcomes_as_a_langchain_host_does(lc: SimpleNamespace) -> None:
    tools = {t.name: t for t in as_tools([lc.add, lc.shout, lc.divide, lc.handled, lc.crash])}
    ok = await tools["add"].execute({"a": 2, "b": 3})
    assert (ok.output, ok.is_error) == ("5", False)
    assert (await tools["shout"].execute({"text": "hi"})).output == "HI"  # ainvoke
    raised = await tools["divide"].execute({"a": 1, "b": 0})
    assert (raised.output, raised.is_error) == ("cannot divide by zero", True)
    message = await tools["divide_handled"].execute({"a": 1, "b": 0})  # status="error"
    assert (message.output, message.is_error) == ("cannot divide by zero", True)
    invalid = await tools["add"].execute({"a": "many"})
    assert invalid.is_error
    assert "a: Input should be a valid integer" in invalid.output
    assert "b: Field required" in invalid.output
    not_an_object = await tools["add"].execute("2 and 3")  # type: ignore[arg-type]
    assert not_an_object.is_error


@pytest.mark.anyio
async def test_other_exceptions_escape_so_the_suites_can_see_them(lc: SimpleNamespace) -> None:
    (adapted,) = as_tools(lc.crash)
    with pytest.raises(RuntimeError, match="the database is down"):
        await adapted.execute({"a": 1})


@pytest.mark.anyio
async def test_a_cancel_abandons_the_call_with_an_error_result(lc: SimpleNamespace) -> None:
    (adapted,) = as_tools(lc.wait_long)
    ctx = ToolContext()
    asyncio.get_running_loop().call_later(0.05, ctx.cancel, "user pressed stop")
    result = await adapted.execute({"seconds": 30}, ctx)
    assert result.is_error
    assert "user pressed stop" in result.output
    expired = await adapted.execute({"seconds": 30}, ToolContext(timeout=0.05))
    assert expired.is_error
    assert expired.metadata.get("error_type") == "TimeoutError"


TOOLS = '''
from langchain_core.tools import StructuredTool, ToolException, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@tool
async def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


def _divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolException("cannot divide by zero")
    return a / b


divide = StructuredTool.from_function(_divide, name="divide", description="Divide a by b.")


@tool("echo text")
def spaced(text: str) -> str:
    """Echo the text back."""
    return text


good = [add, shout, divide]
'''


@early
def langchain_tools_kit(folder: Path) -> RunningSession:
    """The kit through the plugin on LangChain tools: started early, as its files and
    arguments are fixed and it mostly waits for the tools' processes."""
    (folder / "lc_plugin_tools.py").write_text(TOOLS)
    return start_kit(
        folder, "lc_plugin_tools:good", "lc_plugin_tools:spaced", "lc_plugin_tools:add"
    )


def test_through_the_plugin_good_tools_pass_and_a_spaced_name_is_found(
    langchain_tools_kit: RunningSession,
) -> None:
    done = langchain_tools_kit.result()
    run = KitRun.of(done)
    good = [r for r in run.failed(severity="error") if r["target"] == "lc_plugin_tools:good"]
    assert not good, shown(good)
    for name in ("add", "shout", "divide"):
        assert {"TN501", "TN601", "TN602", "TN603", "TN701"} <= set(run.live_passed(name)), name
    spaced = run.outcomes("echo text")
    assert spaced["TN102"] == "failed"
    single = [r for r in run.records if r["target"] == "lc_plugin_tools:add"]
    assert {r["tool"] for r in single} == {"add", "*"}


def test_the_library_is_known_by_the_class_module_without_importing_anything(
    lc: SimpleNamespace,
) -> None:
    import toolnexus_ref.adapters as adapters

    assert adapters.foreign_kind(lc.add) == "langchain_core"
    assert adapters.foreign_kind(object()) is None


@pytest.mark.anyio
async def test_the_mcp_server_serves_langchain_tools_through_the_same_rule(
    lc: SimpleNamespace,
) -> None:
    pytest.importorskip("mcp")
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from toolnexus_ref.mcp import mcp_client

    async with mcp_client([lc.add, lc.divide]) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["add", "divide"]
        sent = convert_to_openai_tool(lc.add)["function"]["parameters"]
        assert listed.tools[0].input_schema == sent
        answer = await client.call_tool("divide", {"a": 1, "b": 0})
        assert answer.is_error
        assert answer.content[0].text == "cannot divide by zero"
