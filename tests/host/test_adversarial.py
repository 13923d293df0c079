"""The reference loop against the adversarial fake: every malformed call is an error
result fed back to the model, nothing escapes, and the transcript is snapshot-tested."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pytest_toolnexus.fakes import ADVERSARIAL_KINDS, POSSIBLE_KINDS, FakeLLM
from toolnexus_ref import BaseTool
from toolnexus_ref.host import AnthropicClient, GeminiClient, OpenAIClient, run_loop


def test_every_malformed_call_becomes_an_error_result(
    tools: list[BaseTool], toolnexus_snapshot: Any
) -> None:
    fake = FakeLLM.adversarial()
    transcript = asyncio.run(run_loop(fake, tools, "break things"))
    fake.verify()
    assert transcript.stop_reason == "final"
    assert len(transcript.calls) == len(ADVERSARIAL_KINDS) + 1  # duplicate_id sends two
    assert all(c.result.is_error for c in transcript.calls), transcript.to_data()
    sent_back = fake.last_request.tool_results
    assert len(sent_back) == len(transcript.calls)
    assert len({r.call_id for r in sent_back}) == len(sent_back)  # ids made unique
    assert all(r.is_error for r in sent_back)
    kinds = [c.result.metadata["error_type"] for c in transcript.calls]
    assert kinds == [
        "UnknownTool",
        "InvalidJSON",
        "InvalidArguments",
        "InvalidArguments",
        "InvalidArguments",
        "UnknownTool",
        "InvalidArguments",
        "UnknownTool",
        "UnknownTool",
        "DuplicateCallId",
    ]
    assert transcript == toolnexus_snapshot
    assert [v.outcome for v in fake.verdicts()] == ["error_result"] * len(ADVERSARIAL_KINDS)


@pytest.mark.parametrize("client", [OpenAIClient, GeminiClient, AnthropicClient])
@pytest.mark.parametrize("stream", [False, True])
def test_over_the_wire_only_what_the_wire_can_carry(
    tools: list[BaseTool], client: Any, stream: bool
) -> None:
    fake = FakeLLM.adversarial()
    with fake.respx():
        transcript = asyncio.run(run_loop(client("m", api_key="k", stream=stream), tools, "x"))
    fake.verify()
    possible = POSSIBLE_KINDS[client.provider]
    assert [v.kind for v in fake.verdicts()] == list(possible)
    assert len(transcript.calls) == len(possible)
    assert all(c.result.is_error for c in transcript.calls)
    # judged over HTTP, where OpenAI's tool messages carry no error flag
    assert [v.outcome for v in fake.verdicts()] == ["error_result"] * len(possible)
    assert "ok:" not in (fake.replies[-1].text or "")  # type: ignore[union-attr]


def test_impossible_shapes_only_when_asked(tools: list[BaseTool]) -> None:
    fake = FakeLLM.adversarial(impossible=True)
    with fake.respx():
        transcript = asyncio.run(run_loop(OpenAIClient("m", api_key="k"), tools, "x"))
    fake.verify()
    assert len(transcript.calls) == len(ADVERSARIAL_KINDS) + 1  # duplicate_id sends two


def test_a_host_that_carries_on_is_named(tools: list[BaseTool]) -> None:
    """A host that answers a bad call with a plain success is caught by the verdict."""
    import openai

    from pytest_toolnexus.fakes import FakeLLM as Fake

    fake = Fake.adversarial(kinds=["unknown_tool", "wrong_type"])
    with fake.respx():
        client = openai.OpenAI(api_key="k", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "x"}]
        declared = [
            {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}
        ]
        reply = client.chat.completions.create(model="m", messages=messages, tools=declared)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        for tc in message.tool_calls or []:
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": "42"})
        client.chat.completions.create(model="m", messages=messages, tools=declared)
    outcomes = [(v.kind, v.outcome) for v in fake.verdicts()]
    assert outcomes == [("unknown_tool", "carried_on"), ("wrong_type", "carried_on")]
    with pytest.raises(AssertionError, match=r"bad call bad_1 \(unknown_tool\) came back as if"):
        fake.verify()


def test_huge_arguments_stream_in_few_events() -> None:
    from toolnexus_ref.wire import ToolCallPart, Turn
    from toolnexus_ref.wire import openai as openai_wire

    big = ToolCallPart.of("c", "add", {"padding": "x" * 200_000})
    events = openai_wire.stream_events(Turn(None, (big,)), model="m", fragment=8)
    assert len(events) < 300  # not 25,000 events of 8 characters


def test_schema_driven_judges_its_valid_calls_over_http(tools: list[BaseTool]) -> None:
    fake = FakeLLM.schema_driven(seed=3)
    with fake.respx():
        transcript = asyncio.run(run_loop(OpenAIClient("m", api_key="k"), tools, "x"))
    fake.verify()
    assert [(v.kind, v.outcome) for v in fake.verdicts()] == [("add", "ok"), ("echo", "ok")]
    assert all(v.ok for v in fake.verdicts())
    summary = transcript.final_text or ""
    assert summary.startswith("add: ok:")
