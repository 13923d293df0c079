"""The fakes' own behaviour: schema-driven generation, scripts, functions, the server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls
from toolnexus_ref import BaseTool
from toolnexus_ref._validation import argument_errors, validator_for
from toolnexus_ref.host import run_loop
from toolnexus_ref.wire import Request


def test_schema_driven_calls_every_tool_with_valid_arguments(tools: list[BaseTool]) -> None:
    fake = FakeLLM.schema_driven(seed=3, rounds=2)
    transcript = asyncio.run(run_loop(fake, tools, "go"))
    fake.verify()
    assert [c.call.name for c in transcript.calls] == ["add", "echo", "add", "echo"]
    schemas = {t.name: t.input_schema for t in tools}
    for record in transcript.calls:
        args = json.loads(record.call.arguments)
        assert argument_errors(validator_for(schemas[record.call.name]), args) == []
        assert not record.result.is_error
    summary = transcript.final_text or ""
    assert summary.count(": ok: ") == 4  # one line per call, every round


def test_schema_driven_is_reproducible(tools: list[BaseTool]) -> None:
    def arguments(seed: int) -> list[str]:
        fake = FakeLLM.schema_driven(seed=seed)
        asyncio.run(run_loop(fake, tools, "go"))
        return [c.arguments for c in fake.issued_calls]

    assert arguments(7) == arguments(7)
    assert arguments(7) != arguments(8)


def test_schema_driven_subset_and_calls_per_turn(tools: list[BaseTool]) -> None:
    fake = FakeLLM.schema_driven(only=["echo"], rounds=3, calls_per_turn=1)
    transcript = asyncio.run(run_loop(fake, tools, "go"))
    assert [len(t.tool_calls) for t in transcript.turns] == [1, 1, 1, 0]
    with pytest.raises(ValueError, match=r"tools \['nope'\] were not offered"):
        asyncio.run(run_loop(FakeLLM.schema_driven(only=["nope"]), tools, "go"))


def test_function_of_the_conversation(tools: list[BaseTool]) -> None:
    def model(request: Request) -> Any:
        if not request.tool_results:
            return tool_calls(("add", {"a": 20, "b": 22}))
        return text(f"sum is {request.tool_results[-1].output}")

    fake = FakeLLM(model)
    transcript = asyncio.run(run_loop(fake, tools, "go"))
    assert transcript.final_text == "sum is 42"


def test_server_answers_unknown_paths_and_bad_bodies() -> None:
    fake = FakeLLM([], strict=False)
    with fake.serve() as server:
        assert httpx.post(server.url + "/nope", json={}).status_code == 404
        bad = httpx.post(server.url + "/v1/messages", content=b"{not json")
        assert bad.status_code == 400
        assert bad.json()["type"] == "error"
    # an unreadable body is refused as the provider would, and recorded as such
    assert [rule for _, rule, _ in fake.refusals] == ["malformed_request"]


def test_server_stops_promptly() -> None:
    import time

    fake = FakeLLM([text("x")])
    server = fake.serve().start()
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 10  # not a full shutdown poll of a stuck server


def test_fallback_generator_without_the_conformance_package(
    tools: list[BaseTool], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_toolnexus.fakes import _generate

    monkeypatch.setattr(_generate, "_conformance_args_for", lambda: None)
    first = _generate.generate_arguments([t.input_schema for t in tools], 5)
    assert first == _generate.generate_arguments([t.input_schema for t in tools], 5)
    for tool, args in zip(tools, first, strict=True):
        assert argument_errors(validator_for(tool.input_schema), args) == []


def test_a_gemini_result_without_a_call_id_still_counts_as_answered() -> None:
    import json

    from pytest_toolnexus.fakes import FakeLLM, text, tool_calls
    from pytest_toolnexus.fakes._http import handle

    fake = FakeLLM([tool_calls(("add", {"a": 1, "b": 2})), text("3")])
    path = "/v1beta/models/gemini-test:generateContent"
    add = {"name": "add", "parametersJsonSchema": {"type": "object"}}
    ask = {
        "contents": [{"role": "user", "parts": [{"text": "1 + 2?"}]}],
        "tools": [{"functionDeclarations": [add]}],
    }
    handle(fake, "POST", path, json.dumps(ask).encode())
    answer = {
        "tools": ask["tools"],
        "contents": [
            *ask["contents"],
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "add", "args": {"a": 1, "b": 2}}}],
            },
            # What google-genai's Part.from_function_response sends: a name, no id.
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "add", "response": {"result": "3"}}}],
            },
        ],
    }
    handle(fake, "POST", path, json.dumps(answer).encode())
    assert fake.assert_tool_called("add", {"a": 1, "b": 2}).name == "add"
    fake.verify()


def test_respx_patches_httpx2_only_while_active() -> None:
    import httpcore2

    from pytest_toolnexus.fakes import FakeLLM

    pool = httpcore2.ConnectionPool.handle_request
    apool = httpcore2.AsyncConnectionPool.handle_async_request
    with FakeLLM().respx():
        with FakeLLM().respx():
            pass
        assert httpcore2.ConnectionPool.handle_request is not pool  # the outer one still holds
    assert httpcore2.ConnectionPool.handle_request is pool
    assert httpcore2.AsyncConnectionPool.handle_async_request is apool
