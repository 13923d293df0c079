"""Record a session once through the loopback proxy (here against a second local fake
standing in for the real API), replay it offline, and see a changed conversation fail
with a diff."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_toolnexus.fakes import Cassette, FakeLLM, NewEpisodes, Recorder, text, tool_calls
from toolnexus_ref import BaseTool
from toolnexus_ref.host import AnthropicClient, run_loop
from toolnexus_ref.wire import ToolDecl
from toolnexus_ref.wire import openai as openai_wire

if TYPE_CHECKING:  # the tests import the SDK themselves: collecting this module stays cheap
    import openai

KEY = "sk-live-do-not-write-me"


def _loop(client: openai.OpenAI, tools: list[BaseTool], *, nag: bool = False) -> str:
    declared = openai_wire.declarations(
        [ToolDecl(t.name, t.description, dict(t.input_schema)) for t in tools]
    )
    messages: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "2 + 3?"},
    ]
    by_name = {t.name: t for t in tools}
    for _ in range(4):
        done = client.chat.completions.create(model="gpt-x", messages=messages, tools=declared)
        message = done.choices[0].message
        if not message.tool_calls:
            return message.content or ""
        messages.append(message.model_dump(exclude_none=True))
        for tc in message.tool_calls:
            result = asyncio.run(
                by_name[tc.function.name].execute(json.loads(tc.function.arguments))
            )
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": result.output})
        if nag:  # the changed agent: one more user message before asking again
            messages.append({"role": "user", "content": "Please hurry."})
    raise AssertionError("no final answer")


def _record(tmp_path: Path, tools: list[BaseTool]) -> Path:
    import openai

    real_api = FakeLLM([tool_calls(("add", {"a": 2, "b": 3})), text("It is 5.")])
    cassette = tmp_path / "session.yaml"
    with real_api.serve() as upstream, Recorder(cassette, upstream=upstream.url) as recorder:
        client = openai.OpenAI(api_key=KEY, base_url=recorder.openai_base_url, max_retries=0)
        assert _loop(client, tools) == "It is 5."
    real_api.verify()
    return cassette


def test_record_then_replay_offline(tmp_path: Path, tools: list[BaseTool]) -> None:
    import openai

    cassette = _record(tmp_path, tools)
    written = cassette.read_text()
    assert KEY not in written
    assert 'add({"a": 2, "b": 3})' in written  # a readable script of turns
    assert "It is 5." in written
    fake = FakeLLM.replay(cassette)
    with fake.respx():
        client = openai.OpenAI(api_key="anything", max_retries=0)
        assert _loop(client, tools) == "It is 5."
    fake.verify()


def test_a_changed_conversation_fails_with_a_diff(tmp_path: Path, tools: list[BaseTool]) -> None:
    import openai

    cassette = _record(tmp_path, tools)
    fake = FakeLLM.replay(cassette)
    with fake.respx():
        client = openai.OpenAI(api_key="anything", max_retries=0)
        with pytest.raises(openai.BadRequestError) as info:
            _loop(client, tools, nag=True)
    assert "does not match the cassette" in info.value.message
    assert " tool: add\n+user" in info.value.message  # the diff shows the extra message
    with pytest.raises(AssertionError, match="does not match the cassette"):
        fake.verify()


def test_replay_matches_shape_not_bytes_across_wires(tmp_path: Path, tools: list[BaseTool]) -> None:
    """A cassette recorded over one wire replays to a host speaking another."""
    cassette = _record(tmp_path, tools)
    fake = FakeLLM.replay(cassette)
    with fake.respx():
        transcript = asyncio.run(run_loop(AnthropicClient("m", api_key="k"), tools, "2 + 3?"))
    assert transcript.final_text == "It is 5."
    fake.verify()


def test_changed_calls_show_in_the_diff(tmp_path: Path, tools: list[BaseTool]) -> None:
    import openai

    cassette = _record(tmp_path, tools)
    recorded = '\'assistant: add({"a": 2, "b": 3})\''
    assert recorded in cassette.read_text()
    cassette.write_text(cassette.read_text().replace(recorded, recorded.replace("3", "4")))
    fake = FakeLLM.replay(cassette, strict=False)
    with fake.respx():
        client = openai.OpenAI(api_key="anything", max_retries=0)
        with pytest.raises(openai.BadRequestError) as info:
            _loop(client, tools)
    assert '-assistant: add({"a": 2, "b": 4})' in info.value.message
    assert '+assistant: add({"a": 2, "b": 3})' in info.value.message


def test_a_streamed_session_records_too(tmp_path: Path) -> None:
    import openai

    real_api = FakeLLM([text("streamed answer")])
    cassette = tmp_path / "stream.yaml"
    with real_api.serve() as upstream, Recorder(cassette, upstream=upstream.url) as recorder:
        client = openai.OpenAI(api_key=KEY, base_url=recorder.openai_base_url, max_retries=0)
        ask: list[Any] = [{"role": "user", "content": "hi"}]
        chunks = client.chat.completions.create(model="m", messages=ask, stream=True)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "streamed answer"
        )
    assert recorder.errors == []
    fake = FakeLLM.replay(cassette)
    with fake.respx():
        done = openai.OpenAI(api_key="k", max_retries=0).chat.completions.create(
            model="m", messages=ask
        )
    assert done.choices[0].message.content == "streamed answer"
    fake.verify()


def test_new_episodes_replays_what_matches_and_records_the_rest(
    tmp_path: Path, tools: list[BaseTool]
) -> None:
    """VCR's ``new_episodes``: the agent changed after its first turn; that turn is
    served from the cassette (the real API is not asked), the new one is recorded and
    appended, and the grown cassette then replays the changed agent offline."""
    import openai

    cassette = _record(tmp_path, tools)
    real_api = FakeLLM([text("It is 5, quickly.")])
    with real_api.serve() as upstream:
        recording = NewEpisodes(cassette, upstream=upstream.url)
        fake = FakeLLM(recording)
        with fake.serve() as server:
            client = openai.OpenAI(api_key=KEY, base_url=server.openai_base_url, max_retries=0)
            assert _loop(client, tools, nag=True) == "It is 5, quickly."
        fake.verify()
        recording.save()
    real_api.verify()
    assert len(real_api.requests) == 1  # only the new turn reached the real API
    assert recording.replayed == 1
    assert real_api.requests[0].messages[-1].text == "Please hurry."
    written = cassette.read_text()
    assert KEY not in written
    shapes = [t.expect for t in Cassette.load(cassette).turns]
    assert shapes[:2] == [["user"], ["user", 'assistant: add({"a": 2, "b": 3})', "tool: add"]]
    assert shapes[2][-1] == "user"
    # the grown cassette replays the changed agent, offline
    replay = FakeLLM.replay(cassette, strict=False)
    with replay.serve() as server:
        client = openai.OpenAI(api_key="x", base_url=server.openai_base_url, max_retries=0)
        assert _loop(client, tools, nag=True) == "It is 5, quickly."
    assert replay.behaviour.pending() == ["cassette turn #2 never replayed"]
