"""Wire formats round-trip: what we build, we parse back to the same neutral form,
streamed in any fragment size; and the SDKs' own types accept our bodies."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolnexus_ref.wire import (
    PROVIDERS,
    Message,
    ToolCallPart,
    ToolDecl,
    ToolResultPart,
    TruncatedStream,
    Turn,
    Usage,
    decode_sse,
    wire_for,
)

json_objects = st.dictionaries(
    st.text(min_size=1, max_size=5),
    st.one_of(st.integers(), st.text(max_size=10), st.booleans(), st.none()),
    max_size=4,
)
names = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True)
calls = st.builds(
    lambda i, n, a: ToolCallPart.of(f"call_{i}", n, a),
    st.integers(0, 10**6),
    names,
    json_objects,
)
turns = st.builds(
    lambda text, cs, u: Turn(text, tuple({c.id: c for c in cs}.values()), None, u),
    st.one_of(st.none(), st.text(min_size=1, max_size=40)),
    st.lists(calls, max_size=3),
    st.builds(Usage, st.integers(0, 999), st.integers(0, 999)),
)


def _same(a: Turn, b: Turn) -> None:
    assert b.text == a.text
    assert [(c.name, json.loads(c.arguments)) for c in b.tool_calls] == [
        (c.name, json.loads(c.arguments)) for c in a.tool_calls
    ]
    assert b.finish == a.finish
    assert b.usage == a.usage


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@given(turn=turns, fragment=st.integers(1, 20))
def test_turn_round_trips(provider: str, turn: Turn, fragment: int) -> None:
    wire = wire_for(provider)
    _same(turn, wire.parse_response(wire.build_response(turn, model="m")))
    events = wire.stream_events(turn, model="m", fragment=fragment)
    lines = b"".join(events).decode().splitlines()
    _same(turn, wire.read_stream(lines))
    with pytest.raises(TruncatedStream):
        wire.read_stream(b"".join(events[:-1]).decode().splitlines())


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_request_round_trips(provider: str) -> None:
    wire = wire_for(provider)
    decl = ToolDecl("add", "Add.", {"type": "object", "properties": {"a": {"type": "integer"}}})
    call = ToolCallPart.of("c1", "add", {"a": 1})
    messages = [
        Message("system", "be brief"),
        Message("user", "hi"),
        Message("assistant", "calling", (call,)),
        Message("tool", tool_results=(ToolResultPart("c1", "boom", True, "add"),)),
    ]
    body = wire.build_request("m", messages, [decl], stream=True)
    parsed = wire.parse_request(body, model="m", stream=True)
    assert parsed.tools == (decl,)
    assert parsed.stream is True
    assert [m.role for m in parsed.messages] == ["system", "user", "assistant", "tool"]
    assert parsed.messages[0].text == "be brief"
    assert json.loads(parsed.tool_calls[0].arguments) == {"a": 1}
    (result,) = parsed.tool_results
    # Ollama has no call ids: a result answers its call by the tool's name
    call_id = "" if provider == "ollama" else "c1"
    assert (result.call_id, result.output, result.name) == (call_id, "boom", "add")
    # OpenAI's two APIs and Ollama have no error flag
    assert result.is_error is (provider in ("anthropic", "gemini"))


def test_openai_fragments_are_real_chunks() -> None:
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    from toolnexus_ref.wire import openai

    turn = Turn(None, (ToolCallPart.of("c1", "add", {"a": 12345}),))
    events = [
        e.json()
        for e in decode_sse(
            b"".join(openai.stream_events(turn, model="m", fragment=4)).decode().splitlines()
        )
        if e.data != "[DONE]"
    ]
    chunks = [ChatCompletionChunk.model_validate(e) for e in events]
    pieces = [
        c.choices[0].delta.tool_calls[0].function.arguments
        for c in chunks
        if c.choices and c.choices[0].delta.tool_calls
    ]  # type: ignore[index,union-attr]
    assert pieces[0] == ""
    assert "".join(pieces) == '{"a": 12345}'
    assert len(pieces) > 3
    assert chunks[-2].choices[0].finish_reason == "tool_calls"
    ChatCompletion.model_validate(openai.build_response(turn, model="m"))


def test_anthropic_events_validate() -> None:
    from anthropic.types import Message as AnthropicMessage
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    from toolnexus_ref.wire import anthropic

    turn = Turn("hi", (ToolCallPart.of("c1", "add", {"a": 1}),))
    adapter: TypeAdapter[object] = TypeAdapter(RawMessageStreamEvent)
    events = decode_sse(
        b"".join(anthropic.stream_events(turn, model="m", fragment=3)).decode().splitlines()
    )
    kinds = [type(adapter.validate_python(e.json())).__name__ for e in events]
    assert kinds[0] == "RawMessageStartEvent"
    assert kinds[-1] == "RawMessageStopEvent"
    AnthropicMessage.model_validate(anthropic.build_response(turn, model="m"))


def test_bad_bodies_are_clear_errors() -> None:
    from toolnexus_ref.wire import WireError, anthropic, openai

    with pytest.raises(WireError, match="'messages' must be a JSON array"):
        openai.parse_request({"model": "m", "messages": "hi"})
    with pytest.raises(WireError, match="unknown message role 'robot'"):
        anthropic.parse_request({"model": "m", "messages": [{"role": "robot", "content": "x"}]})
    with pytest.raises(ValueError, match="unknown provider 'x'"):
        wire_for("x")


def test_gemini_thought_parts_are_not_the_answer() -> None:
    """A thinking reply's ``thought: true`` parts are the model's reasoning, not its text."""
    wire = wire_for("gemini")
    parts = [
        {"text": "The user wants the weather; I should call the tool.", "thought": True},
        {"text": "Checking the weather."},
    ]
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}
    assert wire.parse_response(body).text == "Checking the weather."
    chunk = "data: " + json.dumps(body) + "\n\n"
    assert wire.read_stream(chunk.splitlines(keepends=True)).text == "Checking the weather."
    only_thought = {"candidates": [{"content": {"parts": parts[:1]}, "finishReason": "STOP"}]}
    assert wire.parse_response(only_thought).text is None
