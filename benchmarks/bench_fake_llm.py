"""What a test with a fake LLM costs, beside what people write without it, in one run.

Run:  .venv/bin/python benchmarks/bench_fake_llm.py [--repeats 30]

Each figure is one whole "test": set-up (the fake or mock, the transport, the SDK
client), a three-turn agent loop (two tool-call turns, one answer), and teardown
(``verify()``). The scenarios run interleaved, one repeat of each in turn, so
machine noise falls on all of them alike; the table shows medians and the ratio to
each comparison's baseline:

- the same openai-SDK loop with ``FakeLLM`` via respx, ``FakeLLM`` on a loopback
  server (one per session, a mount per test, as the fixtures do), and a hand-written
  respx mock returning canned Chat Completions bodies (the baseline). Every case gives
  the SDK a new plain ``httpx.Client`` (the hand-written mock sees no other), all
  sharing one TLS context: building one costs ~15 ms of certificate loading, the same
  for every case, and its jitter would drown the differences measured here.
- a pydantic-ai agent with ``FakeLLM`` via respx beside pydantic-ai's own
  ``TestModel`` (the baseline; ``pip install pydantic-ai-slim[openai]``).
- the loopback set-up alone: mounting a fake on the session server, and starting a
  server of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import statistics
import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import respx

from pytest_toolnexus.fakes import FakeLLM, FakeLLMServer, text, tool_calls

TOOLS = [
    {
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
]


def _script() -> list[Any]:
    return [tool_calls(("add", {"a": 1, "b": 2})), tool_calls(("add", {"a": 3, "b": 4})), text("7")]


def _loop(client: openai.OpenAI) -> str:
    messages: list[Any] = [{"role": "user", "content": "add"}]
    for _ in range(4):
        done = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
        message = done.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for tc in message.tool_calls:
            args = json.loads(tc.function.arguments)  # type: ignore[union-attr]
            messages.append(
                {"role": "tool", "tool_call_id": tc.id, "content": str(args["a"] + args["b"])}
            )
    raise AssertionError("no final answer")


_TLS = ssl.create_default_context()


def _http() -> httpx.Client:
    return httpx.Client(verify=_TLS)


def _client(**kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(api_key="k", max_retries=0, **kwargs)


# -- the openai-SDK loop ------------------------------------------------------------------
def fake_respx() -> None:
    fake = FakeLLM(_script())
    with fake.respx(), _http() as http:
        assert _loop(_client(http_client=http)) == "7"
    fake.verify()


def fake_loopback(server: FakeLLMServer) -> None:
    fake = FakeLLM(_script())
    mounted = server.mount(fake)
    with _http() as http:
        assert _loop(_client(base_url=mounted.openai_base_url, http_client=http)) == "7"
    mounted.unmount()
    fake.verify()


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _call(id: str, a: int, b: int) -> dict[str, Any]:
    arguments = json.dumps({"a": a, "b": b})
    return {"id": id, "type": "function", "function": {"name": "add", "arguments": arguments}}


def hand_respx() -> None:
    """What a careful user writes by hand: canned bodies, in order, all consumed."""
    bodies = [
        _completion(
            {"role": "assistant", "content": None, "tool_calls": [_call("c1", 1, 2)]}, "tool_calls"
        ),
        _completion(
            {"role": "assistant", "content": None, "tool_calls": [_call("c2", 3, 4)]}, "tool_calls"
        ),
        _completion({"role": "assistant", "content": "7"}, "stop"),
    ]
    with respx.mock(assert_all_called=True) as router, _http() as http:
        route = router.post("https://api.openai.com/v1/chat/completions")
        route.mock(side_effect=[httpx.Response(200, json=b) for b in bodies])
        assert _loop(_client(http_client=http)) == "7"
        assert route.call_count == 3


# -- pydantic-ai ------------------------------------------------------------------------
def _pydantic_ai() -> tuple[Callable[[], None], Callable[[], None]] | None:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.models.test import TestModel
        from pydantic_ai.providers.openai import OpenAIProvider
    except ImportError:
        return None

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def with_fake() -> None:
        fake = FakeLLM([tool_calls(("add", {"a": 1, "b": 2})), text("3")])

        async def go() -> str:
            import httpx2  # what pydantic-ai's OpenAI provider expects; the shared TLS context

            async with httpx2.AsyncClient(verify=_TLS) as http:
                provider = OpenAIProvider(api_key="k", http_client=http)
                agent = Agent(OpenAIChatModel("m", provider=provider), tools=[add])
                return (await agent.run("add")).output

        with fake.respx():
            assert asyncio.run(go()) == "3"
        fake.verify()

    def with_test_model() -> None:
        agent = Agent(TestModel(), tools=[add])

        async def go() -> str:
            return (await agent.run("add")).output

        asyncio.run(go())

    return with_fake, with_test_model


# -- measuring --------------------------------------------------------------------------
def _time(fn: Callable[[], None]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _report(title: str, rows: dict[str, list[float]], baseline: str) -> None:
    base = statistics.median(rows[baseline])
    print(title)
    for label, values in rows.items():
        median = statistics.median(values)
        note = "baseline" if label == baseline else f"{median / base:5.2f}x"
        print(f"  {label:<44} {median * 1e3:8.2f} ms  {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=30)
    repeats = parser.parse_args().repeats

    session = FakeLLMServer().start()
    sdk: dict[str, Callable[[], None]] = {
        "hand-written respx mock": hand_respx,
        "FakeLLM via respx": fake_respx,
        "FakeLLM on the session loopback server": lambda: fake_loopback(session),
    }
    agents = _pydantic_ai()
    framework: dict[str, Callable[[], None]] = {}
    if agents is not None:
        framework = {
            "pydantic-ai TestModel": agents[1],
            "pydantic-ai + FakeLLM via respx": agents[0],
        }

    def mount() -> None:
        session.mount(FakeLLM()).unmount()

    def own_server() -> None:
        FakeLLMServer(FakeLLM()).start().stop()

    setup = {"mount on the session server": mount, "a server of its own": own_server}
    everything = {**sdk, **framework, **setup}
    for fn in everything.values():  # warm up: imports, first connections
        fn()
    times: dict[str, list[float]] = {label: [] for label in everything}
    for _ in range(repeats):
        for label, fn in everything.items():
            times[label].append(_time(fn))
    session.stop()

    print(f"median of {repeats} interleaved repeats, one whole test each (lower is better)")
    _report(
        "openai SDK, three-turn tool loop:", {k: times[k] for k in sdk}, "hand-written respx mock"
    )
    if framework:
        _report(
            "pydantic-ai agent, one tool turn:",
            {k: times[k] for k in framework},
            "pydantic-ai TestModel",
        )
    else:
        print("pydantic-ai: not measured (pip install pydantic-ai-slim[openai])")
    print("loopback set-up per test:")
    for label in setup:
        print(f"  {label:<44} {statistics.median(times[label]) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
