"""Tool calls from each provider's wire shape, and executing them through a toolkit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolnexus_ref import ToolContext, ToolResult
from toolnexus_ref.toolkit import (
    ToolCall,
    Toolkit,
    parse_anthropic_tool_calls,
    parse_gemini_tool_calls,
    parse_openai_tool_calls,
)


def openai_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# -- OpenAI ---------------------------------------------------------------------------
def test_openai_message_and_bare_list_parse_the_same() -> None:
    items = [openai_call("call_1", "add", '{"a": 1, "b": 2}'), openai_call("call_2", "ping", "{}")]
    message = {"role": "assistant", "content": None, "tool_calls": items}
    expected = [
        ToolCall("call_1", "add", {"a": 1, "b": 2}),
        ToolCall("call_2", "ping", {}),
    ]
    assert parse_openai_tool_calls(message) == expected
    assert parse_openai_tool_calls(items) == expected
    assert parse_openai_tool_calls(message)[0].raw is items[0]


def test_openai_message_without_tool_calls_is_empty() -> None:
    assert parse_openai_tool_calls({"role": "assistant", "content": "hi"}) == []
    assert parse_openai_tool_calls({"role": "assistant", "tool_calls": None}) == []
    assert parse_openai_tool_calls(None) == []


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ('{"a": 1', "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
        ("[1, 2]", "must be a JSON object, got an array"),
        ("42", "must be a JSON object, got a number"),
        ('"text"', "not valid JSON"),
        ("true", "must be a JSON object, got a boolean"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_openai_bad_arguments_become_an_error_call(arguments: str, fragment: str) -> None:
    (call,) = parse_openai_tool_calls([openai_call("c", "add", arguments)])
    assert call.id == "c"
    assert call.name == "add"
    assert call.arguments is None
    assert call.ok is False
    assert call.error is not None
    assert fragment in call.error
    assert len(call.error) < 400  # a huge argument text is quoted, not copied


def test_openai_empty_argument_text_means_no_arguments() -> None:
    assert parse_openai_tool_calls([openai_call("c", "ping", "")])[0].arguments == {}


def test_openai_items_without_name_or_function_are_error_calls() -> None:
    calls = parse_openai_tool_calls(
        [{"id": "x", "type": "function"}, openai_call("y", "", "{}"), {"type": "custom"}]
    )
    assert len(calls) == 2
    assert "no 'function' object" in (calls[0].error or "")
    assert "no tool name" in (calls[1].error or "")


def test_openai_responses_api_function_call_items() -> None:
    output = [
        {"type": "message", "content": []},
        {"type": "function_call", "call_id": "fc_1", "name": "add", "arguments": '{"a": 1}'},
    ]
    assert parse_openai_tool_calls(output) == [ToolCall("fc_1", "add", {"a": 1})]


def test_openai_sdk_objects_are_read_like_dicts() -> None:
    chat = pytest.importorskip("openai.types.chat")
    message = chat.ChatCompletionMessage.model_validate(
        {"role": "assistant", "tool_calls": [openai_call("call_9", "add", '{"a": 5}')]}
    )
    assert parse_openai_tool_calls(message) == [ToolCall("call_9", "add", {"a": 5})]


def test_openai_shape_errors_are_type_errors() -> None:
    with pytest.raises(TypeError, match="expected a list of OpenAI tool calls"):
        parse_openai_tool_calls("not a message")
    with pytest.raises(TypeError, match="or an object with 'tool_calls'"):
        parse_openai_tool_calls(42)


@given(st.text(max_size=50))
def test_openai_parsing_never_raises_for_any_argument_text(text: str) -> None:
    (call,) = parse_openai_tool_calls([openai_call("c", "t", text)])
    assert (call.arguments is None) == (call.error is not None)
    if call.arguments is not None:
        assert isinstance(call.arguments, dict)


# -- Anthropic ------------------------------------------------------------------------
def test_anthropic_tool_use_blocks_skip_other_blocks() -> None:
    content = [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 1}},
        {"type": "tool_use", "id": "toolu_2", "name": "ping", "input": {}},
    ]
    expected = [ToolCall("toolu_1", "add", {"a": 1}), ToolCall("toolu_2", "ping", {})]
    assert parse_anthropic_tool_calls(content) == expected
    assert parse_anthropic_tool_calls({"role": "assistant", "content": content}) == expected


def test_anthropic_input_that_is_not_an_object_is_an_error_call() -> None:
    (call,) = parse_anthropic_tool_calls(
        [{"type": "tool_use", "id": "t", "name": "add", "input": [1]}]
    )
    assert call.arguments is None
    assert "must be a JSON object, got an array" in (call.error or "")


def test_anthropic_sdk_message() -> None:
    types = pytest.importorskip("anthropic.types")
    message = types.Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 2}}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    assert parse_anthropic_tool_calls(message) == [ToolCall("toolu_9", "add", {"a": 2})]


# -- Gemini ---------------------------------------------------------------------------
def test_gemini_parts_response_and_content_shapes() -> None:
    parts = [
        {"text": "ok"},
        {"functionCall": {"name": "add", "args": {"a": 1}, "id": "g1"}},
        {"functionCall": {"name": "ping"}},
    ]
    response = {"candidates": [{"content": {"role": "model", "parts": parts}}]}
    from_parts = parse_gemini_tool_calls(parts)
    assert from_parts == parse_gemini_tool_calls({"role": "model", "parts": parts})
    assert from_parts == parse_gemini_tool_calls(response)
    assert from_parts[0] == ToolCall("g1", "add", {"a": 1})
    assert from_parts[1].name == "ping"
    assert from_parts[1].arguments == {}


def test_gemini_generated_ids_are_stable_and_distinct() -> None:
    parts = [
        {"functionCall": {"name": "add", "args": {"a": 1}}},
        {"functionCall": {"name": "add", "args": {"a": 1}}},
    ]
    first = parse_gemini_tool_calls(parts)
    second = parse_gemini_tool_calls(json.loads(json.dumps(parts)))
    assert [c.id for c in first] == [c.id for c in second]
    assert all(c.id for c in first)
    assert first[0].id != first[1].id


def test_gemini_args_not_an_object_and_snake_case_parts() -> None:
    calls = parse_gemini_tool_calls(
        [
            {"functionCall": {"name": "add", "args": "nope"}},
            {"function_call": {"name": "ping", "args": {}}},
        ]
    )
    assert "not valid JSON" in (calls[0].error or "")
    assert calls[0].id  # an error call still has an id to answer to
    assert calls[1].ok


# -- executing ------------------------------------------------------------------------
class Adder:
    """Adds; counts the calls in flight, so overlap is seen without reading a clock."""

    name = "add"
    description = "Add."
    input_schema: Mapping[str, Any] = {"type": "object"}
    source = "custom"

    def __init__(self) -> None:
        self.running = 0
        self.most_at_once = 0

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await asyncio.sleep(float(args.get("delay", 0)))
        finally:
            self.running -= 1
        return ToolResult.ok(str(args.get("a", 0) + args.get("b", 0)))


def test_execute_call_runs_good_calls_and_answers_bad_ones() -> None:
    kit = Toolkit([Adder()])
    good, bad = parse_openai_tool_calls(
        [openai_call("c1", "add", '{"a": 1, "b": 2}'), openai_call("c2", "add", "{oops")]
    )
    assert asyncio.run(kit.execute_call(good)) == ToolResult.ok("3")
    result = asyncio.run(kit.execute_call(bad))
    assert result.is_error
    assert result.metadata == {
        "error_type": "InvalidToolCall",
        "call_id": "c2",
        "retryable": False,
    }
    assert "not valid JSON" in result.output


def test_execute_calls_runs_concurrently_and_keeps_order() -> None:
    adder = Adder()
    kit = Toolkit([adder])
    calls = [
        ToolCall("1", "add", {"a": 1, "delay": 0.2}),
        ToolCall("2", "nope", {}),
        ToolCall("3", "add", {"a": 3, "delay": 0.2}),
        ToolCall("4", "add", None, "broken"),
        ToolCall("5", "add", {"a": 5, "delay": 0.2}),
    ]
    results = asyncio.run(kit.execute_calls(calls))
    assert [r.output for r in results[::2]] == ["1", "3", "5"]
    assert results[1].metadata["error_type"] == "UnknownTool"
    assert results[3].output == "broken"
    assert adder.most_at_once == 3  # the three good calls overlapped


def test_execute_calls_max_concurrency() -> None:
    adder = Adder()
    kit = Toolkit([adder])
    calls = [ToolCall(str(i), "add", {"a": i, "delay": 0.05}) for i in range(4)]
    results = asyncio.run(kit.execute_calls(calls, max_concurrency=1))
    assert adder.most_at_once == 1
    assert [r.output for r in results] == ["0", "1", "2", "3"]
    with pytest.raises(ValueError, match="max_concurrency"):
        asyncio.run(kit.execute_calls(calls, max_concurrency=0))


def test_execute_calls_share_the_context() -> None:
    kit = Toolkit([Adder()])
    ctx = ToolContext()
    ctx.cancel("user pressed stop")
    results = asyncio.run(
        kit.execute_calls([ToolCall("1", "add", {}), ToolCall("2", "add", {})], ctx)
    )
    assert all(r.is_error and "user pressed stop" in r.output for r in results)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(name=st.one_of(st.text(max_size=10), st.just("add"), JSON), args=JSON)
def test_any_model_output_ends_in_a_result_never_an_exception(name: Any, args: Any) -> None:
    """Whatever a model sends, in any provider's shape, the host gets results back."""
    calls = [
        *parse_openai_tool_calls([openai_call("o", name, json.dumps(args))]),
        *parse_anthropic_tool_calls([{"type": "tool_use", "id": "a", "name": name, "input": args}]),
        *parse_gemini_tool_calls([{"functionCall": {"name": name, "args": args}}]),
    ]
    assert len(calls) == 3
    for call in calls:
        assert (call.arguments is None) == (call.error is not None)
    results = asyncio.run(Toolkit([Adder()]).execute_calls(calls, timeout=1.0))
    assert all(isinstance(r, ToolResult) for r in results)
