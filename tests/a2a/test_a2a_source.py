"""The A2A source against real agents (the SDK's server components on loopback)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Iterator
from typing import Any

import pytest
from _a2a_agents import ignores_cancel, more_tools

from toolnexus_ref import Source, ToolContext, sanitize
from toolnexus_ref.a2a import (
    A2ATool,
    CardError,
    LoopbackAgent,
    agent_app,
    agent_card,
    open_agent,
    reading_of,
    serve_loopback,
    task_state,
)
from toolnexus_ref.a2a._server import ToolsExecutor

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def busy_agent() -> Iterator[LoopbackAgent]:
    with serve_loopback(more_tools(), name="busy.agent") as agent:
        yield agent


@pytest.fixture(scope="module", params=[True, False], ids=["streaming", "blocking"])
def any_agent(request: pytest.FixtureRequest) -> Iterator[LoopbackAgent]:
    tools = more_tools()

    def app(url: str) -> Any:
        card = agent_card(tools, url=url, name="busy.agent", streaming=request.param)
        return agent_app(card, ToolsExecutor(tools))

    with serve_loopback(app=app) as agent:
        yield agent


async def _tools(agent: LoopbackAgent) -> dict[str, A2ATool]:
    source = await open_agent(agent.url)
    return {t.skill_id or "": t for t in source.tools}


async def test_calls_share_one_tls_context_not_one_each(
    busy_agent: LoopbackAgent, tls_contexts_built: list[object]
) -> None:
    """Each call opens a client; building its TLS context cost more CPU than the call."""
    refuse = (await _tools(busy_agent))["refuse"]
    for index in range(3):
        result = await refuse.execute({"message": f"job {index}"}, ToolContext())
        assert f"cannot do 'job {index}'" in result.output  # the agent's own answer
    assert len(tls_contexts_built) <= 1  # none when an earlier test of this process built it


async def test_one_tool_per_skill_named_agent_then_skill(busy_agent: LoopbackAgent) -> None:
    source = await open_agent(busy_agent.url)
    assert source.reading.problems == ()
    assert [t.name for t in source.tools] == [
        "busy_agent_refuse",
        "busy_agent_clarify",
        "busy_agent_add",
        "busy_agent_nap",
    ]
    add = source.tools[2]
    assert add.source == Source.A2A.value == "a2a"
    assert add.description == "Add two integers."
    assert add.input_schema["required"] == ["message"]
    assert add.input_schema["properties"]["data"]["type"] == "object"  # the skill takes JSON
    assert add.annotations.read_only is True  # the skill is tagged read-only


async def test_only_a_skill_over_a_custom_transport_makes_the_exploration_take_turns(
    busy_agent: LoopbackAgent,
) -> None:
    """Over httpx's own transport a call only awaits the agent: its tools are explored at once."""
    import httpx
    from toolnexus_conformance._subject import read_subjects
    from toolnexus_conformance.live._explorer import runs_on_loop

    networked = (await open_agent(busy_agent.url)).tools[0]
    mocked = A2ATool(
        networked.reading, transport=httpx.MockTransport(lambda r: httpx.Response(500))
    )
    subjects = read_subjects([networked, mocked], busy_agent.target)
    assert [runs_on_loop(s) for s in subjects] == [False, True]


def test_a_card_without_skills_is_one_tool_and_says_nothing_is_safe() -> None:
    reading = reading_of(
        {
            "name": "Plain Agent",
            "description": "Answers questions.",
            "version": "1",
            "supportedInterfaces": [
                {
                    "url": "http://127.0.0.1:9/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "capabilities": {},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }
    )
    tool = A2ATool(reading)
    assert tool.name == sanitize("Plain Agent") == "Plain_Agent"
    assert tool.description == "Answers questions."
    assert set(tool.input_schema["properties"]) == {"message"}
    assert tool.annotations.read_only is False
    assert tool.annotations.open_world is True


async def test_completed_failed_and_input_required(any_agent: LoopbackAgent) -> None:
    tools = await _tools(any_agent)
    done = await tools["add"].execute({"message": "add them", "data": {"a": 2, "b": 3}})
    assert (done.output, done.is_error) == ("5", False)
    assert done.metadata["a2a_state"] == "completed"

    failed = await tools["refuse"].execute({"message": "fly"})
    assert failed.is_error
    assert failed.output == "The agent failed the task: cannot do 'fly'"
    assert failed.metadata["a2a_state"] == "failed"

    asked = await tools["clarify"].execute({"message": "weather?"})
    assert asked.is_error
    assert "Which city do you mean?" in asked.output
    assert asked.metadata["a2a_state"] == "input-required"
    assert asked.metadata["pending"]["question"] == "Which city do you mean?"


async def test_cancel_sends_cancel_task_and_the_task_ends(
    busy_agent: LoopbackAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The agent runs in this process: on a loaded machine its answer to cancel_task can
    # take longer than the two seconds a caller waits for it, which is not this test's.
    monkeypatch.setattr("toolnexus_ref.a2a._tool.CANCEL_GRACE", 30.0)
    nap = (await _tools(busy_agent))["nap"]
    ctx = ToolContext()
    asyncio.get_running_loop().call_later(0.5, ctx.cancel, "user pressed stop")
    result = await nap.execute({"message": "zz"}, ctx)
    assert result.is_error
    assert result.metadata["cancelled"] is True
    assert "user pressed stop" in result.output
    assert "was cancelled" in result.output
    assert await task_state(nap.client, result.metadata["a2a_task_id"]) == "canceled"


async def test_a_deadline_cancels_the_task_too(busy_agent: LoopbackAgent) -> None:
    nap = (await _tools(busy_agent))["nap"]
    result = await nap.execute({"message": "zz"}, ToolContext(timeout=0.5))
    assert result.is_error
    assert result.metadata["error_type"] == "TimeoutError"
    assert result.metadata["a2a_state"] == "canceled"


async def test_transport_errors_are_results() -> None:
    reading = reading_of(
        {
            "name": "gone",
            "description": "An agent that is not there.",
            "version": "1",
            "supportedInterfaces": [
                {
                    "url": "http://127.0.0.1:9/",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ],
            "skills": [{"id": "x", "name": "x", "description": "x", "tags": []}],
        }
    )
    result = await A2ATool(reading, reading.card.skills[0]).execute({"message": "hello"})
    assert result.is_error
    assert result.retryable
    assert result.output.startswith("A2A request failed:")


async def test_bad_arguments_are_refused_before_sending(busy_agent: LoopbackAgent) -> None:
    result = await (await _tools(busy_agent))["add"].execute({"msg": "x"})
    assert result.is_error
    assert result.metadata["error_type"] == "InvalidArguments"


async def test_a_card_that_is_not_json_is_a_card_error() -> None:
    def app(url: str) -> Any:
        from starlette.applications import Starlette
        from starlette.responses import PlainTextResponse
        from starlette.routing import Route

        async def page(request: Any) -> PlainTextResponse:
            return PlainTextResponse("<html>hello</html>")

        return Starlette(routes=[Route("/.well-known/agent-card.json", page)])

    with serve_loopback(app=app) as agent, pytest.raises(CardError, match="not JSON"):
        await open_agent(agent.url)


async def test_an_answer_continues_the_suspended_task(busy_agent: LoopbackAgent) -> None:
    clarify = (await _tools(busy_agent))["clarify"]
    asked = await clarify.execute({"message": "weather?"})
    pending = asked.metadata["pending"]
    again = await clarify.execute({"message": "Lisbon"}, ToolContext(answer=pending))
    # The same task goes on (this agent asks again; a real one would answer).
    assert again.metadata["a2a_task_id"] == pending["a2a_task_id"]
    assert again.metadata["a2a_context_id"] == pending["a2a_context_id"]


async def test_the_result_says_when_the_agent_does_not_cancel() -> None:
    # Ten seconds of work: the cancel, 0.3 s in, comes first however late a busy machine
    # runs this loop's timer (one second was outlasted once, under -n 4 on two cores).
    with serve_loopback(app=functools.partial(ignores_cancel, seconds=10.0)) as agent:
        (work,) = (await open_agent(agent.url)).tools
        ctx = ToolContext()
        asyncio.get_running_loop().call_later(0.3, ctx.cancel)
        result = await work.execute({"message": ""}, ctx)
    assert result.is_error
    assert result.metadata["cancelled"] is True
    assert "the agent reports it working" in result.output
