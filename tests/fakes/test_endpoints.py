"""The endpoints agents call besides chat, through the real SDKs: embeddings
(deterministic, scriptable), token counts (the same count the fake's usage reports),
model lists, and Ollama's generate/show/tags/embed."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import httpx
import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, text

skip_unless_installed("openai", "anthropic")


@pytest.fixture(scope="module")
def openai() -> ModuleType:
    """The openai SDK, imported when a test here first runs rather than at collection."""
    return pytest.importorskip("openai")


@pytest.fixture(scope="module")
def anthropic() -> ModuleType:
    """The anthropic SDK, imported as ``openai`` is."""
    return pytest.importorskip("anthropic")


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(v * v for v in vector))


@pytest.mark.parametrize("how", ["respx", "server"])
def test_openai_embeddings_are_deterministic_unit_vectors(openai: ModuleType, how: str) -> None:
    fake = FakeLLM()
    if how == "respx":
        with fake.respx():
            client = openai.OpenAI(api_key="x", max_retries=0)
            first = client.embeddings.create(model="e", input=["alpha", "beta", "alpha"])
            sized = client.embeddings.create(model="e", input="alpha", dimensions=5)
            floats = client.embeddings.create(model="e", input="alpha", encoding_format="float")
    else:
        with fake.serve() as server:
            client = openai.OpenAI(api_key="x", base_url=server.openai_base_url, max_retries=0)
            first = client.embeddings.create(model="e", input=["alpha", "beta", "alpha"])
            sized = client.embeddings.create(model="e", input="alpha", dimensions=5)
            floats = client.embeddings.create(model="e", input="alpha", encoding_format="float")
    a, b, a2 = (d.embedding for d in first.data)
    assert a == pytest.approx(a2)
    assert a != pytest.approx(b)
    assert len(a) == fake.dimensions
    assert _norm(a) == pytest.approx(1.0, abs=1e-6)
    assert len(sized.data[0].embedding) == 5
    assert floats.data[0].embedding == pytest.approx(a, abs=1e-6)  # base64 is float32
    assert first.usage.prompt_tokens > 0
    assert fake.embedded == ["alpha", "beta", "alpha", "alpha", "alpha"]
    fake.verify()


def test_a_langchain_retriever_over_scripted_embeddings() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_openai import OpenAIEmbeddings

    fake = FakeLLM()
    fake.embedding("Cats purr.", [1.0, 0.0, 0.0])
    fake.embedding("Dogs bark.", [0.0, 1.0, 0.0])
    fake.embedding("Fish swim.", [0.0, 0.0, 1.0])
    fake.embedding("What does a kitten do?", [0.9, 0.1, 0.0])
    with fake.respx():
        embeddings = OpenAIEmbeddings(
            model="text-embedding-3-small", api_key="x", check_embedding_ctx_length=False
        )
        store = InMemoryVectorStore.from_texts(
            ["Cats purr.", "Dogs bark.", "Fish swim."], embeddings
        )
        found = store.as_retriever(search_kwargs={"k": 2}).invoke("What does a kitten do?")
    assert [d.page_content for d in found] == ["Cats purr.", "Dogs bark."]


def test_unscripted_embeddings_find_the_same_text() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_openai import OpenAIEmbeddings

    texts = [f"document number {i}" for i in range(6)]
    with FakeLLM().respx():
        embeddings = OpenAIEmbeddings(model="e", api_key="x", check_embedding_ctx_length=False)
        store = InMemoryVectorStore.from_texts(texts, embeddings)
        found = store.similarity_search("document number 4", k=1)
    assert found[0].page_content == "document number 4"


def test_openai_lists_the_fake_model(openai: ModuleType) -> None:
    fake = FakeLLM(model="gpt-fake")
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        assert [m.id for m in client.models.list()] == ["gpt-fake"]
        assert client.models.retrieve("gpt-other").id == "gpt-other"


def test_anthropic_count_tokens_matches_the_usage_the_fake_reports(anthropic: ModuleType) -> None:
    fake = FakeLLM([text("hello")])
    ask: dict[str, Any] = {
        "model": "claude-x",
        "system": "Be brief.",
        "messages": [{"role": "user", "content": "How many tokens is this sentence?"}],
    }
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        counted = client.messages.count_tokens(**ask)
        again = client.messages.count_tokens(**ask)
        reply = client.messages.create(max_tokens=50, **ask)
    assert counted.input_tokens == again.input_tokens == reply.usage.input_tokens > 0
    fake.verify()  # a count is not a model turn: the script is untouched by it


def test_langchain_anthropic_counts_tokens() -> None:
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic
    from langchain_core.messages import HumanMessage, SystemMessage

    with FakeLLM().respx():
        model = ChatAnthropic(model="claude-x", api_key="x", max_retries=0)  # type: ignore[call-arg]
        short = model.get_num_tokens_from_messages([HumanMessage("hi")])
        longer = model.get_num_tokens_from_messages(
            [SystemMessage("Be brief."), HumanMessage("hi " * 40)]
        )
    assert 0 < short < longer


def test_gemini_embeds_and_counts() -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    fake = FakeLLM()
    fake.embedding("exact", [0.6, 0.8])
    with fake.respx():
        client = genai.Client(api_key="x", http_options={"retry_options": {"attempts": 1}})
        # the SDK sends a list of strings as one content of many parts: one embedding
        many = client.models.embed_content(model="gemini-embedding", contents="exact")
        sized = client.models.embed_content(
            model="gemini-embedding",
            contents="other",
            config=types.EmbedContentConfig(output_dimensionality=4),
        )
        counted = client.models.count_tokens(model="gemini-x", contents="count these words")
    assert [e.values for e in many.embeddings or []] == [[0.6, 0.8]]
    assert len((sized.embeddings or [])[0].values or []) == 4
    assert (counted.total_tokens or 0) > 0


def test_ollama_generate_show_list_and_embed() -> None:
    ollama = pytest.importorskip("ollama")
    fake = FakeLLM([text("Once upon a time."), text("The end.")], model="llama-fake", fragment=5)
    with fake.respx():
        client = ollama.Client()
        whole = client.generate(model="llama-fake", prompt="A story?", system="Be brief.")
        parts = [c.response for c in client.generate(model="llama-fake", prompt="Go", stream=True)]
        shown = client.show("llama-fake")
        listed = client.list()
        embedded = client.embed(model="llama-fake", input=["a", "b"])
    assert whole.response == "Once upon a time."
    assert whole.done
    assert "".join(parts) == "The end."
    assert len(parts) > 2
    assert "tools" in (shown.capabilities or [])
    assert [m.model for m in listed.models] == ["llama-fake"]
    assert len(embedded.embeddings) == 2
    assert [m.role for m in fake.requests[0].messages] == ["system", "user"]
    fake.verify()


def test_an_unknown_endpoint_gets_a_json_404_and_a_bad_body_a_json_400() -> None:
    fake = FakeLLM()
    with fake.serve() as server:
        missing = httpx.get(server.url + "/api/nothing")
        bad = httpx.post(server.url + "/v1/embeddings", json={"model": "e", "input": 3})
    assert missing.status_code == 404
    assert "FakeLLM serves no GET /api/nothing" in missing.json()["error"]["message"]
    assert bad.status_code == 400
    assert "'input' must be a string or a list" in bad.json()["error"]["message"]


def test_anthropic_structured_output_binds_the_script(anthropic: ModuleType) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    good = FakeLLM([text('{"value": 5}')])
    with good.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        parsed = client.messages.parse(
            model="claude-x",
            max_tokens=50,
            messages=[{"role": "user", "content": "2 + 3?"}],
            output_format=Answer,
        )
    assert parsed.parsed_output == Answer(value=5)
    good.verify()
    assert good.last_request.settings.response_format == "json_schema"

    bad = FakeLLM([text('{"value": "five"}')])
    with bad.respx(), pytest.raises(anthropic.BadRequestError, match="fix the script"):
        anthropic.Anthropic(api_key="x", max_retries=0).messages.create(
            model="claude-x",
            max_tokens=50,
            messages=[{"role": "user", "content": "2 + 3?"}],
            output_config={
                "format": {
                    "type": "json_schema",
                    "schema": {
                        "type": "object",
                        "properties": {"value": {"type": "integer"}},
                        "required": ["value"],
                        "additionalProperties": False,
                    },
                }
            },
        )
    assert [rule for _, rule, _ in bad.violations] == ["response_format"]


def test_request_ids_and_provider_shaped_call_ids(
    openai: ModuleType, anthropic: ModuleType
) -> None:
    from pytest_toolnexus.fakes import tool_calls

    fake = FakeLLM([tool_calls(("add", {"a": 1, "b": 2})), text("hi"), error_reply()])
    tools = [{"name": "add", "description": "Add.", "input_schema": {"type": "object"}}]
    with fake.respx():
        claude = anthropic.Anthropic(api_key="x", max_retries=0)
        called = claude.messages.create(
            model="c", max_tokens=10, tools=tools, messages=[{"role": "user", "content": "add"}]
        )
        gpt = openai.OpenAI(api_key="x", max_retries=0)
        said = gpt.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.RateLimitError) as info:
            gpt.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert called._request_id == "req_fake1"
    assert called.content[0].id == "toolu_fake1"  # type: ignore[union-attr]
    assert said._request_id == "req_fake2"
    assert info.value.request_id == "req_fake3"
    fake.strict = False  # the call was never answered: not the point here


def error_reply() -> Any:
    from pytest_toolnexus.fakes import error

    return error(429, "slow down", retry_after=0)


def test_n_choices_and_logprobs_when_asked(openai: ModuleType) -> None:
    fake = FakeLLM([text("Hello there world"), text("plain")])
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        many = client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            n=2,
            logprobs=True,
            top_logprobs=1,
        )
        one = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert [c.index for c in many.choices] == [0, 1]
    assert {c.message.content for c in many.choices} == {"Hello there world"}
    tokens = many.choices[0].logprobs.content  # type: ignore[union-attr]
    assert "".join(t.token for t in tokens or []) == "Hello there world"
    assert len(one.choices) == 1
    assert one.choices[0].logprobs is None
    fake.verify()
