"""The providers' hosts for aiohttp clients, through ``aioresponses``.

respx patches httpx's transports only; google-genai's async client and litellm's
async calls send through aiohttp, so ``fake.respx()`` also patches aiohttp's
``ClientSession`` (when aiohttp is installed): a request to a provider's host gets the
fake's answer from the same wire handlers, and any other request is refused with a
message naming it, so nothing leaves the machine from either client library.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

from ._http import handle

if TYPE_CHECKING:
    from ._core import FakeLLM

__all__ = ["aiohttp_mock", "aiohttp_installed"]


@functools.cache
def aiohttp_installed() -> bool:
    """Whether there is an aiohttp to intercept (and ``aioresponses`` to do it)."""
    import importlib.util

    return importlib.util.find_spec("aiohttp") is not None


@functools.cache
def _host_pattern(hosts: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = []
    for where in hosts:
        host, _, port = where.partition(":")
        suffix = f":{port}" if port else "(?::443|:80)?"
        alternatives.append(re.escape(host) + suffix)
    return re.compile(rf"^https?://(?:{'|'.join(alternatives)})(?:/|$)")


def _body(kwargs: dict[str, Any]) -> bytes:
    if kwargs.get("json") is not None:
        return json.dumps(kwargs["json"]).encode()
    data = kwargs.get("data")
    if data is None:
        return b""
    if isinstance(data, str):
        return data.encode()
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    value = getattr(data, "_value", None)  # aiohttp's BytesPayload / StringPayload
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    raise TypeError(f"FakeLLM cannot read an aiohttp request body of type {type(data).__name__}")


def _read_timeout(kwargs: dict[str, Any]) -> float | None:
    timeout = kwargs.get("timeout")
    for name in ("sock_read", "total"):
        value = getattr(timeout, name, None)
        if isinstance(value, int | float):
            return float(value)
    return float(timeout) if isinstance(timeout, int | float) else None


@contextmanager
def aiohttp_mock(fake: FakeLLM, hosts: tuple[str, ...]) -> Iterator[Any]:
    """Serve ``fake`` to aiohttp clients at ``hosts``; refuse every other request.
    Yields the ``aioresponses`` mock (``None`` where aiohttp is not installed)."""
    if not aiohttp_installed():
        yield None
        return
    try:
        from aioresponses import CallbackResult, aioresponses
    except ImportError:  # aiohttp without its mock: refuse rather than leak
        with _refuse_all(hosts):
            yield None
        return
    from aiohttp import ClientConnectionError, ServerTimeoutError

    Response = _response_class()

    async def respond(url: Any, **kwargs: Any) -> Any:
        method = str(kwargs.get("method") or "POST")
        reply = handle(
            fake,
            method,
            url.path,
            _body(kwargs),
            query=url.query_string,
            headers=dict(kwargs.get("headers") or {}),
            origin=str(url.origin()),
        )
        if reply.hang is not None:
            limit = _read_timeout(kwargs)
            await asyncio.sleep(min(reply.hang, limit if limit is not None else reply.hang))
            raise ServerTimeoutError("FakeLLM: no reply (hang)")
        if reply.delay:
            await asyncio.sleep(reply.delay)
        headers = dict(reply.headers)
        content_type = headers.pop("content-type", "application/json")
        return CallbackResult(
            method=method,
            status=reply.status,
            body=reply.body,
            content_type=content_type,
            headers=headers,
            response_class=Response,
        )

    def refuse(url: Any, **kwargs: Any) -> Any:
        raise ClientConnectionError(
            f"FakeLLM.respx() refused an aiohttp request to {url}: only the providers' "
            f"hosts ({', '.join(hosts)}) are served, and nothing leaves the machine. "
            "Point the client at a provider's default host, or use fake.serve()."
        )

    served = _host_pattern(hosts)
    mock = aioresponses()
    # aioresponses patches with autospec, which fails on a method already patched (a
    # fake.respx() inside another) and costs more than the rest of the set-up: a plain
    # function does, and the innermost fake serves while it is active
    intercept = mock._request_mock

    async def request(self: Any, method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
        return await intercept(self, method, url, *args, **kwargs)

    mock.patcher = patch("aiohttp.client.ClientSession._request", new=request)
    with mock:
        for method in ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"):
            mock.add(served, method=method, callback=_with_method(respond, method), repeat=True)
            mock.add(re.compile(".*"), method=method, callback=refuse, repeat=True)
        yield mock


@functools.cache
def _response_class() -> type[Any]:
    """The response class the mock builds (made once: a class costs to create)."""
    from aiohttp import ClientResponse

    class Response(ClientResponse):
        """aioresponses builds responses as aiohttp 3.13 did; 3.14 also wants the
        request's stream writer (for ``output_size``), which a mocked request has not."""

        def __init__(self, method: str, url: Any, **kwargs: Any) -> None:
            kwargs.setdefault("stream_writer", _SentWriter())
            super().__init__(method, url, **kwargs)

        @property
        def headers(self) -> Any:
            """Read-only, as aiohttp's own (google-genai tells the types apart by name)."""
            from multidict import CIMultiDict, CIMultiDictProxy

            held: Any = self._headers
            return CIMultiDictProxy(held) if isinstance(held, CIMultiDict) else held

    return Response


@contextmanager
def _refuse_all(hosts: tuple[str, ...]) -> Iterator[None]:
    """Without ``aioresponses`` the fake cannot answer aiohttp clients; it still keeps
    them off the network, and says what to install."""
    from aiohttp import ClientConnectionError

    async def refuse(self: Any, method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
        raise ClientConnectionError(
            f"FakeLLM.respx() refused an aiohttp request to {url}: serving the fake to "
            "aiohttp clients (google-genai's client.aio, litellm.acompletion) needs "
            "aioresponses (pip install 'pytest-toolnexus[aiohttp]'), or use fake.serve()."
        )

    with patch("aiohttp.client.ClientSession._request", refuse):
        yield


class _SentWriter:
    """What a sent request's writer tells its response: nothing more to write."""

    output_size = 0


def _with_method(callback: Any, method: str) -> Any:
    async def call(url: Any, **kwargs: Any) -> Any:
        return await callback(url, method=method, **kwargs)

    return call
