"""The reference loop against the adversarial fake: every malformed call is an error
result fed back to the model, nothing escapes, and the transcript is snapshot-tested."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pytest_toolnexus.fakes import ADVERSARIAL_KINDS, FakeLLM
from toolnexus_ref import BaseTool
from toolnexus_ref.host import GeminiClient, OpenAIClient, run_loop


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
        "UnknownTool",
        "InvalidArguments",
        "UnknownTool",
        "UnknownTool",
        "DuplicateCallId",
    ]
    assert transcript == toolnexus_snapshot


@pytest.mark.parametrize("client", [OpenAIClient, GeminiClient])
@pytest.mark.parametrize("stream", [False, True])
def test_over_the_wire_too(tools: list[BaseTool], client: Any, stream: bool) -> None:
    fake = FakeLLM.adversarial()
    with fake.respx():
        transcript = asyncio.run(run_loop(client("m", api_key="k", stream=stream), tools, "x"))
    fake.verify()
    assert len(transcript.calls) == len(ADVERSARIAL_KINDS) + 1
    assert all(c.result.is_error for c in transcript.calls)
