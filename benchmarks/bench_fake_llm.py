"""What a test with a fake LLM costs, beside what people write without it, in one run.

Run:  .venv/bin/python benchmarks/bench_fake_llm.py [--repeats 30]

The first table is the per-test cost when the SDK client is built once per session
(as a session fixture does): a four-request tool loop against a hand-written respx
mock, ``FakeLLM`` via respx, and ``FakeLLM`` mounted on the session loopback server,
wall and CPU time (CPU of the whole process, the server's thread included).

Each figure below is one whole "test": set-up (the fake or mock, the transport, the SDK
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
    for _ in range(5):
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


# -- the client built once per session, a four-request test ------------------------------
def _script4() -> list[Any]:
    return [
        tool_calls(("add", {"a": 1, "b": 2})),
        tool_calls(("add", {"a": 3, "b": 4})),
        tool_calls(("add", {"a": 5, "b": 6})),
        text("11"),
    ]


_BODIES4 = [
    _completion(
        {"role": "assistant", "content": None, "tool_calls": [_call(f"c{i}", a, b)]}, "tool_calls"
    )
    for i, (a, b) in enumerate([(1, 2), (3, 4), (5, 6)], start=1)
] + [_completion({"role": "assistant", "content": "11"}, "stop")]


def session_hand_respx(client: openai.OpenAI) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.post("https://api.openai.com/v1/chat/completions")
        route.mock(side_effect=[httpx.Response(200, json=b) for b in _BODIES4])
        assert _loop(client) == "11"
        assert route.call_count == 4


def session_fake_respx(client: openai.OpenAI) -> None:
    fake = FakeLLM(_script4())
    with fake.respx():
        assert _loop(client) == "11"
    fake.verify()


def session_fake_loopback(client: openai.OpenAI, server: FakeLLMServer) -> None:
    fake = FakeLLM(_script4())
    mounted = server.mount(fake)
    assert _loop(client.with_options(base_url=mounted.openai_base_url)) == "11"
    mounted.unmount()
    fake.verify()


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
def _time(fn: Callable[[], None]) -> tuple[float, float]:
    """Wall and CPU seconds (CPU of the whole process: the loopback server's thread too)."""
    started, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - started, time.process_time() - cpu


def _report(title: str, rows: dict[str, list[tuple[float, float]]], baseline: str) -> None:
    wall = {label: statistics.median(v[0] for v in values) for label, values in rows.items()}
    cpu = {label: statistics.median(v[1] for v in values) for label, values in rows.items()}
    print(title)
    for label in rows:
        if label == baseline:
            note = "baseline"
        else:
            note = (
                f"{wall[label] / wall[baseline]:5.2f}x wall {cpu[label] / cpu[baseline]:5.2f}x cpu"
            )
        print(f"  {label:<44} {wall[label] * 1e3:8.2f} ms {cpu[label] * 1e3:8.2f} ms cpu  {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=30)
    repeats = parser.parse_args().repeats

    session = FakeLLMServer().start()
    session_http = _http()
    session_client = _client(http_client=session_http)
    once: dict[str, Callable[[], None]] = {
        "hand-written respx mock ": lambda: session_hand_respx(session_client),
        "FakeLLM via respx ": lambda: session_fake_respx(session_client),
        "FakeLLM on the session loopback server ": lambda: session_fake_loopback(
            session_client, session
        ),
    }
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
    everything = {**once, **sdk, **framework, **setup}
    for fn in everything.values():  # warm up: imports, first connections
        fn()
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in everything}
    for _ in range(repeats):
        for label, fn in everything.items():
            times[label].append(_time(fn))
    session.stop()
    session_http.close()

    print(f"median of {repeats} interleaved repeats, one whole test each (lower is better)")
    _report(
        "openai SDK client built once per session, four-request tool loop:",
        {k: times[k] for k in once},
        "hand-written respx mock ",
    )
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
        print(f"  {label:<44} {statistics.median(t[0] for t in times[label]) * 1e3:8.2f} ms")


if __name__ == "__main__":
    main()
