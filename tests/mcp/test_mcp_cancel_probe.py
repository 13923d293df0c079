"""The watched cancel probe (TN751, TN752) cancels an MCP call only once the server has it.

A server reads its messages in order. One whose loop is busy when the call is sent
(another call blocking it a moment) reads the call and a cancel sent 0.1 s in
together, and the SDKs drop a request cancelled before its handler began: a handler
that blocks the server would then pass TN751 unseen. These tests stand a connection
in for such a server: nothing sent to it is answered until it is free.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance.live import _probes
from toolnexus_conformance.live._observation import Observation, Phase

from toolnexus_ref import ToolContext, ToolResult
from toolnexus_ref.mcp._progress import ProgressLog


class _BusyServer:
    """A connection to a server that answers nothing for ``busy`` seconds after a call."""

    def __init__(self, busy: float) -> None:
        self.busy = busy
        self.tools = [SimpleNamespace(name="stall")]
        self.free_at = 0.0
        #: When each request sent to the server (``probe``) was answered.
        self.answered: list[float] = []
        self.called_at: float | None = None
        self.cancelled_at: float | None = None

    @contextlib.contextmanager
    def progress_log(self) -> Iterator[ProgressLog]:
        yield ProgressLog()

    async def call(
        self,
        declared: Any,
        args: Mapping[str, Any],
        ctx: ToolContext | None,
        *,
        timeout: float,
        progress: ProgressLog,
    ) -> ToolResult:
        assert ctx is not None
        self.called_at = time.monotonic()
        self.free_at = self.called_at + self.busy
        await asyncio.wait_for(ctx.wait_cancelled(), timeout)
        self.cancelled_at = time.monotonic()
        return ToolResult.error("Cancelled: the caller cancelled")

    async def probe(self, timeout: float) -> str | None:
        wait = self.free_at - time.monotonic()
        if wait > timeout:
            await asyncio.sleep(timeout)
            return f"the server did not answer within {timeout:g}s"
        await asyncio.sleep(max(0.0, wait))
        self.answered.append(time.monotonic())
        return None


def _watched_probe(server: _BusyServer, grace: float) -> Observation:
    tool = SimpleNamespace(name="srv_stall", connection=server, original_name="stall")
    subject: Any = SimpleNamespace(source="mcp", tool=tool, extra={}, name="srv_stall")
    observation = Observation(subject)
    observation.simplest = {}
    options = RunOptions(grace=grace)
    env = _probes.Env(subject, options, None, None, observation, {}, {})  # type: ignore[arg-type]
    asyncio.run(_probes.make_probes(env, [Phase.CANCEL_DURING, Phase.MCP_AFTER_CANCEL]))
    return observation


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_probes, "stretch", lambda: 1.0)  # "a moment in" is 0.1 s, at any load


def test_the_cancel_waits_for_a_busy_server_to_answer_a_request_sent_after_the_call() -> None:
    server = _BusyServer(busy=0.4)
    # The request sent 0.1 s in is answered 0.3 s later, well within a 0.6 s grace: the
    # cancel waits for that answer, not for the grace to pass.
    observation = _watched_probe(server, grace=0.6)
    assert server.called_at is not None
    assert server.cancelled_at is not None
    # Not 0.1 s in, while the server had not read the call: once it answered after it.
    assert server.answered
    assert server.cancelled_at >= server.answered[0] >= server.called_at + 0.4
    during = observation.cancel_during
    assert during is not None
    assert during.watched
    assert during.server_problem is None


def test_a_server_answering_nothing_while_the_call_runs_is_cancelled_after_the_grace() -> None:
    server = _BusyServer(busy=10.0)  # the call's own handler blocks the server
    observation = _watched_probe(server, grace=0.3)
    assert server.called_at is not None
    assert server.cancelled_at is not None
    # A moment (0.1 s) from the probe's start, then the grace (0.3 s) with no answer: the
    # call's task may begin a few milliseconds after that start on a busy machine (0.398 s
    # seen under a load test), so the server sees the grace whole, not all of the moment.
    assert 0.3 <= server.cancelled_at - server.called_at < 5
    during = observation.cancel_during
    assert during is not None
    assert during.watched
    assert during.server_problem == "the server did not answer within 0.3s"


class _QuickServer(_BusyServer):
    """A call that answers at once; the server answers later requests, or (``dead``) none."""

    def __init__(self, dead: bool) -> None:
        super().__init__(busy=0.0)
        self.dead = dead

    async def call(self, declared: Any, args: Mapping[str, Any], ctx: Any, **_: Any) -> ToolResult:
        self.called_at = time.monotonic()
        return ToolResult.ok("done")

    async def probe(self, timeout: float) -> str | None:
        if self.dead:
            return "the server did not answer within 0.3s"
        return await super().probe(timeout)


@pytest.mark.parametrize("dead", [False, True], ids=["answers", "answers-nothing"])
def test_a_call_that_ends_before_its_cancel_shows_nothing_about_cancelling(dead: bool) -> None:
    """TN751 skips it (no pass for what was never shown), unless the server then answered
    nothing: that is still a finding, which says no cancel came."""
    from toolnexus_conformance._model import Skip
    from toolnexus_conformance.checks.mcp_live import mcp_cancel_survives

    observation = _watched_probe(_QuickServer(dead), grace=0.3)
    during = observation.cancel_during
    assert during is not None
    assert not during.watched
    if not dead:
        with pytest.raises(Skip, match="before it could be cancelled"):
            mcp_cancel_survives(observation, RunOptions(grace=0.3))
        return
    [finding] = mcp_cancel_survives(observation, RunOptions(grace=0.3))
    assert "before its cancel), the server did not answer within 0.3s" in finding.message
