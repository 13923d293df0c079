"""respx routes for the providers' real hosts, for httpx and for httpx2 clients.

respx patches httpcore, which plain httpx uses. The ``openai`` and ``anthropic`` SDKs
now send through httpx2 (on httpcore2), which respx does not know; a small ``Mocker``
registered under the name ``"httpcore2"`` teaches it, so one router serves both.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from toolnexus_ref.wire import PROVIDERS

from ._http import handle

if TYPE_CHECKING:
    from respx import MockRouter

    from ._core import FakeLLM

__all__ = ["HOSTS", "FakeRouter", "mount_respx", "respx_mock"]

#: The hosts (``host`` or ``host:port``) the real SDKs talk to by default, from the
#: provider table.
HOSTS: tuple[str, ...] = tuple(dict.fromkeys(h for p in PROVIDERS.values() for h in p.hosts))

#: What ``fake.respx()`` yields: respx's router, with the fake's routes on it.
FakeRouter = AbstractContextManager["MockRouter"]


def _register_httpcore2_mocker() -> Any:
    """respx's mocker for httpcore2, the transport of httpx2 (which the openai and
    anthropic SDKs use); ``None`` where httpx2 is not installed."""
    from respx.mocks import HTTPCoreMocker, Mocker

    if "httpcore2" in Mocker.registry:
        return Mocker.registry["httpcore2"]
    try:
        import httpcore2
    except ImportError:
        return None

    class HTTPCore2Mocker(HTTPCoreMocker):
        name = "httpcore2"
        # what an httpx2 client sends through: a pool, or a proxy from the environment
        targets = [
            "httpcore2._sync.connection_pool.ConnectionPool",
            "httpcore2._sync.http_proxy.HTTPProxy",
            "httpcore2._async.connection_pool.AsyncConnectionPool",
            "httpcore2._async.http_proxy.AsyncHTTPProxy",
        ]
        target_methods = ["handle_request", "handle_async_request"]
        _saved: list[tuple[type, str, Any]] = []

        @classmethod
        def start(cls) -> None:
            """Patch each class's own method in place. respx's ``mock.patch(spec=True)``
            does the same with an autospec per method, which costs more than the rest
            of a short test's transport set-up together."""
            if cls._saved:
                return
            import importlib

            for target in cls.targets:
                module, _, name = target.rpartition(".")
                klass = getattr(importlib.import_module(module), name)
                for method in cls.target_methods:
                    original = klass.__dict__.get(method)
                    if original is not None:  # inherited: the parent's patch serves it
                        setattr(klass, method, cls.mock(original))  # type: ignore[no-untyped-call]
                        cls._saved.append((klass, method, original))

        @classmethod
        def stop(cls, force: bool = False) -> None:
            if cls.routers and not force:
                return
            while cls._saved:
                klass, method, original = cls._saved.pop()
                setattr(klass, method, original)

        @classmethod
        def from_sync_httpx_response(cls, httpx_response: Any, target: Any, **kwargs: Any) -> Any:
            return httpcore2.Response(
                status=httpx_response.status_code,
                headers=httpx_response.headers.raw,
                content=httpx_response.stream,
                extensions=httpx_response.extensions,
            )

    return HTTPCore2Mocker


def mount_respx(fake: FakeLLM, router: Any, *, hosts: tuple[str, ...] = HOSTS) -> list[Any]:
    """Add a route for ``hosts`` to ``router`` (e.g. the ``respx_mock`` fixture);
    returns it, in a list."""
    import httpx

    def respond(request: httpx.Request) -> httpx.Response:
        url = request.url
        reply = handle(
            fake,
            request.method,
            url.path,
            request.read(),
            query=url.query.decode(),
            headers=request.headers,
            origin=f"{url.scheme}://{url.netloc.decode()}",
        )
        if reply.hang is not None:
            # the client gives up at its own read timeout: wait that long, then time out
            timeout = (request.extensions.get("timeout") or {}).get("read")
            time.sleep(min(reply.hang, timeout if timeout is not None else reply.hang))
            raise httpx.ReadTimeout("FakeLLM: no reply (hang)", request=request)
        if reply.delay:
            time.sleep(reply.delay)
        return httpx.Response(reply.status, headers=reply.headers, content=reply.body)

    return [router.route(_hosts_pattern(hosts), name="toolnexus-fake").mock(side_effect=respond)]


def _hosts_pattern(hosts: tuple[str, ...]) -> Any:
    """One respx pattern for every host (a route costs respx several mock objects, made
    again at each snapshot): the hosts without a port, or-ed with each port's hosts."""
    from respx.patterns import M

    by_port: dict[int | None, list[str]] = {}
    for where in hosts:
        host, _, port = where.partition(":")
        by_port.setdefault(int(port) if port else None, []).append(host)
    pattern: Any = None
    for number, names in by_port.items():
        one = M(host__in=tuple(names)) if number is None else M(host__in=tuple(names), port=number)
        pattern = one if pattern is None else pattern | one
    return pattern


@contextmanager
def respx_mock(fake: FakeLLM, *, hosts: tuple[str, ...] = HOSTS) -> Iterator[Any]:
    """Serve ``fake`` at the providers' hosts to httpx, httpx2 and aiohttp clients
    alike; any other request fails (nothing leaves the machine)."""
    import respx

    from ._aiohttp import aiohttp_mock

    mocker = _register_httpcore2_mocker()
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
    # the route goes in after the router started: a route present at the start is
    # snapshotted (more mock objects) to be rolled back at the end
    with router, aiohttp_mock(fake, hosts):
        mount_respx(fake, router, hosts=hosts)
        if mocker is None:
            yield router
            return
        mocker.register(router)
        mocker.start()
        try:
            yield router
        finally:
            mocker.unregister(router)
            mocker.stop()
