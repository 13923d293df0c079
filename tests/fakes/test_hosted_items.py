"""Hosted-tool items on the Responses API (``web_search_call``, ``file_search_call``)
reach the openai SDK whole and streamed, beside the message that cites them; a script
with an item of a tool the request did not offer is refused."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, file_search, text, web_search

skip_unless_installed("openai")


@pytest.fixture(scope="module")
def openai() -> ModuleType:
    """The openai SDK, imported when a test here first runs rather than at collection."""
    return pytest.importorskip("openai")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_web_search_and_file_search_items(openai: ModuleType, stream: bool) -> None:
    hosted = [
        web_search("weather paris", sources=["https://example.com/paris"]),
        file_search("paris notes", results=[{"file_id": "file_1", "score": 0.9, "text": "x"}]),
    ]
    fake = FakeLLM([text("Sunny.", reasoning="Look it up.", hosted=hosted)])
    ask: dict[str, Any] = {
        "model": "gpt-fake",
        "input": "Weather in Paris?",
        "tools": [{"type": "web_search"}, {"type": "file_search", "vector_store_ids": ["vs_1"]}],
    }
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        if stream:
            with client.responses.stream(**ask) as events:
                kinds = [e.type for e in events]
                reply = events.get_final_response()
            assert kinds.index("response.web_search_call.searching") < kinds.index(
                "response.output_text.delta"
            )
            assert "response.file_search_call.completed" in kinds
        else:
            reply = client.responses.create(**ask)
    types = [item.type for item in reply.output]
    assert types == ["reasoning", "web_search_call", "file_search_call", "message"]
    search = reply.output[1]
    assert search.type == "web_search_call"
    assert search.status == "completed"
    assert search.action.type == "search"
    assert search.action.query == "weather paris"
    assert [s.url for s in search.action.sources or []] == ["https://example.com/paris"]
    files = reply.output[2]
    assert files.type == "file_search_call"
    assert files.queries == ["paris notes"]
    assert [r.file_id for r in files.results or []] == ["file_1"]
    assert reply.output_text == "Sunny."
    fake.verify()
    assert len(set(item.id for item in reply.output)) == 4


def test_a_hosted_item_needs_its_tool_offered(openai: ModuleType) -> None:
    fake = FakeLLM([text("Sunny.", hosted=[web_search("weather")])])
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="offers no 'web_search' tool"):
            client.responses.create(model="gpt-fake", input="Weather?")
    assert [v[1] for v in fake.violations] == ["hosted_tool_not_offered"]
    # the preview tool and dated versions count as the tool
    fake = FakeLLM([text("a", hosted=[web_search("q")]), text("b", hosted=[web_search("q")])])
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        for tool in ("web_search_preview", "web_search_2025_08_26"):
            client.responses.create(model="gpt-fake", input="?", tools=[{"type": tool}])
    fake.verify()


def test_hosted_items_exist_only_on_responses(openai: ModuleType) -> None:
    fake = FakeLLM([text("Sunny.", hosted=[web_search("weather")])])
    with fake.respx():
        client = openai.OpenAI(api_key="x", max_retries=0)
        with pytest.raises(openai.BadRequestError, match="only on the Responses API"):
            client.chat.completions.create(
                model="gpt-fake", messages=[{"role": "user", "content": "?"}]
            )
