"""TN752: progress a server keeps sending for a request after it was cancelled.

Real subprocess servers: a raw JSON-RPC one that ignores the cancellation and a
low-level SDK one that stops, plus the connection's progress log on its own.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from _mcp_testing import START, server_command
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.live._loop import BackgroundLoop

from toolnexus_ref import ToolContext
from toolnexus_ref.mcp import McpSource, open_stdio
from toolnexus_ref.mcp._progress import ProgressLog

#: Whole-check bound: one call cancelled at 0.1 s, then a one-second watch.
CHECK_BOUND = 10.0


def _open(loop: BackgroundLoop, script: str) -> McpSource:
    source = loop.run(open_stdio(server_command(script), timeout=START), timeout=60)
    assert [c.status.state for c in source.connections.values()] == ["connected"]
    return source


def _judged(loop: BackgroundLoop, source: McpSource, *codes: str) -> dict[tuple[str, str], Verdict]:
    """Each tool's verdict by (tool, check); the checks given share one watched cancel."""
    subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
    started = time.monotonic()
    verdicts = check_subjects(
        subjects, "t", select=list(codes), loop=loop, options=RunOptions(grace=1.0, depth=0)
    )
    assert time.monotonic() - started < CHECK_BOUND * len(subjects)
    return {(v.tool.rsplit("_", 1)[-1], v.check.code): v for v in verdicts}


def _tn752(loop: BackgroundLoop, source: McpSource) -> dict[str, Verdict]:
    return {tool: verdict for (tool, _), verdict in _judged(loop, source, "TN752").items()}


def test_progress_after_cancel_fails_with_how_many_and_when(loop: BackgroundLoop) -> None:
    source = _open(loop, "progress_ignores_cancel.py")
    try:
        verdict = _tn752(loop, source)["crunch"]
        assert verdict.outcome is Outcome.FAILED, verdict.message
        assert verdict.check.category.value == "cancellation"
        assert verdict.check.severity.value == "warning"
        assert "progress notification(s) arrived after the call was cancelled" in verdict.message
        count = int(verdict.message.split(" ", 1)[0])
        assert count >= 5  # 50 ms apart over a one-second watch
        assert "after the cancellation was sent" in verdict.message
    finally:
        loop.run(source.close(), timeout=30)


def test_a_server_that_stops_on_cancel_passes(loop: BackgroundLoop) -> None:
    source = _open(loop, "progress_honours_cancel.py")
    try:
        # Both checks judge the same watched cancel (Phase.MCP_AFTER_CANCEL).
        verdicts = _judged(loop, source, "TN751", "TN752")
        for tool in ("crunch", "quiet"):
            verdict = verdicts[(tool, "TN752")]
            assert verdict.outcome is Outcome.PASSED, (tool, verdict.message)
        # TN751's known-good: calls cancelled mid-way, and the server answers after.
        cancelled = [(tool, v) for (tool, code), v in verdicts.items() if code == "TN751"]
        assert {tool for tool, _ in cancelled} == {"crunch", "quiet"}
        for tool, verdict in cancelled:
            assert verdict.outcome is Outcome.PASSED, (tool, verdict.message)
    finally:
        loop.run(source.close(), timeout=30)


@pytest.mark.parametrize(
    ("script", "stops"),
    [("progress_honours_cancel.py", True), ("progress_ignores_cancel.py", False)],
)
def test_the_progress_log_sees_the_wire_before_and_after_cancel(
    loop: BackgroundLoop, script: str, stops: bool
) -> None:
    """The pass above is not vacuous: the good server does send progress, until cancelled."""
    source = _open(loop, script)
    [connection] = source.connections.values()
    [crunch] = [t for t in connection.tools if t.name == "crunch"]

    async def scenario() -> tuple[ProgressLog, float, bool]:
        ctx = ToolContext()
        with connection.progress_log() as log:
            asyncio.get_running_loop().call_later(0.3, ctx.cancel, "test")
            result = await connection.call(crunch, {}, ctx, timeout=10, progress=log)
            cancelled_at = time.monotonic()
            await asyncio.sleep(0.8)
        assert connection._progress_logs == {}  # the log is forgotten after its block
        return log, cancelled_at, result.is_error

    try:
        log, cancelled_at, is_error = loop.run(scenario(), timeout=30)
        assert is_error  # a cancelled call is an error result
        before = [e for e in log.events if e.at <= cancelled_at]
        assert len(before) >= 2
        assert [e.progress for e in before] == sorted(e.progress for e in before)
        assert all(e.total == 60 for e in log.events)
        late = log.after(cancelled_at + 0.25)
        assert (late == []) is stops
        # the connection stays usable, and a call without a log asks for no progress
        again = loop.run(connection.call(crunch, {}, ToolContext(timeout=0.2)), timeout=30)
        assert again.is_error
    finally:
        loop.run(source.close(), timeout=30)
