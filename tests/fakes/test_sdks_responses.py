"""The OpenAI Responses API against the fakes, driven by the real openai SDK (create and
stream), the OpenAI Agents SDK, pydantic-ai and LangChain, through respx and the
loopback server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls
from toolnexus_ref import BaseTool
from toolnexus_ref.wire import ToolDecl
from toolnexus_ref.wire import responses as responses_wire

if TYPE_CHECKING:  # the tests import the SDKs themselves: collecting this module stays cheap
    import openai


def _decls(tools: list[BaseTool]) -> list[dict[str, Any]]:
    return responses_wire.declarations(
        [ToolDecl(t.name, t.description, dict(t.input_schema)) for t in tools]
    )


def _run(tools: list[BaseTool], name: str, arguments: Any) -> str:
    by_name = {t.name: t for t in tools}
    return asyncio.run(by_name[name].execute(arguments)).output


def _script() -> list[Any]:
    return [
        tool_calls(("add", {"a": 2, "b": 3}), ("echo", {"text": "hi there, a longer text"})),
        tool_calls(("add", {"a": 5, "b": 10})),
        text("The answer is 15."),
    ]


@contextmanager
def _base_url(fake: FakeLLM, how: str) -> Iterator[str | None]:
    if how == "respx":
        with fake.respx():
            yield None
    else:
        with fake.serve() as server:
            yield server.openai_base_url


def _sdk_loop(client: openai.OpenAI, tools: list[BaseTool], stream: bool) -> str:
    items: list[Any] = [{"role": "user", "content": "add things"}]
    for _ in range(5):
        kwargs: dict[str, Any] = {
            "model": "gpt-fake",
            "instructions": "Use the tools.",
            "input": items,
            "tools": _decls(tools),
        }
        if stream:
            with client.responses.stream(**kwargs) as s:
                kinds = [event.type for event in s]
                response = s.get_final_response()
            assert kinds[:2] == ["response.created", "response.in_progress"]
            assert kinds[-1] == "response.completed"
        else:
            response = client.responses.create(**kwargs)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            assert response.status == "completed"
            return response.output_text
        items += [c.model_dump(exclude_none=True) for c in calls]
        for c in calls:
            out = _run(tools, c.name, json.loads(c.arguments))
            items.append({"type": "function_call_output", "call_id": c.call_id, "output": out})
    raise AssertionError("no final answer")


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_openai_sdk_runs_a_responses_loop(tools: list[BaseTool], how: str, stream: bool) -> None:
    import openai

    fake = FakeLLM(_script(), fragment=3)
    with _base_url(fake, how) as base_url:
        client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
        assert _sdk_loop(client, tools, stream) == "The answer is 15."
    fake.verify()
    assert [r.provider for r in fake.requests] == ["responses"] * 3
    assert fake.requests[0].stream is stream
    assert fake.requests[0].messages[0].text == "Use the tools."  # instructions
    fake.assert_tool_called("add", {"a": 5, "b": 10})
    assert [r.output for r in fake.last_request.tool_results] == [
        "5",
        "hi there, a longer text",
        "15",
    ]


def test_previous_response_id_continues_a_served_conversation(tools: list[BaseTool]) -> None:
    import openai

    fake = FakeLLM([tool_calls(("add", {"a": 1, "b": 2})), text("It is 3.")])
    with fake.respx():
        client = openai.OpenAI(api_key="sk-test", max_retries=0)
        first = client.responses.create(model="m", input="1 + 2?", tools=_decls(tools))
        (call,) = [o for o in first.output if o.type == "function_call"]
        second = client.responses.create(
            model="m",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "3"}],
            tools=_decls(tools),
        )
        assert second.output_text == "It is 3."
        with pytest.raises(openai.BadRequestError, match="Previous response with id 'resp_nope'"):
            client.responses.create(model="m", previous_response_id="resp_nope", input="x")
    assert first.id == "resp_fake1"
    # the second request carried only the result; the fake resolved the rest
    assert [m.role for m in fake.requests[1].messages] == ["user", "assistant", "tool"]
    fake.assert_tool_called("add", {"a": 1, "b": 2})
    assert fake.refusals[0][1] == "previous_response_not_found"


def _agents_tools() -> list[Any]:
    agents = pytest.importorskip("agents")

    @agents.function_tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    return [add]


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_openai_agents_sdk(how: str, stream: bool) -> None:
    import openai

    agents = pytest.importorskip("agents")
    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 40})), text("42")])
    with _base_url(fake, how) as base_url:
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
        model = agents.OpenAIResponsesModel(model="gpt-fake", openai_client=client)
        agent = agents.Agent(name="adder", instructions="Add.", model=model, tools=_agents_tools())
        config = agents.RunConfig(tracing_disabled=True)

        async def go() -> Any:
            if not stream:
                return await agents.Runner.run(agent, "2 + 40?", run_config=config)
            result = agents.Runner.run_streamed(agent, "2 + 40?", run_config=config)
            async for _ in result.stream_events():
                pass
            return result

        result = asyncio.run(go())
    assert result.final_output == "42"
    fake.verify()
    assert {r.provider for r in fake.requests} == {"responses"}
    assert fake.requests[0].messages[0].text == "Add."
    assert fake.last_request.tool_results[0].output == "42"


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_pydantic_ai_responses_model(how: str, stream: bool) -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 40})), text("42")])
    with _base_url(fake, how) as base_url:
        provider = OpenAIProvider(base_url=base_url, api_key="sk-test")
        agent = pydantic_ai.Agent(OpenAIResponsesModel("gpt-fake", provider=provider))

        @agent.tool_plain
        def add(a: int, b: int) -> str:
            """Add two integers."""
            return str(a + b)

        async def go() -> str:
            if not stream:
                return (await agent.run("2 + 40?")).output
            async with agent.run_stream("2 + 40?") as run:
                return await run.get_output()

        assert asyncio.run(go()) == "42"
    fake.verify()
    assert {r.provider for r in fake.requests} == {"responses"}
    assert all(r.stream is stream for r in fake.requests)
    assert fake.last_request.tool_results[0].output == "42"


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_langchain_use_responses_api(how: str, stream: bool) -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 40})), text("42")])
    with _base_url(fake, how) as base_url:
        model = langchain_openai.ChatOpenAI(
            model="gpt-fake",
            api_key="sk-test",
            base_url=base_url,
            use_responses_api=True,
            max_retries=0,
        ).bind_tools([add])
        messages: list[Any] = [HumanMessage("2 + 40?")]
        for _ in range(3):
            if stream:
                reply: Any = None
                for chunk in model.stream(messages):
                    reply = chunk if reply is None else reply + chunk
            else:
                reply = model.invoke(messages)
            assert isinstance(reply, AIMessage)
            messages.append(reply)
            if not reply.tool_calls:
                break
            for tc in reply.tool_calls:
                messages.append(ToolMessage(add.invoke(tc["args"]), tool_call_id=tc["id"]))
    assert messages[-1].text == "42"
    fake.verify()
    assert {r.provider for r in fake.requests} == {"responses"}
    assert fake.last_request.tool_results[0].output == "42"


def test_an_unstored_response_cannot_be_continued() -> None:
    import openai

    fake = FakeLLM([text("one")])
    with fake.respx():
        client = openai.OpenAI(api_key="sk-test", max_retries=0)
        first = client.responses.create(model="m", input="hi", store=False)
        with pytest.raises(openai.BadRequestError, match="not found"):
            client.responses.create(model="m", input="more", previous_response_id=first.id)
    assert [r for _, r, _ in fake.refusals] == ["previous_response_not_found"]
