"""The real openai and anthropic SDKs run a multi-turn tool loop against the fakes,
through respx and through the loopback server, streamed and not."""

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
from toolnexus_ref.wire import anthropic as anthropic_wire
from toolnexus_ref.wire import openai as openai_wire

if TYPE_CHECKING:  # the tests import the SDKs themselves: collecting this module stays cheap
    import anthropic
    import openai


def _decls(tools: list[BaseTool]) -> list[ToolDecl]:
    return [ToolDecl(t.name, t.description, dict(t.input_schema)) for t in tools]


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
def _transport(fake: FakeLLM, how: str, provider: str) -> Iterator[str | None]:
    if how == "respx":
        with fake.respx():
            yield None
    else:
        with fake.serve() as server:
            yield server.openai_base_url if provider == "openai" else server.anthropic_base_url


def _openai_loop(client: openai.OpenAI, tools: list[BaseTool], stream: bool) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add things"}]
    declared = openai_wire.declarations(_decls(tools))
    for _ in range(5):
        if stream:
            with client.chat.completions.stream(
                model="gpt-fake", messages=messages, tools=declared
            ) as s:
                completion = s.get_final_completion()
        else:
            completion = client.chat.completions.create(
                model="gpt-fake", messages=messages, tools=declared
            )
        message = completion.choices[0].message
        if not message.tool_calls:
            assert completion.choices[0].finish_reason == "stop"
            return message.content or ""
        assert completion.choices[0].finish_reason == "tool_calls"
        messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
        for tc in message.tool_calls:
            args = json.loads(tc.function.arguments)
            out = _run(tools, tc.function.name, args)
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": out})
    raise AssertionError("no final answer")


def _anthropic_loop(client: anthropic.Anthropic, tools: list[BaseTool], stream: bool) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "add things"}]
    declared = anthropic_wire.declarations(_decls(tools))
    for _ in range(5):
        if stream:
            with client.messages.stream(
                model="claude-fake", max_tokens=256, messages=messages, tools=declared
            ) as s:
                reply = s.get_final_message()
        else:
            reply = client.messages.create(
                model="claude-fake", max_tokens=256, messages=messages, tools=declared
            )
        uses = [b for b in reply.content if b.type == "tool_use"]
        if not uses:
            assert reply.stop_reason == "end_turn"
            return "".join(b.text for b in reply.content if b.type == "text")
        assert reply.stop_reason == "tool_use"
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        results = [
            {"type": "tool_result", "tool_use_id": b.id, "content": _run(tools, b.name, b.input)}
            for b in uses
        ]
        messages.append({"role": "user", "content": results})
    raise AssertionError("no final answer")


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_openai_sdk_runs_a_tool_loop(tools: list[BaseTool], how: str, stream: bool) -> None:
    import openai

    fake = FakeLLM(_script(), fragment=3)
    with _transport(fake, how, "openai") as base_url:
        client = openai.OpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
        answer = _openai_loop(client, tools, stream)
    assert answer == "The answer is 15."
    fake.verify()
    assert [r.provider for r in fake.requests] == ["openai"] * 3
    assert fake.requests[0].stream is stream
    assert [t.name for t in fake.last_request.tools] == ["add", "echo"]
    fake.assert_tool_called("add", {"a": 5, "b": 10})
    fake.assert_tool_called("echo", {"text": "hi there, a longer text"})
    outputs = [r.output for r in fake.last_request.tool_results]
    assert outputs == ["5", "hi there, a longer text", "15"]


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_sdk_runs_a_tool_loop(tools: list[BaseTool], how: str, stream: bool) -> None:
    import anthropic

    fake = FakeLLM(_script(), fragment=3)
    with _transport(fake, how, "anthropic") as base_url:
        client = anthropic.Anthropic(api_key="sk-test", base_url=base_url, max_retries=0)
        answer = _anthropic_loop(client, tools, stream)
    assert answer == "The answer is 15."
    fake.verify()
    assert [r.provider for r in fake.requests] == ["anthropic"] * 3
    assert fake.requests[0].stream is stream
    fake.assert_tool_called("add", {"a": 2, "b": 3})
    assert [r.output for r in fake.last_request.tool_results] == [
        "5",
        "hi there, a longer text",
        "15",
    ]


def test_openai_sdk_sees_a_429_with_retry_after(tools: list[BaseTool]) -> None:
    import openai

    from pytest_toolnexus.fakes import error

    fake = FakeLLM([error(429, retry_after=0)])
    with fake.respx():
        client = openai.OpenAI(api_key="sk-test", max_retries=0)
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert info.value.response.headers["retry-after"] == "0"
    fake.verify()


def test_async_openai_sdk_through_respx(tools: list[BaseTool]) -> None:
    import openai

    fake = FakeLLM([text("hello")])

    async def go() -> str:
        client = openai.AsyncOpenAI(api_key="sk-test", max_retries=0)
        done = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
        return done.choices[0].message.content or ""

    with fake.respx():
        assert asyncio.run(go()) == "hello"
    fake.verify()
