"""Liveness probes: a small request, shared by everyone who asked before it began."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from types import SimpleNamespace
from typing import Any

import mcp_types
import pytest
from mcp import MCPError
from mcp.server.lowlevel import Server
from mcp_types import CONNECTION_CLOSED, METHOD_NOT_FOUND, REQUEST_TIMEOUT

from toolnexus_ref._mcp_config import ServerConfig
from toolnexus_ref.mcp._connection import SentCall, ServerConnection
from toolnexus_ref.mcp._liveness import SharedProbe
from toolnexus_ref.mcp._source import open_in_memory

pytestmark = pytest.mark.anyio


class Gate:
    """A request that waits to be let through, counting how often it was sent."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.started = 0
        self.fail: Exception | None = None

    async def __call__(self) -> None:
        self.started += 1
        await self.opened.wait()
        if self.fail is not None:
            raise self.fail


async def test_callers_asking_at_once_share_one_request() -> None:
    gate = Gate()
    probe = SharedProbe(gate)
    asks = [asyncio.ensure_future(probe.ask(5.0)) for _ in range(20)]
    await asyncio.sleep(0)
    gate.opened.set()
    await asyncio.gather(*asks)
    assert gate.started == probe.sent == 1


async def test_a_caller_never_joins_a_request_begun_before_it_asked() -> None:
    gate = Gate()
    probe = SharedProbe(gate)
    first = asyncio.ensure_future(probe.ask(5.0))
    while gate.started == 0:
        await asyncio.sleep(0)
    late = [asyncio.ensure_future(probe.ask(5.0)) for _ in range(5)]
    await asyncio.sleep(0.01)
    assert gate.started == 1  # the late ones wait for the running request to end...
    gate.opened.set()
    await first
    await asyncio.gather(*late)
    assert gate.started == 2  # ...then share one request of their own


async def test_failures_reach_every_sharer_and_timeouts_only_their_caller() -> None:
    gate = Gate()
    probe = SharedProbe(gate)
    impatient = asyncio.ensure_future(probe.ask(0.01))
    patient = asyncio.ensure_future(probe.ask(5.0))
    with pytest.raises(TimeoutError):
        await impatient
    gate.fail = RuntimeError("listing broke")
    gate.opened.set()
    with pytest.raises(RuntimeError, match="listing broke"):
        await patient
    assert gate.started == 1


async def test_cancelled_probes_end_their_callers_waits() -> None:
    probe = SharedProbe(Gate())
    waiting = asyncio.ensure_future(probe.ask(5.0))
    await asyncio.sleep(0)
    probe.cancel()
    with pytest.raises(ConnectionError):
        await waiting


def _counting_server(tools: int) -> tuple[Server[Any], list[int]]:
    listed: list[int] = []
    declared = [mcp_types.Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(tools)]

    async def on_list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        listed.append(len(declared))
        return mcp_types.ListToolsResult(tools=declared)

    return Server("counting", on_list_tools=on_list_tools), listed


async def test_probes_of_a_large_server_never_list_its_tools_again() -> None:
    """Each of a server's tools probes it once in a live run: a listing each would
    make the run's cost grow as the square of its tools."""
    server, listed = _counting_server(500)
    source = await open_in_memory(server)
    try:
        (connection,) = source.connections.values()
        assert listed == [500]  # the start's listing
        problems = await asyncio.gather(*(connection.probe(10.0) for _ in range(50)))
        assert problems == [None] * 50
        assert await connection.probe(10.0) is None
        assert connection.liveness.sent == 2  # the 50 at once shared one request
        assert listed == [500]
    finally:
        await source.close()


class _RefusingSession:
    def __init__(self) -> None:
        self.asked = 0

    async def send_ping(self) -> None:
        self.asked += 1
        raise MCPError(METHOD_NOT_FOUND, "Method not found")

    send_discover = send_ping


class _RefusingClient:
    """A client whose server refuses ``ping``/``server/discover`` but lists its tools."""

    protocol_version = "2025-11-25"

    def __init__(self) -> None:
        self.session = _RefusingSession()
        self.listed = 0

    async def list_tools(self, **_: Any) -> None:
        self.listed += 1


async def test_a_server_refusing_the_small_probe_has_answered_and_is_never_listed() -> None:
    """An error response is an answer: the server read the request and replied. A
    listing instead would cost as much as the server has tools at every probe."""
    connection = ServerConnection(ServerConfig(name="old", type="stdio", command=("x",)))
    client = _RefusingClient()
    connection._client = client  # type: ignore[assignment]
    await connection._answer()
    await connection._answer()
    assert (client.session.asked, client.listed) == (2, 0)


@pytest.mark.parametrize("code", [CONNECTION_CLOSED, REQUEST_TIMEOUT])
async def test_an_error_the_sdk_raises_itself_is_no_answer(code: int) -> None:
    connection = ServerConnection(ServerConfig(name="old", type="stdio", command=("x",)))
    client = _RefusingClient()

    async def unanswered() -> None:
        raise MCPError(code, "no answer")

    client.session.send_ping = unanswered  # type: ignore[method-assign]
    connection._client = client  # type: ignore[assignment]
    with pytest.raises(MCPError):
        await connection._answer()


class _Exited:
    """A server process that has exited on a signal, as ``_mark_exited`` reads one."""

    closing = False
    fault = None
    noise = SimpleNamespace(lines=0)  # nothing but JSON-RPC on its stdout
    returncode = -15
    exited_at = None

    async def wait_exit(self, timeout: float) -> int:
        return self.returncode

    async def stderr_read(self) -> None:
        return None

    def stderr_tail(self, lines: int = 20, *, since: int = 0) -> str:
        return ""

    def stderr_size(self) -> int:
        return 0


def _ready_but_exited(name: str) -> tuple[ServerConnection, _RefusingClient]:
    """A connection that answered for a second and whose process has since exited, as
    nothing of the session has noticed yet."""
    connection = ServerConnection(ServerConfig(name=name, type="stdio", command=("x",)))
    client = _RefusingClient()
    connection._client = client  # type: ignore[assignment]
    connection._process = _Exited()  # type: ignore[assignment]
    connection._ready_at = time.monotonic() - 1.0
    connection.status = dataclasses.replace(connection.status, state="connected")
    return connection, client


async def test_a_probe_that_finds_the_connection_closed_marks_the_server_exited() -> None:
    """A handler that ends its process just after answering (desktop-commander's
    ``kill_process`` given 0) is found by the probe that follows: the server's status
    then says it exited, as a call's would, and the call it had just answered is kept."""
    connection, client = _ready_but_exited("dc")

    async def closed() -> None:
        raise MCPError(CONNECTION_CLOSED, "Connection closed")

    client.session.send_ping = closed  # type: ignore[method-assign]
    now = time.monotonic()
    connection._sent.append(SentCall("kill_process", {"pid": 0}, now, answered_at=now))
    assert await connection.probe(1.0) == "ping failed: MCP error -32000: Connection closed"
    assert connection.status.state == "failed"
    assert connection.status.reason == "server exited (code -15)"
    assert connection.answered_before_exit == (("kill_process", {"pid": 0}),)


async def test_calls_cancelled_by_their_caller_are_kept_for_the_exit_that_follows() -> None:
    """A search that lets a call go cancels its task (the client then tells the server);
    a server that exits within ``CANCELLED_WINDOW`` of it has that call, with when it
    was cancelled, among its suspects."""
    connection, _client = _ready_but_exited("ax")

    async def unanswered(*_: Any) -> None:
        await asyncio.sleep(3600)

    connection._request = unanswered  # type: ignore[method-assign]
    tool = mcp_types.Tool(name="get_paper_outline", input_schema={"type": "object"})
    call = asyncio.ensure_future(connection.call(tool, {"paper_id": ""}, None))
    await asyncio.sleep(0.2)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    await connection._mark_exited()
    [(name, args, after, lag)] = connection.cancelled_before_exit
    assert (name, args) == ("get_paper_outline", {"paper_id": ""})
    # About 0.2 s: the call's clock starts once its task runs, and asyncio may run a
    # timer up to its clock's resolution early (0.1975 s was seen in CI).
    assert 0.15 <= after < 5.0
    assert 0.0 <= lag < 5.0
