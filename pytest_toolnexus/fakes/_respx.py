"""respx routes for the providers' real hosts, for httpx and for httpx2 clients.

respx patches httpcore, which plain httpx uses. The ``openai`` and ``anthropic`` SDKs
now send through httpx2 (on httpcore2), which respx does not know; a small ``Mocker``
registered under the name ``"httpcore2"`` teaches it, so one router serves both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ._http import handle

if TYPE_CHECKING:
    from ._core import FakeLLM

__all__ = ["HOSTS", "mount_respx", "respx_mock"]

#: The hosts the real SDKs talk to by default.
HOSTS = ("api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com")


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
        targets = [
            "httpcore2._sync.connection.HTTPConnection",
            "httpcore2._sync.connection_pool.ConnectionPool",
            "httpcore2._sync.http_proxy.HTTPProxy",
            "httpcore2._async.connection.AsyncHTTPConnection",
            "httpcore2._async.connection_pool.AsyncConnectionPool",
            "httpcore2._async.http_proxy.AsyncHTTPProxy",
        ]
        target_methods = ["handle_request", "handle_async_request"]

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
    """Add one route per host to ``router`` (e.g. the ``respx_mock`` fixture); returns them."""
    import httpx

    def respond(request: httpx.Request) -> httpx.Response:
        reply = handle(fake, request.method, request.url.path, request.read())
        return httpx.Response(reply.status, headers=reply.headers, content=reply.body)

    return [
        router.route(host=host, name=f"toolnexus-fake-{host}").mock(side_effect=respond)
        for host in hosts
    ]


@contextmanager
def respx_mock(fake: FakeLLM, *, hosts: tuple[str, ...] = HOSTS) -> Iterator[Any]:
    """Serve ``fake`` at the providers' hosts to httpx and httpx2 clients alike; any
    other request fails (nothing leaves the machine)."""
    import respx

    mocker = _register_httpcore2_mocker()
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
    mount_respx(fake, router, hosts=hosts)
    with router:
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
