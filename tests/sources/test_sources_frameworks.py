"""OpenAI Agents ``FunctionTool`` and pydantic-ai ``Tool`` (the real packages) as Tools."""

# No ``from __future__ import annotations``: pydantic-ai reads a tool's annotations with
# ``get_type_hints`` in the module's namespace, and ``RunContext`` is imported only in
# the fixture that defines ``who``, so its annotation must be the class, not its name.

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _installed import skip_unless_installed
from _kit import KitRun, shown, start_kit
from _sessions import RunningSession, early

from toolnexus_ref import as_tools
from toolnexus_ref.adapters.openai_agents import AgentsFunctionTool
from toolnexus_ref.adapters.pydantic_ai import PydanticAITool

skip_unless_installed("agents", "pydantic_ai")


@pytest.fixture(scope="module")
def agents_tools() -> tuple[Any, Any, Any]:
    """``add``, ``fails`` and ``crashes``, as the Agents SDK's ``function_tool`` makes them."""
    from agents import function_tool

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @function_tool
    def fails(a: int) -> int:
        """Always fails; the SDK's default handler turns it into text."""
        raise RuntimeError("secret internals")

    @function_tool(failure_error_function=None)
    def crashes(a: int) -> int:
        """Always fails, with no handler: the SDK's run fails."""
        raise RuntimeError("the database is down")

    return add, fails, crashes


@pytest.fixture(scope="module")
def pydantic_functions() -> tuple[Callable[..., int], Callable[..., str]]:
    """``multiply`` and ``who``, plain functions for pydantic-ai's ``Tool``."""
    from pydantic_ai import ModelRetry, RunContext

    def multiply(a: int, b: int) -> int:
        """Multiply two positive integers."""
        if a < 0:
            raise ModelRetry("a must be positive")
        return a * b

    def who(ctx: RunContext[None], greeting: str) -> str:
        """Greet, using the run context."""
        return f"{greeting}, deps={ctx.deps}"

    return multiply, who


@pytest.mark.anyio
async def test_agents_function_tools_keep_the_sdks_schema_and_error_handling(
    agents_tools: tuple[Any, Any, Any],
) -> None:
    add, fails, crashes = agents_tools
    tools = {t.name: t for t in as_tools([add, fails, crashes])}
    assert all(isinstance(t, AgentsFunctionTool) for t in tools.values())
    assert tools["add"].input_schema == add.params_json_schema
    ok = await tools["add"].execute({"a": 2, "b": 3})
    assert (ok.output, ok.is_error) == ("5", False)
    handled = await tools["fails"].execute({"a": 1})
    assert handled.is_error
    assert "secret internals" not in handled.output  # the SDK's message, not the exception
    with pytest.raises(RuntimeError, match="the database is down"):
        await tools["crashes"].execute({"a": 1})


@pytest.mark.anyio
async def test_pydantic_ai_tools_validate_and_retry_as_an_agent_run_does(
    pydantic_functions: tuple[Callable[..., int], Callable[..., str]],
) -> None:
    from pydantic_ai import Tool

    multiply, who = pydantic_functions
    mul, greet = as_tools([Tool(multiply), Tool(who, takes_ctx=True)])
    assert isinstance(mul, PydanticAITool)
    assert mul.input_schema["required"] == ["a", "b"]
    assert (await mul.execute({"a": 2, "b": 3})).output == "6"
    retry = await mul.execute({"a": -1, "b": 3})
    assert (retry.output, retry.is_error, retry.retryable) == ("a must be positive", True, True)
    invalid = await mul.execute({"a": "x"})
    assert invalid.is_error
    assert invalid.metadata["error_type"] == "InvalidArguments"
    assert (await greet.execute({"greeting": "hi"})).output == "hi, deps=None"


TOOLS = '''
from agents import function_tool
from pydantic_ai import Tool


@function_tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


agents_tools = [add]
pydantic_tools = [Tool(multiply)]
'''


@early
def framework_tools_kit(folder: Path) -> RunningSession:
    """The kit through the plugin on both SDKs' tools: started early, as its files and
    arguments are fixed and it mostly waits for the tools' processes."""
    (folder / "fw_plugin_tools.py").write_text(TOOLS)
    return start_kit(folder, "fw_plugin_tools:agents_tools", "fw_plugin_tools:pydantic_tools")


def test_through_the_plugin_good_tools_have_no_error_and_real_live_verdicts(
    framework_tools_kit: RunningSession,
) -> None:
    done = framework_tools_kit.result()
    run = KitRun.of(done)
    errors = run.failed(severity="error")
    assert not errors, shown(errors)
    for name in ("add", "multiply"):
        assert {"TN501", "TN601", "TN602", "TN603"} <= set(run.live_passed(name)), name


def test_the_frameworks_own_containers_hold_their_tools(
    agents_tools: tuple[Any, Any, Any],
    pydantic_functions: tuple[Callable[..., int], Callable[..., str]],
) -> None:
    from agents import Agent
    from langchain_core.tools import BaseToolkit
    from langchain_core.tools import tool as langchain_tool
    from pydantic_ai import FunctionToolset

    @langchain_tool
    def ping() -> str:
        """Answer pong."""
        return "pong"

    class Kit(BaseToolkit):
        def get_tools(self) -> list[Any]:
            return [ping]

    add, _, _ = agents_tools
    multiply, _ = pydantic_functions
    agent = Agent(name="helper", tools=[add])
    toolset = FunctionToolset([multiply])
    assert [t.name for t in as_tools([agent, toolset, Kit()])] == ["add", "multiply", "ping"]
