"""The real ``ollama`` client runs a tool loop against the fakes' fifth wire
(``/api/chat``), streamed NDJSON and not, through respx and the loopback server."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls

skip_unless_installed("ollama")


@pytest.fixture(scope="module")
def ollama() -> ModuleType:
    """The ollama client, imported when a test here first runs rather than at collection."""
    return pytest.importorskip("ollama")


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first
        b: the second
    """
    return a + b


def _loop(client: Any, stream: bool) -> str:
    messages: list[Any] = [{"role": "user", "content": "2 + 40?"}]
    for _ in range(3):
        if stream:
            content, calls = "", []
            for part in client.chat(
                model="llama-fake", messages=messages, tools=[add], stream=True
            ):
                content += part.message.content or ""
                calls += part.message.tool_calls or []
        else:
            reply = client.chat(model="llama-fake", messages=messages, tools=[add])
            content, calls = reply.message.content or "", reply.message.tool_calls or []
        if not calls:
            return content
        messages.append({"role": "assistant", "content": content, "tool_calls": calls})
        for c in calls:
            out = add(**c.function.arguments)
            messages.append({"role": "tool", "content": str(out), "tool_name": c.function.name})
    raise AssertionError("no final answer")


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_ollama_client_runs_a_tool_loop(ollama: ModuleType, how: str, stream: bool) -> None:
    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 40})), text("It is 42.")], fragment=3)
    if how == "respx":
        with fake.respx():
            answer = _loop(ollama.Client(), stream)
    else:
        with fake.serve() as server:
            answer = _loop(ollama.Client(host=server.ollama_base_url), stream)
    assert answer == "It is 42."
    fake.verify()
    assert {r.provider for r in fake.requests} == {"ollama"}
    assert all(r.stream is stream for r in fake.requests)
    fake.assert_tool_called("add", {"a": 2, "b": 40})
    assert fake.last_request.tool_results[0].output == "42"
