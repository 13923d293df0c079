"""The real ``google-genai`` SDK runs a multi-turn tool loop against the fakes, through
respx (its default httpx2 transport and an injected httpx client) and through the
loopback server, streamed and not, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from unittest import mock

import httpx
import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, error, text, tool_calls
from toolnexus_ref import BaseTool
from toolnexus_ref.wire import ToolDecl

skip_unless_installed("google.genai")
if TYPE_CHECKING:  # the tests import the SDK themselves: collecting this module stays cheap
    from google.genai import types

MODEL = "gemini-fake"


def _decls(tools: list[BaseTool]) -> list[ToolDecl]:
    return [ToolDecl(t.name, t.description, dict(t.input_schema)) for t in tools]


def _config(tools: list[BaseTool]) -> types.GenerateContentConfig:
    from google.genai import types

    declared = [
        types.FunctionDeclaration(
            name=t.name, description=t.description, parameters_json_schema=dict(t.input_schema)
        )
        for t in tools
    ]
    return types.GenerateContentConfig(
        system_instruction="Use the tools.",
        tools=[types.Tool(function_declarations=declared)],
    )


def _script() -> list[Any]:
    return [
        tool_calls(("add", {"a": 2, "b": 3}), ("echo", {"text": "hi there, a longer text"})),
        tool_calls(("add", {"a": 5, "b": 10})),
        text("The answer is 15."),
    ]


@contextmanager
def _client(fake: FakeLLM, how: str) -> Iterator[Any]:
    """A ``genai.Client`` reaching ``fake``: ``respx`` patches the SDK's default httpx2
    transport, ``respx-httpx`` an httpx client handed to the SDK, ``server`` is real HTTP.
    Google credential discovery fails the test: an API key must be all the SDK needs."""
    refuse = AssertionError("google-genai looked for Google credentials")
    with mock.patch("google.auth.default", side_effect=refuse), _reach(fake, how) as client:
        yield client


@contextmanager
def _reach(fake: FakeLLM, how: str) -> Iterator[Any]:
    from google import genai
    from google.genai import types

    no_retry = types.HttpRetryOptions(attempts=1)
    if how == "server":
        with fake.serve() as server:
            options = types.HttpOptions(base_url=server.gemini_base_url, retry_options=no_retry)
            yield genai.Client(api_key="test", http_options=options)
        return
    with fake.respx():
        if how == "respx-httpx":
            with httpx.Client() as http:
                options = types.HttpOptions(httpx_client=http, retry_options=no_retry)
                yield genai.Client(api_key="test", http_options=options)
        else:
            yield genai.Client(api_key="test", http_options={"retry_options": no_retry})


class _Loop:
    """The host side of a Gemini tool loop, as a user would write it with the SDK."""

    def __init__(self, tools: list[BaseTool]) -> None:
        from google.genai import types

        self.tools = tools
        self.config = _config(tools)
        self.contents: list[types.Content] = [
            types.Content(role="user", parts=[types.Part.from_text(text="add things")])
        ]
        self.seen: list[list[tuple[str | None, dict[str, Any] | None]]] = []
        self.finish: list[types.FinishReason | None] = []

    def take(self, chunks: list[types.GenerateContentResponse]) -> str | list[types.FunctionCall]:
        """Fold one turn (one response, or a stream's chunks): the final text, or the
        calls to answer with ``answer``."""
        from google.genai import types

        parts = [
            part
            for chunk in chunks
            for candidate in chunk.candidates or []
            for part in (candidate.content.parts if candidate.content else None) or []
        ]
        last = chunks[-1].candidates
        self.finish.append(last[0].finish_reason if last else None)
        calls = [p.function_call for p in parts if p.function_call is not None]
        self.seen.append([(c.name, c.args) for c in calls])
        if not calls:
            return "".join(p.text for p in parts if p.text)
        self.contents.append(types.Content(role="model", parts=parts))
        return calls

    def answer(self, calls: list[types.FunctionCall], outputs: list[str]) -> None:
        from google.genai import types

        responses = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=c.id, name=c.name, response={"output": output}
                )
            )
            for c, output in zip(calls, outputs, strict=True)
        ]
        self.contents.append(types.Content(role="user", parts=responses))

    async def execute(self, call: types.FunctionCall) -> str:
        by_name = {t.name: t for t in self.tools}
        return (await by_name[call.name or ""].execute(call.args or {})).output


def _sync_loop(client: Any, tools: list[BaseTool], stream: bool) -> tuple[str, _Loop]:
    loop = _Loop(tools)
    for _ in range(5):
        kwargs = {"model": MODEL, "contents": loop.contents, "config": loop.config}
        if stream:
            chunks = list(client.models.generate_content_stream(**kwargs))
        else:
            chunks = [client.models.generate_content(**kwargs)]
        got = loop.take(chunks)
        if isinstance(got, str):
            return got, loop
        loop.answer(got, [asyncio.run(loop.execute(c)) for c in got])
    raise AssertionError("no final answer")


async def _async_loop(client: Any, tools: list[BaseTool], stream: bool) -> tuple[str, _Loop]:
    loop = _Loop(tools)
    for _ in range(5):
        kwargs = {"model": MODEL, "contents": loop.contents, "config": loop.config}
        if stream:
            chunks = [c async for c in await client.aio.models.generate_content_stream(**kwargs)]
        else:
            chunks = [await client.aio.models.generate_content(**kwargs)]
        got = loop.take(chunks)
        if isinstance(got, str):
            return got, loop
        loop.answer(got, list(await asyncio.gather(*(loop.execute(c) for c in got))))
    raise AssertionError("no final answer")


def _check(fake: FakeLLM, tools: list[BaseTool], loop: _Loop, stream: bool) -> None:
    from google.genai import types

    fake.verify()
    assert [(r.provider, r.model, r.stream) for r in fake.requests] == [
        ("gemini", MODEL, stream)
    ] * 3
    # what the model was shown: the declarations in canonical form, the system text
    assert list(fake.last_request.tools) == _decls(tools)
    assert fake.last_request.messages[0].role == "system"
    assert fake.last_request.messages[0].text == "Use the tools."
    # what the host sent back: one result per call, under the call's id
    fake.assert_tool_called("add", {"a": 5, "b": 10})
    fake.assert_tool_called("echo", {"text": "hi there, a longer text"})
    results = fake.last_request.tool_results
    assert [r.output for r in results] == ["5", "hi there, a longer text", "15"]
    assert [(r.call_id, r.name) for r in results] == [(c.id, c.name) for c in fake.issued_calls]
    assert not any(r.is_error for r in results)
    # what the SDK parsed
    assert loop.seen == [
        [("add", {"a": 2, "b": 3}), ("echo", {"text": "hi there, a longer text"})],
        [("add", {"a": 5, "b": 10})],
        [],
    ]
    assert loop.finish == [types.FinishReason.STOP] * 3


@pytest.mark.parametrize("how", ["respx", "respx-httpx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_genai_sdk_runs_a_tool_loop(tools: list[BaseTool], how: str, stream: bool) -> None:
    fake = FakeLLM(_script(), fragment=3)
    with _client(fake, how) as client:
        answer, loop = _sync_loop(client, tools, stream)
    assert answer == "The answer is 15."
    _check(fake, tools, loop, stream)


@pytest.mark.parametrize("how", ["respx", "server"])
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_async_genai_sdk_runs_a_tool_loop(tools: list[BaseTool], how: str, stream: bool) -> None:
    fake = FakeLLM(_script(), fragment=3)
    with _client(fake, how) as client:
        answer, loop = asyncio.run(_async_loop(client, tools, stream))
    assert answer == "The answer is 15."
    _check(fake, tools, loop, stream)


def test_stream_arrives_in_fragments(tools: list[BaseTool]) -> None:
    fake = FakeLLM([text("The answer is 15.")], fragment=4)
    with _client(fake, "respx") as client:
        chunks = list(
            client.models.generate_content_stream(model=MODEL, contents="hi", config=_config(tools))
        )
    assert [c.text for c in chunks] == ["The ", "answ", "er i", "s 15", "."]
    assert chunks[-1].usage_metadata is not None
    assert chunks[-1].usage_metadata.total_token_count == (
        (chunks[-1].usage_metadata.prompt_token_count or 0)
        + (chunks[-1].usage_metadata.candidates_token_count or 0)
    )
    fake.verify()


def test_a_gemini_schema_is_recorded_as_json_schema() -> None:
    """``parameters`` as the SDK's own ``Schema`` goes out as ``type: "OBJECT"`` with
    ``max_items`` and ``any_of``; the fake records the same JSON Schema as for
    ``parameters_json_schema``."""
    from google.genai import types

    schema = types.Schema(
        type=types.Type.OBJECT,
        properties={
            "max_items": types.Schema(type=types.Type.INTEGER, description="a property name"),
            "tags": types.Schema(
                type=types.Type.ARRAY, items=types.Schema(type=types.Type.STRING), max_items=3
            ),
            "note": types.Schema(type=types.Type.STRING, nullable=True, enum=["A_B", "c"]),
            "either": types.Schema(
                any_of=[types.Schema(type=types.Type.STRING), types.Schema(type=types.Type.NUMBER)]
            ),
        },
        required=["max_items"],
    )
    fake = FakeLLM([text("ok")])
    with _client(fake, "respx") as client:
        decl = types.FunctionDeclaration(name="tagger", description="Tag.", parameters=schema)
        config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[decl])])
        client.models.generate_content(model=MODEL, contents="hi", config=config)
    fake.verify()
    (declared,) = fake.last_request.tools
    assert declared.name == "tagger"
    assert declared.parameters == {
        "type": "object",
        "properties": {
            "max_items": {"type": "integer", "description": "a property name"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "note": {"type": ["string", "null"], "enum": ["A_B", "c"]},
            "either": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
        "required": ["max_items"],
    }


@pytest.mark.parametrize("how", ["respx", "server"])
def test_genai_sdk_sees_a_429(how: str) -> None:
    from google.genai import errors

    fake = FakeLLM([error(429, "slow down", retry_after=0)])
    with _client(fake, how) as client, pytest.raises(errors.ClientError) as info:
        client.models.generate_content(model=MODEL, contents="hi")
    assert info.value.code == 429
    assert info.value.status == "RESOURCE_EXHAUSTED"
    assert "slow down" in (info.value.message or "")
    fake.verify()


def test_a_request_after_the_script_is_a_clear_sdk_error_and_fails_verify() -> None:
    from google.genai import errors

    fake = FakeLLM([text("only one")])
    with _client(fake, "respx") as client:
        assert client.models.generate_content(model=MODEL, contents="hi").text == "only one"
        with pytest.raises(errors.ClientError, match="no reply planned for request #2"):
            client.models.generate_content(model=MODEL, contents="again")
    with pytest.raises(AssertionError, match="1 request\\(s\\) after the plan ran out"):
        fake.verify()
