"""The reference host loop, driven by the fake LLM, with an A2A agent in its toolkit."""

from __future__ import annotations

import pytest

from pytest_toolnexus import text, tool_calls
from toolnexus_ref import Toolkit, tool
from toolnexus_ref.a2a import LoopbackAgent, open_agent
from toolnexus_ref.host import run_loop

pytestmark = pytest.mark.anyio


@tool
def shout(message: str) -> str:
    """Say the message in capitals."""
    return message.upper()


async def test_the_model_calls_a_remote_agent_beside_a_local_tool(
    fake_llm, good_agent: LoopbackAgent
) -> None:
    source = await open_agent(good_agent.url)
    toolkit = Toolkit([*source.tools, shout])
    fake_llm.script(
        tool_calls(("helper_agent_echo", {"message": "hello there"}), ("shout", {"message": "hi"})),
        text("The agent said hello there."),
    )
    transcript = await run_loop(fake_llm, toolkit, "Ask the helper agent to echo 'hello there'.")
    assert transcript.final_text == "The agent said hello there."
    fake_llm.assert_tool_called("helper_agent_echo", {"message": "hello there"})
    results = {c.call.name: c.result for c in transcript.calls}
    assert results["helper_agent_echo"].output == "hello there"
    assert results["helper_agent_echo"].metadata["a2a_state"] == "completed"
    assert results["shout"].output == "HI"


async def test_arguments_the_model_got_wrong_come_back_as_an_error(
    fake_llm, good_agent: LoopbackAgent
) -> None:
    source = await open_agent(good_agent.url)
    fake_llm.script(
        tool_calls(("helper_agent_echo", {"message": 42})),  # the model got the type wrong
        text("Sorry."),
    )
    transcript = await run_loop(fake_llm, source.tools, "Echo 42.")
    assert [c.result.is_error for c in transcript.calls] == [True]
    assert "Invalid arguments" in transcript.calls[0].result.output
