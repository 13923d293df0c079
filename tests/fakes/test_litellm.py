"""litellm against the fakes: ``acompletion`` (its async path sends through aiohttp)
runs a tool loop over the OpenAI wire in respx mode and on the loopback server, streamed
and not, and ``ollama/`` (``/api/generate``) and ``ollama_chat/`` (``/api/chat``) reach
the fake's Ollama endpoints; a guard on ``socket`` proves nothing left the machine."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls

skip_unless_installed("litellm", "aioresponses")
# litellm fetches its model cost map from the network at import unless told not to
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# litellm's own pydantic models warn on import and use; not ours to fix
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_.*:DeprecationWarning"),
]

ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "Add two integers.",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
}


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    """litellm, imported when a test here first runs rather than at collection (the import
    takes seconds); module-scoped, so before the test's guard on ``socket``, which is for
    its requests, not its import."""
    return pytest.importorskip("litellm")


def _script() -> list[Any]:
    return [tool_calls(("add", {"a": 2, "b": 40})), text("It is 42.", reasoning="Added.")]


async def _loop(litellm: ModuleType, model: str, stream: bool, **where: Any) -> tuple[str, str]:
    """A tool loop over ``acompletion``; returns the answer and its reasoning_content."""
    messages: list[Any] = [{"role": "user", "content": "2 + 40?"}]
    for _ in range(3):
        ask = {"model": model, "messages": messages, "tools": [ADD], "api_key": "x", **where}
        if stream:
            chunks = [c async for c in await litellm.acompletion(**ask, stream=True)]
            reply = litellm.stream_chunk_builder(chunks, messages=messages)
        else:
            reply = await litellm.acompletion(**ask)
        message = reply.choices[0].message
        if not message.tool_calls:
            return str(message.content), str(getattr(message, "reasoning_content", None))
        messages.append(message.model_dump())
        for c in message.tool_calls:
            args = json.loads(c.function.arguments)
            out = args["a"] + args["b"]
            messages.append({"role": "tool", "tool_call_id": c.id, "content": str(out)})
    raise AssertionError("no final answer")


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_acompletion_runs_a_tool_loop(
    litellm: ModuleType, how: str, stream: bool, escapes: list[str]
) -> None:
    fake = FakeLLM(_script(), fragment=3)
    if how == "respx":
        with fake.respx():
            answer, thought = asyncio.run(_loop(litellm, "openai/gpt-fake", stream))
    else:
        with fake.serve() as server:
            answer, thought = asyncio.run(
                _loop(litellm, "openai/gpt-fake", stream, api_base=server.openai_base_url)
            )
    assert answer == "It is 42."
    assert thought == "Added."  # reasoning_content, whole or rebuilt from the deltas
    fake.verify()
    assert escapes == []
    assert all(r.provider == "openai" and r.stream is stream for r in fake.requests)
    fake.assert_tool_called("add", {"a": 2, "b": 40})
    assert fake.last_request.tool_results[0].output == "42"


@contextmanager
def _ollama(fake: FakeLLM, how: str) -> Iterator[dict[str, Any]]:
    """The fake at Ollama's default host (respx) or on loopback: litellm's arguments."""
    if how == "respx":
        with fake.respx():
            yield {}
    else:
        with fake.serve() as server:
            yield {"api_base": server.ollama_base_url}


@pytest.mark.parametrize("how", ["respx", "server"])
def test_ollama_prefix_reaches_api_generate(
    litellm: ModuleType, how: str, escapes: list[str]
) -> None:
    fake = FakeLLM([text("Hello from generate."), text("Hello again.")], fragment=4)
    with _ollama(fake, how) as where:
        ask: dict[str, Any] = {
            "model": "ollama/llama-fake",
            "messages": [{"role": "user", "content": "hi"}],
            **where,
        }
        reply = litellm.completion(**ask)
        chunks = asyncio.run(_collect(litellm.acompletion(**ask, stream=True)))
    assert reply.choices[0].message.content == "Hello from generate."
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "Hello again."
    fake.verify()
    assert escapes == []
    assert [r.provider for r in fake.requests] == ["ollama", "ollama"]
    assert "hi" in str(fake.requests[0].messages[-1].text)  # in litellm's prompt template


async def _collect(pending: Any) -> list[Any]:
    return [c async for c in await pending]


@pytest.mark.parametrize("how", ["respx", "server"])
def test_ollama_chat_prefix_runs_a_tool_loop(
    litellm: ModuleType, how: str, escapes: list[str]
) -> None:
    fake = FakeLLM(_script(), fragment=3)
    with _ollama(fake, how) as where:
        answer, _ = asyncio.run(_loop(litellm, "ollama_chat/llama-fake", False, **where))
    assert answer == "It is 42."
    fake.verify()
    assert escapes == []
    assert {r.provider for r in fake.requests} == {"ollama"}
    fake.assert_tool_called("add", {"a": 2, "b": 40})
