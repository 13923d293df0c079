"""The reference loop against the fakes: every wire format, every transport, errors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_toolnexus.fakes import FakeLLM, error, text, tool_calls, truncated
from toolnexus_ref import BaseTool, ToolContext
from toolnexus_ref.host import (
    CLIENTS,
    GeminiClient,
    OpenAIClient,
    ProviderError,
    ProviderRequestError,
    run_loop,
)


def _script() -> list[Any]:
    return [
        tool_calls(("add", {"a": 1, "b": 2}), ("echo", {"text": "ping"}), text="Let me see."),
        tool_calls(("add", {"a": 3, "b": 4})),
        text("Done: 3 and 7."),
    ]


def _check(fake: FakeLLM, transcript: Any) -> None:
    assert transcript.stop_reason == "final"
    assert transcript.final_text == "Done: 3 and 7."
    assert [(c.call.name, c.result.output) for c in transcript.calls] == [
        ("add", "3"),
        ("echo", "ping"),
        ("add", "7"),
    ]
    fake.verify()
    assert [t.name for t in fake.last_request.tools] == ["add", "echo"]
    assert [r.output for r in fake.last_request.tool_results] == ["3", "ping", "7"]
    fake.assert_tool_called("add", {"a": 3, "b": 4})


def test_in_process(tools: list[BaseTool]) -> None:
    fake = FakeLLM(_script())
    transcript = asyncio.run(run_loop(fake, tools, "add"))
    _check(fake, transcript)
    assert fake.requests[0].provider == "inprocess"


@pytest.mark.parametrize("provider", sorted(CLIENTS))
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("how", ["respx", "server"])
def test_every_wire_format(tools: list[BaseTool], provider: str, stream: bool, how: str) -> None:
    fake = FakeLLM(_script(), fragment=2)
    if how == "respx":
        with fake.respx():
            client = CLIENTS[provider]("m-1", api_key="k", stream=stream)
            transcript = asyncio.run(run_loop(client, tools, "add"))
    else:
        with fake.serve() as server:
            base = server.openai_base_url if provider in ("openai", "responses") else server.url
            client = CLIENTS[provider]("m-1", api_key="k", stream=stream, base_url=base)
            transcript = asyncio.run(run_loop(client, tools, "add"))
    _check(fake, transcript)
    assert {r.provider for r in fake.requests} == {provider}
    assert all(r.stream is stream for r in fake.requests)
    assert all(r.model == "m-1" for r in fake.requests)


def test_api_key_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    assert GeminiClient("m").api_key == "g-key"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        OpenAIClient("m")
    assert "g-key" not in repr(GeminiClient("m"))


@pytest.mark.parametrize("provider", sorted(CLIENTS))
def test_429_and_500_are_retried(tools: list[BaseTool], provider: str) -> None:
    fake = FakeLLM([error(429, retry_after=0), error(500), truncated(text("cut")), text("ok")])
    with fake.respx():
        client = CLIENTS[provider]("m", api_key="k", stream=True)
        transcript = asyncio.run(run_loop(client, tools, "hi", backoff=0.001))
    assert transcript.final_text == "ok"
    assert transcript.retries == 3
    fake.verify()


def test_retry_after_is_honoured(tools: list[BaseTool]) -> None:
    fake = FakeLLM([error(429, retry_after=0.2), text("ok")])
    started = time.monotonic()
    transcript = asyncio.run(run_loop(fake, tools, "hi", backoff=0.0))
    assert time.monotonic() - started >= 0.19
    assert transcript.retries == 1


def test_retries_are_bounded(tools: list[BaseTool]) -> None:
    fake = FakeLLM([error(503)] * 3)
    with pytest.raises(ProviderError, match="503"):
        asyncio.run(run_loop(fake, tools, "hi", retries=2, backoff=0.001))
    fake.verify()


@pytest.mark.parametrize("provider", sorted(CLIENTS))
def test_a_4xx_is_a_clear_error_not_retried(tools: list[BaseTool], provider: str) -> None:
    fake = FakeLLM([error(401, "bad key")])
    with fake.respx(), pytest.raises(ProviderRequestError, match="HTTP 401: bad key"):
        asyncio.run(run_loop(CLIENTS[provider]("m", api_key="k"), tools, "hi"))
    assert len(fake.requests) == 1


def test_turn_limit(tools: list[BaseTool]) -> None:
    fake = FakeLLM(lambda request: tool_calls(("add", {"a": 1, "b": 1})))
    transcript = asyncio.run(run_loop(fake, tools, "loop", max_turns=3))
    assert transcript.stop_reason == "max_turns"
    assert len(transcript.calls) == 3
    assert transcript.final_text is None


class Slow(BaseTool):
    name = "slow"
    description = "Waits until cancelled."
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        assert ctx is not None
        await ctx.wait_cancelled()
        return "woke"


def test_cancellation_mid_loop() -> None:
    fake = FakeLLM([tool_calls("slow", "slow"), text("never")], strict=False)
    ctx = ToolContext()

    async def go() -> Any:
        asyncio.get_running_loop().call_later(0.1, ctx.cancel, "user pressed stop")
        return await asyncio.wait_for(run_loop(fake, [Slow()], "go", ctx=ctx), 30)

    transcript = asyncio.run(go())  # a loop that ignored the cancel would time out here
    assert transcript.stop_reason == "cancelled"
    assert [c.result.is_error for c in transcript.calls] == [True, True]
    assert all("Cancelled" in c.result.output for c in transcript.calls)
    assert len(fake.requests) == 1


def test_deadline_stops_a_retry_wait(tools: list[BaseTool]) -> None:
    fake = FakeLLM([error(429, retry_after=30), text("late")], strict=False)
    started = time.monotonic()
    transcript = asyncio.run(run_loop(fake, tools, "x", ctx=ToolContext(timeout=0.2)))
    assert time.monotonic() - started < 10  # the deadline, not the 30 s Retry-After
    assert transcript.stop_reason == "cancelled"


def test_concurrent_calls_in_one_turn() -> None:
    class Nap(BaseTool):
        name = "nap"
        description = "Sleeps 0.2s."

        running = 0
        most_at_once = 0

        async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            Nap.running += 1
            Nap.most_at_once = max(Nap.most_at_once, Nap.running)
            await asyncio.sleep(0.05)
            Nap.running -= 1
            return "rested"

    fake = FakeLLM([tool_calls("nap", "nap", "nap", "nap"), text("ok")])
    transcript = asyncio.run(run_loop(fake, [Nap()], "x"))
    assert Nap.most_at_once == 4  # the four calls of the turn overlapped
    assert [c.result.output for c in transcript.calls] == ["rested"] * 4


def test_a_client_per_row_of_the_provider_table() -> None:
    from toolnexus_ref.wire import PROVIDERS

    assert set(CLIENTS) == set(PROVIDERS)
    for name, client in CLIENTS.items():
        made = client("m", api_key="k")
        assert made.base_url == PROVIDERS[name].base_url
        assert made.wire is PROVIDERS[name].wire
