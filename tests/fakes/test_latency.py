"""Latency and timeout injection: a slow reply arrives late, a hung one ends in the
client's own timeout error, in process, through respx and on loopback."""

from __future__ import annotations

import asyncio
import time

import pytest

from pytest_toolnexus.fakes import FakeLLM, delayed, hang, text
from toolnexus_ref import ToolContext
from toolnexus_ref.host import run_loop

USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize("how", ["respx", "server"])
def test_a_hang_ends_in_the_sdk_timeout(how: str) -> None:
    import openai

    fake = FakeLLM([hang(limit=5)])
    if how == "respx":
        with fake.respx():
            client = openai.OpenAI(api_key="k", max_retries=0, timeout=0.2)
            with pytest.raises(openai.APITimeoutError):
                client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    else:
        with fake.serve() as server:
            client = openai.OpenAI(
                api_key="k", base_url=server.openai_base_url, max_retries=0, timeout=0.2
            )
            with pytest.raises(openai.APITimeoutError):
                client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
            # The client gave up after 0.2 s; on a loaded machine the server's thread may
            # read the request it was sent only later (bounded: one that never arrives fails).
            end = time.monotonic() + 10
            while not fake.requests and time.monotonic() < end:
                time.sleep(0.01)
    fake.verify()  # the planned hang was served


@pytest.mark.parametrize("how", ["respx", "server"])
def test_a_delayed_reply_still_arrives(how: str) -> None:
    import openai

    fake = FakeLLM([delayed(text("late"), 0.05)])
    if how == "respx":
        with fake.respx():
            client = openai.OpenAI(api_key="k", max_retries=0)
            done = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    else:
        with fake.serve() as server:
            client = openai.OpenAI(api_key="k", base_url=server.openai_base_url, max_retries=0)
            done = client.chat.completions.create(model="m", messages=USER)  # type: ignore[arg-type]
    assert done.choices[0].message.content == "late"
    fake.verify()


def test_in_process_hang_is_ended_by_the_context() -> None:
    fake = FakeLLM([hang()])

    async def go() -> str:
        ctx = ToolContext()
        asyncio.get_running_loop().call_later(0.05, ctx.cancel, "deadline")
        transcript = await run_loop(fake, [], "hi", ctx=ctx)
        return transcript.stop_reason

    assert asyncio.run(go()) == "cancelled"
