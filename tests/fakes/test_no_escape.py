"""Nothing leaves the machine: with the fake in respx mode or on the loopback server,
no client library (httpx, httpx2 or aiohttp) opens a connection to a non-loopback
address. A guard on ``socket`` records and refuses any such attempt."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, text

skip_unless_installed("aiohttp", "aioresponses", "google.genai")


@pytest.fixture(scope="module")
def aiohttp() -> ModuleType:
    """aiohttp, and the aioresponses the fake patches it with, imported when a test here
    first runs rather than at collection; module-scoped, so before the test's guard on
    ``socket`` is up (the guard watches requests, not imports)."""
    pytest.importorskip("aioresponses")
    return pytest.importorskip("aiohttp")


@pytest.fixture(scope="module")
def genai(aiohttp: ModuleType) -> ModuleType:
    """google-genai, whose async client sends through aiohttp: both imported before the guard."""
    return pytest.importorskip("google.genai")


def _no_retry(genai: ModuleType) -> Any:
    return genai.types.HttpRetryOptions(attempts=1)


async def _ask(client: Any) -> str:
    reply = await client.aio.models.generate_content(model="gemini-fake", contents="hi")
    return str(reply.text)


def _respx_client(genai: ModuleType) -> Any:
    return genai.Client(api_key="test", http_options={"retry_options": _no_retry(genai)})


def test_genai_async_client_stays_home_in_respx_mode(genai: ModuleType, escapes: list[str]) -> None:
    fake = FakeLLM([text("hello"), text("again")])
    with fake.respx():
        client = _respx_client(genai)
        assert asyncio.run(_ask(client)) == "hello"
        assert client.models.generate_content(model="m", contents="x").text == "again"
    fake.verify()
    assert escapes == []
    assert [r.provider for r in fake.requests] == ["gemini", "gemini"]


def test_genai_async_client_stays_home_on_the_loopback_server(
    genai: ModuleType, escapes: list[str]
) -> None:
    fake = FakeLLM([text("hello")])
    with fake.serve() as server:
        options = genai.types.HttpOptions(
            base_url=server.gemini_base_url, retry_options=_no_retry(genai)
        )
        client = genai.Client(api_key="test", http_options=options)
        assert asyncio.run(_ask(client)) == "hello"
    fake.verify()
    assert escapes == []


def test_the_guard_sees_an_async_client_without_the_fake(
    genai: ModuleType, escapes: list[str]
) -> None:
    """The known-bad case: without ``fake.respx()`` the aiohttp request does try the
    real host, and the guard catches it (so an empty list above means something)."""
    with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the SDK wraps it in
        asyncio.run(_ask(_respx_client(genai)))
    assert escapes == ["generativelanguage.googleapis.com"]


def test_an_aiohttp_request_elsewhere_is_refused_by_name(
    aiohttp: ModuleType, escapes: list[str]
) -> None:
    async def fetch() -> None:
        async with aiohttp.ClientSession() as session:
            await session.get("https://example.com/data")

    with FakeLLM().respx(), pytest.raises(aiohttp.ClientConnectionError) as info:
        asyncio.run(fetch())
    assert "refused an aiohttp request to https://example.com/data" in str(info.value)
    assert escapes == []


def test_an_aiohttp_client_reaches_the_fake_at_a_provider_host(
    aiohttp: ModuleType, escapes: list[str]
) -> None:
    async def chat() -> tuple[int, Any]:
        async with aiohttp.ClientSession() as session:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            async with session.post(
                "https://api.openai.com/v1/chat/completions", json=body
            ) as response:
                return response.status, await response.json()

    fake = FakeLLM([text("hi there")])
    with fake.respx():
        status, data = asyncio.run(chat())
    assert status == 200
    assert data["choices"][0]["message"]["content"] == "hi there"
    fake.verify()
    assert escapes == []


def test_without_aioresponses_aiohttp_is_refused_not_sent(
    aiohttp: ModuleType, genai: ModuleType, escapes: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "aioresponses", None)
    with FakeLLM().respx(), pytest.raises(aiohttp.ClientConnectionError) as info:
        asyncio.run(_ask(_respx_client(genai)))
    assert "needs aioresponses" in str(info.value)
    assert escapes == []


def test_an_inner_respx_serves_aiohttp_while_active_and_the_outer_one_after(
    aiohttp: ModuleType,
) -> None:
    async def ask() -> str:
        async with aiohttp.ClientSession() as session:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            url = "https://api.openai.com/v1/chat/completions"
            async with session.post(url, json=body) as response:
                data = await response.json()
                return str(data["choices"][0]["message"]["content"])

    outer, inner = FakeLLM([text("outer")]), FakeLLM([text("inner")])
    request = aiohttp.ClientSession._request
    with outer.respx():
        with inner.respx():
            assert asyncio.run(ask()) == "inner"
        assert asyncio.run(ask()) == "outer"
    assert aiohttp.ClientSession._request is request
    outer.verify()
    inner.verify()
