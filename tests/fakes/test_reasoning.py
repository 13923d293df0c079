"""Scripted reasoning reaches the real SDKs in each provider's own shape, whole and
streamed: Anthropic thinking blocks (signed, redacted), Responses reasoning items,
Gemini thought parts and signatures, ``reasoning_content`` on Chat Completions and
Ollama's ``thinking``; and a script the request forbids is refused."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolnexus.fakes import FakeLLM, Reasoning, signature_for, text, tool_calls

ADD = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
THINKING = {"type": "enabled", "budget_tokens": 1024}


def _script() -> list[Any]:
    return [
        tool_calls(
            ("add", {"a": 2, "b": 3}),
            reasoning=["The user wants a sum; the add tool does it.", Reasoning(redacted=True)],
        ),
        text("5", reasoning="The tool said 5."),
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_anthropic_thinking_blocks(stream: bool) -> None:
    anthropic = pytest.importorskip("anthropic")
    fake = FakeLLM(_script(), fragment=5)
    tools: Any = [{"name": "add", "description": "Add.", "input_schema": ADD}]
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "2 + 3?"}]
        for _ in range(2):
            ask: dict[str, Any] = {
                "model": "claude-fake",
                "max_tokens": 2000,
                "messages": messages,
                "tools": tools,
                "thinking": THINKING,
            }
            if stream:
                with client.messages.stream(**ask) as events:
                    reply = events.get_final_message()
            else:
                reply = client.messages.create(**ask)
            kinds = [b.type for b in reply.content]
            if reply.stop_reason == "tool_use":
                assert kinds == ["thinking", "redacted_thinking", "tool_use"]
                first = reply.content[0]
                assert first.type == "thinking"
                assert first.thinking == "The user wants a sum; the add tool does it."
                assert first.signature == signature_for(first.thinking)
                # the agent passes the blocks back unchanged, as the API requires
                messages.append({"role": "assistant", "content": reply.content})
                use = reply.content[2]
                assert use.type == "tool_use"
                messages.append(
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "5"}],
                    }
                )
            else:
                assert kinds == ["thinking", "text"]
                assert reply.content[1].type == "text"
                assert reply.content[1].text == "5"
    fake.verify()
    assert fake.last_request.tool_results[0].output == "5"


def test_anthropic_refuses_thinking_the_request_did_not_enable() -> None:
    anthropic = pytest.importorskip("anthropic")
    fake = FakeLLM([text("5", reasoning="hidden")])
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        with pytest.raises(anthropic.BadRequestError, match="does not enable thinking"):
            client.messages.create(
                model="claude-fake", max_tokens=100, messages=[{"role": "user", "content": "?"}]
            )
    assert [v[1] for v in fake.violations] == ["thinking_not_enabled"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_responses_reasoning_items(stream: bool) -> None:
    openai = pytest.importorskip("openai")
    fake = FakeLLM([text("5", reasoning="Two plus three is five.")], fragment=4)
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        ask: dict[str, Any] = {
            "model": "o-fake",
            "input": "2 + 3?",
            "reasoning": {"effort": "low", "summary": "auto"},
        }
        if stream:
            with client.responses.stream(**ask) as events:
                deltas = [
                    e.delta for e in events if e.type == "response.reasoning_summary_text.delta"
                ]
                reply = events.get_final_response()
            assert "".join(deltas) == "Two plus three is five."
        else:
            reply = client.responses.create(**ask)
    assert [item.type for item in reply.output] == ["reasoning", "message"]
    item = reply.output[0]
    assert item.type == "reasoning"
    assert [s.text for s in item.summary] == ["Two plus three is five."]
    assert item.encrypted_content == signature_for("Two plus three is five.")
    assert reply.output_text == "5"
    assert reply.usage is not None
    assert reply.usage.output_tokens_details.reasoning_tokens > 0
    fake.verify()


def test_responses_without_a_summary_asked_sends_an_empty_summary() -> None:
    openai = pytest.importorskip("openai")
    fake = FakeLLM([text("5", reasoning="private")])
    with fake.respx():
        reply = openai.OpenAI(api_key="x", max_retries=0).responses.create(
            model="o-fake", input="2 + 3?"
        )
    item = reply.output[0]
    assert item.type == "reasoning"
    assert item.summary == []
    fake.verify()


def _parts(reply: Any) -> list[Any]:
    return list(reply.candidates[0].content.parts or [])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_gemini_thought_parts_and_signature(stream: bool) -> None:
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 3}), reasoning="I should add.")], fragment=4)
    declared = types.FunctionDeclaration(name="add", description="Add.", parameters_json_schema=ADD)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declared])],
        thinking_config=types.ThinkingConfig(include_thoughts=True),
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    with fake.respx():
        client = genai.Client(api_key="x")
        if stream:
            parts: list[Any] = []
            for chunk in client.models.generate_content_stream(
                model="gemini-fake", contents="2 + 3?", config=config
            ):
                parts += _parts(chunk)
        else:
            reply: Any = client.models.generate_content(
                model="gemini-fake", contents="2 + 3?", config=config
            )
            parts = _parts(reply)
            assert reply.usage_metadata.thoughts_token_count > 0
    thoughts = "".join(p.text for p in parts if p.thought)
    assert thoughts == "I should add."
    call = next(p for p in parts if p.function_call)
    assert call.thought_signature is not None  # bytes: the SDK decoded the base64
    fake.verify()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_chat_completions_reasoning_content(stream: bool) -> None:
    openai = pytest.importorskip("openai")
    fake = FakeLLM([text("5", reasoning="Two plus three.")], fragment=4)
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        ask: dict[str, Any] = {
            "model": "deepseek-reasoner",
            "messages": [{"role": "user", "content": "2 + 3?"}],
        }
        if stream:
            chunks = list(client.chat.completions.create(**ask, stream=True))
            shown = "".join(
                getattr(c.choices[0].delta, "reasoning_content", None) or ""
                for c in chunks
                if c.choices
            )
        else:
            reply = client.chat.completions.create(**ask)
            shown = getattr(reply.choices[0].message, "reasoning_content", "")
            assert reply.usage is not None
            assert reply.usage.completion_tokens_details is not None
            assert reply.usage.completion_tokens_details.reasoning_tokens == 4
    assert shown == "Two plus three."
    fake.verify()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_ollama_thinking(stream: bool) -> None:
    ollama = pytest.importorskip("ollama")
    fake = FakeLLM([text("5", reasoning="Two plus three.")], fragment=4)
    with fake.respx():
        client = ollama.Client()
        ask: dict[str, Any] = {
            "model": "qwen3",
            "messages": [{"role": "user", "content": "2 + 3?"}],
            "think": True,
        }
        if stream:
            parts = list(client.chat(**ask, stream=True))
            thinking = "".join(p.message.thinking or "" for p in parts)
            content = "".join(p.message.content or "" for p in parts)
        else:
            reply = client.chat(**ask)
            thinking, content = reply.message.thinking or "", reply.message.content
    assert (thinking, content) == ("Two plus three.", "5")
    fake.verify()


def _anthropic_round(client: Any, messages: list[Any]) -> Any:
    tools: Any = [{"name": "add", "description": "Add.", "input_schema": ADD}]
    return client.messages.create(
        model="claude-fake", max_tokens=2000, messages=messages, tools=tools, thinking=THINKING
    )


@pytest.mark.parametrize("mistake", ["dropped", "edited"])
def test_anthropic_refuses_thinking_not_sent_back_unchanged(mistake: str) -> None:
    """An agent that drops the thinking blocks before its tool result, or edits them,
    gets the API's own 400, as Claude with thinking enabled answers it."""
    anthropic = pytest.importorskip("anthropic")
    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 3}), reasoning="Sum it."), text("5")])
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "2 + 3?"}]
        reply = _anthropic_round(client, messages)
        blocks = [b.model_dump() for b in reply.content]
        if mistake == "dropped":
            blocks = [b for b in blocks if b["type"] == "tool_use"]
            wanted = "Expected `thinking` or `redacted_thinking`, but found `tool_use`"
        else:
            blocks[0]["thinking"] = "Something else."
            wanted = "Invalid `signature` in `thinking` block"
        messages.append({"role": "assistant", "content": blocks})
        result = {"type": "tool_result", "tool_use_id": blocks[-1]["id"], "content": "5"}
        messages.append({"role": "user", "content": [result]})
        with pytest.raises(anthropic.BadRequestError, match=wanted):
            _anthropic_round(client, messages)
    rule = "thinking_block_missing" if mistake == "dropped" else "thinking_signature"
    assert [r[1] for r in fake.refusals] == [rule]


@pytest.mark.parametrize("keep", [True, False], ids=["sdk_content", "rebuilt"])
def test_gemini_needs_the_thought_signature_back(keep: bool) -> None:
    """Sending the model's content back as the SDK gave it keeps the signature and
    works; rebuilding the call part without it is refused as Gemini 3 refuses it."""
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import errors, types

    fake = FakeLLM([tool_calls(("add", {"a": 2, "b": 3}), reasoning="Add."), text("5")])
    declared = types.FunctionDeclaration(name="add", description="Add.", parameters_json_schema=ADD)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declared])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        http_options=types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=1)),
    )
    with fake.respx():
        client = genai.Client(api_key="x")
        contents: list[Any] = [types.Content(role="user", parts=[types.Part(text="2 + 3?")])]
        first: Any = client.models.generate_content(
            model="gemini-fake", contents=contents, config=config
        )
        model_content = first.candidates[0].content
        call = model_content.parts[0].function_call
        if not keep:
            model_content = types.Content(role="model", parts=[types.Part(function_call=call)])
        contents.append(model_content)
        answer: Any = types.Part.from_function_response(name="add", response={"output": 5})
        answer.function_response.id = call.id
        contents.append(types.Content(role="user", parts=[answer]))
        if keep:
            reply = client.models.generate_content(
                model="gemini-fake", contents=contents, config=config
            )
            assert reply.text == "5"
            fake.verify()
        else:
            with pytest.raises(errors.ClientError, match="missing a thought_signature"):
                client.models.generate_content(
                    model="gemini-fake", contents=contents, config=config
                )
            assert [r[1] for r in fake.refusals] == ["thought_signature_missing"]
