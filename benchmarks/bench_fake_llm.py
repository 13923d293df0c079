"""Per-turn cost of the fake LLMs beside pydantic-ai's TestModel, measured in one run.

Run:  .venv/bin/python benchmarks/bench_fake_llm.py [--turns 200]

(pydantic-ai is optional: `.venv/bin/pip install pydantic-ai-slim`; without it the
script says so and measures the rest.) A "turn" is one model reply plus, for
tool-call turns, running the tool and sending its result back.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls
from toolnexus_ref import BaseTool, ToolContext
from toolnexus_ref.host import AnthropicClient, OpenAIClient, run_loop


class Add(BaseTool):
    name = "add"
    description = "Add two integers."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return args["a"] + args["b"]


def _script(turns: int) -> list[Any]:
    return [tool_calls(("add", {"a": i, "b": 1})) for i in range(turns - 1)] + [text("done")]


def per_turn_ours(turns: int, make_llm: Callable[[FakeLLM], Any], serve: bool) -> float:
    fake = FakeLLM(_script(turns))

    async def go(llm: Any) -> None:
        transcript = await run_loop(llm, [Add()], "go", max_turns=turns)
        assert transcript.final_text == "done", transcript.stop_reason

    if serve:
        with fake.serve() as server:
            llm = make_llm(fake) if server is None else make_llm_for_server(make_llm, server)
            started = time.perf_counter()
            asyncio.run(go(llm))
    else:
        started = time.perf_counter()
        asyncio.run(go(make_llm(fake)))
    elapsed = time.perf_counter() - started
    fake.verify()
    return elapsed / turns


def make_llm_for_server(make: Callable[..., Any], server: Any) -> Any:
    return make(server)


def per_turn_pydantic_ai(runs: int) -> float | None:
    try:
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel
    except ImportError:
        return None
    agent = Agent(TestModel())

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    agent.run_sync("warm up")
    started = time.perf_counter()
    for _ in range(runs):
        agent.run_sync("go")  # TestModel: one turn calling every tool, one final turn
    return (time.perf_counter() - started) / (runs * 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    n = parser.parse_args().turns

    rows: list[tuple[str, float | None]] = [
        ("FakeLLM in-process", per_turn_ours(n, lambda fake: fake, serve=False)),
        (
            "FakeLLM loopback, OpenAI wire",
            per_turn_ours(
                n, lambda s: OpenAIClient("m", api_key="k", base_url=s.openai_base_url), serve=True
            ),
        ),
        (
            "FakeLLM loopback, OpenAI wire, SSE",
            per_turn_ours(
                n,
                lambda s: OpenAIClient("m", api_key="k", base_url=s.openai_base_url, stream=True),
                serve=True,
            ),
        ),
        (
            "FakeLLM loopback, Anthropic wire, SSE",
            per_turn_ours(
                n,
                lambda s: AnthropicClient("m", api_key="k", base_url=s.url, stream=True),
                serve=True,
            ),
        ),
    ]
    baseline = per_turn_pydantic_ai(max(1, n // 2))
    rows.append(("pydantic-ai TestModel (Agent.run_sync)", baseline))
    print(f"per-turn cost over {n} turns (lower is better)")
    for label, value in rows:
        if value is None:
            print(f"  {label:<42} not measured (pip install pydantic-ai-slim)")
            continue
        ratio = f"{value / baseline:6.2f}x TestModel" if baseline else ""
        print(f"  {label:<42} {value * 1e6:10.1f} µs  {ratio}")


if __name__ == "__main__":
    main()
