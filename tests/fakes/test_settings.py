"""Request settings bind the fake as they bind a model: a scripted reply the request
forbids is refused with the rule named, and ``max_tokens`` cuts a long text."""

from __future__ import annotations

import pytest

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls

TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
    for n in ("add", "echo")
]
USER = [{"role": "user", "content": "hi"}]


def _chat(fake: FakeLLM, **settings: object) -> object:
    import openai

    with fake.respx():
        client = openai.OpenAI(api_key="k", max_retries=0)
        return client.chat.completions.create(
            model="m",
            messages=USER,
            tools=TOOLS,
            **settings,  # type: ignore[arg-type]
        )


@pytest.mark.parametrize(
    ("reply", "settings", "rule"),
    [
        (tool_calls("add"), {"tool_choice": "none"}, "tool_choice"),
        (text("no call"), {"tool_choice": "required"}, "tool_choice"),
        (
            tool_calls("echo"),
            {"tool_choice": {"type": "function", "function": {"name": "add"}}},
            "tool_choice",
        ),
        (tool_calls("add", "echo"), {"parallel_tool_calls": False}, "parallel_tool_calls"),
        (tool_calls("nope"), {}, "tool_not_offered"),
        (text("not json"), {"response_format": {"type": "json_object"}}, "response_format"),
    ],
    ids=["none", "required", "forced", "parallel", "not-offered", "json"],
)
def test_a_forbidden_reply_fails_with_the_rule_named(
    reply: object, settings: dict[str, object], rule: str
) -> None:
    import openai

    fake = FakeLLM([reply])  # type: ignore[list-item]
    with pytest.raises(openai.BadRequestError, match=f"breaks the request's {rule} rule"):
        _chat(fake, **settings)
    with pytest.raises(AssertionError, match=f"breaks the {rule} rule"):
        fake.verify()
    relaxed = FakeLLM([reply], strict=False)  # type: ignore[list-item]
    with pytest.raises(openai.BadRequestError):
        _chat(relaxed, **settings)
    with pytest.raises(AssertionError, match=rule):
        relaxed.verify()  # a script bug fails even when not strict


def test_allowed_replies_pass() -> None:
    forced = {"type": "function", "function": {"name": "add"}}
    assert _chat(FakeLLM([tool_calls("add")]), tool_choice=forced)
    assert _chat(FakeLLM([tool_calls("add")]), parallel_tool_calls=False)
    assert _chat(FakeLLM([text("hi")]), tool_choice="none")


def test_json_schema_output_is_checked() -> None:
    import openai

    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "place", "schema": schema}}
    ok = _chat(FakeLLM([text('{"city": "Oslo"}')]), response_format=fmt)
    assert ok.choices[0].message.content == '{"city": "Oslo"}'  # type: ignore[attr-defined]
    fake = FakeLLM([text('{"town": "Oslo"}')])
    with pytest.raises(openai.BadRequestError, match="does not match the response_format schema"):
        _chat(fake, response_format=fmt)


def test_max_tokens_cuts_a_long_text_with_the_length_stop() -> None:
    import anthropic
    import openai

    long = "word " * 100
    done = _chat(FakeLLM([text(long)]), max_completion_tokens=5)
    choice = done.choices[0]  # type: ignore[attr-defined]
    assert choice.finish_reason == "length"
    assert choice.message.content == long[:20]
    assert done.usage.completion_tokens == 5  # type: ignore[attr-defined]
    fake = FakeLLM([text(long)])
    with fake.respx():
        client = anthropic.Anthropic(api_key="k", max_retries=0)
        reply = client.messages.create(model="m", max_tokens=3, messages=USER)  # type: ignore[arg-type]
    assert reply.stop_reason == "max_tokens"
    fake = FakeLLM([text(long)])
    with fake.respx():
        resp = openai.OpenAI(api_key="k", max_retries=0).responses.create(
            model="m", input="hi", max_output_tokens=4
        )
    assert resp.status == "incomplete"
    assert resp.incomplete_details.reason == "max_output_tokens"  # type: ignore[union-attr]


def test_anthropic_tool_choice_any_and_parallel_off() -> None:
    import anthropic

    fake = FakeLLM([tool_calls("add", "echo")])
    decl = [{"name": n, "input_schema": {"type": "object"}} for n in ("add", "echo")]
    with fake.respx(), pytest.raises(anthropic.BadRequestError, match="parallel_tool_calls"):
        anthropic.Anthropic(api_key="k", max_retries=0).messages.create(
            model="m",
            max_tokens=9,
            messages=USER,  # type: ignore[arg-type]
            tools=decl,  # type: ignore[arg-type]
            tool_choice={"type": "any", "disable_parallel_tool_use": True},
        )


def test_usage_is_on_every_reply_and_streamed_only_when_asked() -> None:
    import openai

    from pytest_toolnexus.fakes import Usage

    done = _chat(FakeLLM([tool_calls("add")]))
    assert done.usage.prompt_tokens > 0
    assert done.usage.completion_tokens > 0
    set_by_hand = _chat(FakeLLM([text("x", usage=Usage(7, 3))]))
    assert set_by_hand.usage.total_tokens == 10  # type: ignore[attr-defined]
    fake = FakeLLM([text("a"), text("b")])
    with fake.respx():
        client = openai.OpenAI(api_key="k", max_retries=0)
        plain = list(client.chat.completions.create(model="m", messages=USER, stream=True))  # type: ignore[arg-type]
        asked = list(
            client.chat.completions.create(
                model="m",
                messages=USER,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert all(c.usage is None for c in plain)
    assert asked[-1].usage is not None
    assert asked[-1].usage.total_tokens > 0


@pytest.mark.parametrize(
    ("provider", "body", "expected"),
    [
        (
            "anthropic",
            {"max_tokens": 9, "tool_choice": {"type": "tool", "name": "add"}},
            {"tool_choice": "add", "max_tokens": 9},
        ),
        (
            "gemini",
            {
                "toolConfig": {"functionCallingConfig": {"mode": "NONE"}},
                "generationConfig": {
                    "maxOutputTokens": 7,
                    "responseMimeType": "application/json",
                    "responseSchema": {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
                },
            },
            {
                "tool_choice": "none",
                "max_tokens": 7,
                "response_format": "json_schema",
                "response_schema": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        ),
        (
            "ollama",
            {"options": {"num_predict": 3}, "format": "json"},
            {"max_tokens": 3, "response_format": "json_object"},
        ),
        (
            "responses",
            {
                "tool_choice": "required",
                "parallel_tool_calls": False,
                "text": {"format": {"type": "json_object"}},
            },
            {
                "tool_choice": "required",
                "parallel_tool_calls": False,
                "response_format": "json_object",
            },
        ),
    ],
)
def test_every_wire_reads_the_settings(
    provider: str, body: dict[str, object], expected: dict[str, object]
) -> None:
    from toolnexus_ref.wire import wire_for

    base: dict[str, object] = {"model": "m", "messages": [], "contents": [], "input": []}
    request = wire_for(provider).parse_request({**base, **body}, model="m")
    assert request.settings.to_data() == expected


def test_ollama_json_format_binds_the_reply() -> None:
    import httpx

    fake = FakeLLM([text("plain words")])
    with fake.respx():
        body = {"model": "m", "messages": USER, "format": "json", "stream": False}
        reply = httpx.post("http://127.0.0.1:11434/api/chat", json=body)
    assert reply.status_code == 400
    assert "response_format" in reply.json()["error"]
