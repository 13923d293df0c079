"""Each provider rule: the real SDK raises its own 400 error class, the request is
recorded as refused, the scripted turn stays unused, and one switch turns it off."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import RULES, FakeLLM, text

ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer"}},
    "additionalProperties": False,
}
CHAT_TOOL = {"type": "function", "function": {"name": "add", "parameters": ADD}}
RESP_TOOL = {"type": "function", "name": "add", "parameters": ADD}
ANT_TOOL = {"name": "add", "input_schema": ADD}


def _chat_call(*ids: str) -> dict[str, Any]:
    calls = [
        {"id": i, "type": "function", "function": {"name": "add", "arguments": "{}"}} for i in ids
    ]
    return {"role": "assistant", "content": None, "tool_calls": calls}


def _chat(messages: list[Any], tools: list[Any] | None = None) -> Callable[[], Any]:
    def go() -> Any:
        import openai

        client = openai.OpenAI(api_key="k", max_retries=0)
        return client.chat.completions.create(
            model="m", messages=messages, tools=tools or [CHAT_TOOL]
        )

    return go


def _resp(items: list[Any], tools: list[Any] | None = None) -> Callable[[], Any]:
    def go() -> Any:
        import openai

        client = openai.OpenAI(api_key="k", max_retries=0)
        return client.responses.create(model="m", input=items, tools=tools or [RESP_TOOL])

    return go


def _ant(messages: list[Any], tools: list[Any] | None = None, **body: Any) -> Callable[[], Any]:
    def go() -> Any:
        import anthropic

        client = anthropic.Anthropic(api_key="k", max_retries=0)
        payload = {"model": "m", "messages": messages, "tools": tools or [ANT_TOOL], **body}
        # the SDK's own low-level call: its typed create() would not let max_tokens go missing
        return client.post("/v1/messages", body=payload, cast_to=anthropic.types.Message)

    return go


USER = {"role": "user", "content": "hi"}
FC = {"type": "function_call", "call_id": "call_a", "name": "add", "arguments": "{}"}
FC_B = {**FC, "call_id": "call_b"}


def _use(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": i, "name": "add", "input": {}} for i in ids],
    }


def _result(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "1"}


CASES: dict[tuple[str, str], Callable[[], Any]] = {
    ("openai", "tool_name"): _chat(
        [USER], [{"type": "function", "function": {"name": "get weather!", "parameters": ADD}}]
    ),
    ("openai", "tool_schema"): _chat(
        [USER],
        [{"type": "function", "function": {"name": "add", "parameters": {"type": "string"}}}],
    ),
    ("openai", "tool_result_without_call"): _chat(
        [USER, _chat_call("call_a"), {"role": "tool", "tool_call_id": "call_x", "content": "1"}]
    ),
    ("openai", "unanswered_tool_call"): _chat(
        [
            USER,
            _chat_call("call_a", "call_b"),
            {"role": "tool", "tool_call_id": "call_a", "content": "1"},
            USER,
        ]
    ),
    ("responses", "tool_name"): _resp(
        [USER], [{"type": "function", "name": "get weather!", "parameters": ADD}]
    ),
    ("responses", "tool_schema"): _resp(
        [USER], [{"type": "function", "name": "add", "parameters": {"type": "array"}}]
    ),
    ("responses", "tool_result_without_call"): _resp(
        [USER, {"type": "function_call_output", "call_id": "call_x", "output": "1"}]
    ),
    ("responses", "unanswered_tool_call"): _resp(
        [USER, FC, FC_B, {"type": "function_call_output", "call_id": "call_a", "output": "1"}]
    ),
    ("anthropic", "max_tokens_required"): _ant([USER]),
    ("anthropic", "tool_name"): _ant(
        [USER], [{"name": "get weather!", "input_schema": ADD}], max_tokens=9
    ),
    ("anthropic", "tool_schema"): _ant(
        [USER], [{"name": "add", "input_schema": {"type": "string"}}], max_tokens=9
    ),
    ("anthropic", "tool_result_without_call"): _ant(
        [USER, _use("toolu_a"), {"role": "user", "content": [_result("toolu_x")]}], max_tokens=9
    ),
    ("anthropic", "tool_result_after_content"): _ant(
        [
            USER,
            _use("toolu_a"),
            {"role": "user", "content": [{"type": "text", "text": "here"}, _result("toolu_a")]},
        ],
        max_tokens=9,
    ),
    ("anthropic", "unanswered_tool_call"): _ant(
        [USER, _use("toolu_a", "toolu_b"), {"role": "user", "content": [_result("toolu_a")]}],
        max_tokens=9,
    ),
}


def _bad_request(provider: str) -> type[Exception]:
    """The provider's SDK's own 400 error class."""
    if provider == "anthropic":
        import anthropic

        return anthropic.BadRequestError
    import openai

    return openai.BadRequestError


@pytest.mark.parametrize(
    ("provider", "rule"), sorted(CASES), ids=[f"{p}-{r}" for p, r in sorted(CASES)]
)
def test_the_sdk_raises_its_own_400_and_the_turn_stays_unused(provider: str, rule: str) -> None:
    fake = FakeLLM([text("never said")])
    with fake.respx(), pytest.raises(_bad_request(provider)) as info:
        CASES[provider, rule]()
    assert info.value.status_code == 400
    assert [(n, r) for n, r, _ in fake.refusals] == [(1, rule)]
    assert fake.behaviour.pending() == ['#1: text "never said"']
    with pytest.raises(AssertionError, match=f"refused as the provider would \\({rule}\\)"):
        fake.verify()


@pytest.mark.parametrize(
    ("provider", "rule"), sorted(CASES), ids=[f"{p}-{r}" for p, r in sorted(CASES)]
)
def test_provider_checks_off_serves_the_turn(provider: str, rule: str) -> None:
    fake = FakeLLM([text("said")], provider_checks=False)
    with fake.respx():
        CASES[provider, rule]()
    assert fake.refusals == []
    fake.verify()


def test_every_rule_has_a_case() -> None:
    names = {
        "openai": {"tool_name", "tool_schema", "tool_result_without_call", "unanswered_tool_call"},
    }
    for provider, rules in names.items():
        assert {r for p, r in CASES if p == provider} == rules
    assert set(RULES) == {"openai", "responses", "anthropic", "gemini", "ollama"}


skip_unless_installed("google.genai")


def _gemini(contents: list[Any], declaration: dict[str, Any]) -> Callable[[], Any]:
    from google import genai
    from google.genai import types

    def go() -> Any:
        client = genai.Client(
            api_key="k",
            http_options=types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=1)),
        )
        config = types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(**declaration)])]
        )
        return client.models.generate_content(model="g", contents=contents, config=config)

    return go


def _gemini_cases() -> dict[str, Callable[[], Any]]:
    from google.genai import types

    add = {"name": "add", "parameters_json_schema": ADD}
    call = types.Content(
        role="model", parts=[types.Part.from_function_call(name="add", args={}) for _ in range(2)]
    )
    one_answer = types.Content(
        role="user", parts=[types.Part.from_function_response(name="add", response={"output": 1})]
    )
    return {
        "tool_name": _gemini(["hi"], {**add, "name": "get weather!"}),
        "tool_schema": _gemini(["hi"], {**add, "parameters_json_schema": {**ADD, "$schema": "x"}}),
        "unanswered_tool_call": _gemini(["hi", call, one_answer, "go on"], add),
    }


@pytest.mark.parametrize("rule", ["tool_name", "tool_schema", "unanswered_tool_call"])
def test_gemini_sdk_raises_its_client_error(rule: str) -> None:
    from google.genai import errors

    fake = FakeLLM([text("never said")])
    with fake.respx(), pytest.raises(errors.ClientError) as info:
        _gemini_cases()[rule]()
    assert info.value.code == 400
    assert [r for _, r, _ in fake.refusals] == [rule]
    assert fake.behaviour.pending() == ['#1: text "never said"']


def test_a_tool_message_with_no_call_before_it() -> None:
    import openai

    fake = FakeLLM([text("never said")])
    tool_first = [USER, {"role": "tool", "tool_call_id": "call_a", "content": "1"}]
    with fake.respx(), pytest.raises(openai.BadRequestError, match="preceeding message"):
        _chat(tool_first)()
    assert fake.refusals[0][1] == "tool_result_without_call"


def test_an_unreadable_body_is_refused_and_recorded() -> None:
    import httpx

    fake = FakeLLM([text("never said")])
    with fake.respx():
        reply = httpx.post(
            "https://api.anthropic.com/v1/messages",
            json={"model": "m", "max_tokens": 5, "messages": [{"role": "robot", "content": "x"}]},
        )
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert [r for _, r, _ in fake.refusals] == ["malformed_request"]
    assert fake.requests[0].provider == "anthropic"
    with pytest.raises(AssertionError, match="malformed_request"):
        fake.verify()
