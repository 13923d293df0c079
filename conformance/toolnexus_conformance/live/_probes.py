"""The single-call probes of an exploration: cancellations, a deadline, a cancelled task.

Each is made with the simplest valid arguments. For an MCP tool the call cancelled
mid-way is also watched: is the server still answering, and does progress stop?
A verdict that other calls in flight could have caused (contention) is made again
alone at the end of the batch (``recheck``), and only that quiet result counts; a
success that raced the cancel or the deadline is made twice alone, and both must show it.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from toolnexus_ref import ToolContext

from .._execution import execute_is_async
from .._options import RunOptions, ToolArguments
from .._subject import ToolSubject
from ._calls import CallOutcome, blocked_before, call_once, capture, describe, describe_error
from ._contention import Contention
from ._crashes import SILENT_PROBE, connection_of, exit_check
from ._observation import CancelDuring, Observation, Phase, TaskCancel
from ._search import Call, Gone, stretch
from ._workers import SearchWorkers

__all__ = ["DEADLINE", "TIMING", "Env", "is_async", "parts", "make_probes", "recheck"]

#: When the cancel arrives, after the call started (MCP: the request must reach the server).
CANCEL_AFTER = 0.05
MCP_CANCEL_AFTER = 0.1
#: The deadline given to the call of the deadline probe.
DEADLINE = 0.2
#: Scheduling slack on top of the grace period before a call counts as hung.
SLACK = 0.1
#: Progress arriving this soon after the cancellation may have left the server before it
#: read the cancellation (it crossed on the wire), so it is not held against the server.
IN_FLIGHT = 0.25

TIMING = (Phase.CANCEL_BEFORE, Phase.CANCEL_DURING, Phase.DEADLINE, Phase.TASK_CANCEL)


def parts(value: Any) -> tuple[bool, Any, Any, Any]:
    """``(result_like, output, is_error, metadata)`` read without trusting the value."""
    try:
        if not (hasattr(value, "output") and hasattr(value, "is_error")):
            return False, None, None, None
        return True, value.output, value.is_error, getattr(value, "metadata", None)
    except Exception:  # a property that raises: not a usable result
        return False, None, None, None


def is_async(tool: Any) -> bool:
    """Whether ``execute`` is ``async def``; for a ``ToolSubject``, as its bounded read found."""
    if isinstance(tool, ToolSubject):
        if tool.execute_async is not None:
            return tool.execute_async
        tool = tool.tool
    return execute_is_async(tool)


#: The looks at whether a server still answers (``Env.call``), held until they end.
_LOOKS: set[asyncio.Future[bool]] = set()


async def looks_ended() -> None:
    """Once every look at a server's silence begun on this loop has ended: an exploration
    cut short by its budget leaves its look running, and the batch must see the server
    it stops before it decides which tools to explore again."""
    loop = asyncio.get_running_loop()
    running = {look for look in _LOOKS if look.get_loop() is loop and not look.done()}
    if running:
        await asyncio.wait(running)


@dataclass(slots=True)
class Env:
    """What the phases of one exploration share."""

    subject: ToolSubject
    options: RunOptions
    codes: frozenset[str] | None
    workers: SearchWorkers
    observation: Observation
    #: Calls with a fresh context, by arguments; the calls without one apart.
    with_ctx: dict[str, Call]
    without_ctx: dict[str, Call]
    #: How long the tool's processes waited for a CPU: how far its searches stretch.
    contention: Contention | None = None
    #: The arguments given for the tool, the user's and its code's, read once
    #: (``_explorer.given_for``): each stream asks.
    given: ToolArguments | None = None

    async def call(self, args: Any, ctx: ToolContext | None, timeout: float) -> CallOutcome:
        """One call of the tool; ``Gone`` instead once its MCP server has exited (the
        call would fail at once with that exit, and say nothing of the tool)."""
        gone = exit_check(self.subject)
        if gone is not None and (why := gone()) is not None:
            raise Gone(why)
        self.observation.calls += 1
        connection = connection_of(self.subject)
        mark = connection.stderr_mark() if hasattr(connection, "stderr_mark") else None
        sent = time.monotonic()
        outcome = await call_once(self.subject.tool, args, ctx, timeout=timeout, scratch=False)
        if outcome.timed_out and mark is not None:
            said = await connection.stderr_since(mark)
            if said.strip():
                outcome = replace(outcome, said=said)
            # A server that answers not even a ping now is blocked as a whole (a handler
            # holding its event loop): every tool's calls would wait out their bounds.
            # Stopped, it is an exit like any, its culprit looked for by replays. The
            # look goes on if this call's search is cancelled meanwhile (its budget ran
            # out while the probe waited, stretched on a loaded machine): nobody else
            # may ask, and every other tool would then wait on the blocked server.
            wait = max(self.options.grace, SILENT_PROBE) * stretch()
            look = asyncio.ensure_future(connection.stop_if_silent(wait, silent_since=sent))
            _LOOKS.add(look)
            look.add_done_callback(_LOOKS.discard)
            await asyncio.shield(look)
        return outcome


def _late(call: Call | None, limit: float) -> bool:
    """A probe whose verdict could be contention's doing: it ended late, or succeeded late."""
    return call is not None and (call.outcome.timed_out or _succeeded_late(call, limit))


def _succeeded_late(call: Call | None, limit: float) -> bool:
    """The call answered with success ``limit`` seconds in or later."""
    return (
        call is not None and call.outcome.elapsed >= limit and parts(call.outcome.value)[2] is False
    )


def _succeeded_after_cancel(during: CancelDuring | None) -> bool:
    """The call answered with success after its cancel fired."""
    return (
        during is not None
        and during.fired is not None
        and parts(during.call.outcome.value)[2] is False
    )


async def recheck(env: Env, planned: list[Phase]) -> bool:
    """Make again, alone, the probes whose verdict other calls in flight may have caused.

    Called when nothing else of the run is in flight; the quiet result is the one
    the checks judge. Says whether anything was made again.
    """
    observation = env.observation
    again = []
    if _late(observation.cancel_before, env.options.grace):
        again.append(Phase.CANCEL_BEFORE)
    during = observation.cancel_during
    if during is not None and (
        during.call.outcome.timed_out
        or _succeeded_after_cancel(during)
        or during.server_problem is not None  # another tool may have kept the server busy
        or during.late_progress
    ):
        again.append(Phase.CANCEL_DURING)
        if Phase.MCP_AFTER_CANCEL in planned:
            again.append(Phase.MCP_AFTER_CANCEL)
    if _late(observation.deadline, observation.deadline_after):
        again.append(Phase.DEADLINE)
    if observation.task_cancel is not None and observation.task_cancel.what == "still-running":
        again.append(Phase.TASK_CANCEL)
    if again and observation.unresponsive is None and observation.blocked_loop is None:
        mcp = mcp_declared(env.subject) if env.subject.source == "mcp" else None
        if mcp is not None:
            # Let the server finish what earlier calls left it doing before judging again.
            await mcp[0].probe(env.options.call_timeout)
        try:
            await make_probes(env, again)
            raced = _raced(observation)
            if raced:
                halfway = deadline = None
                if Phase.CANCEL_DURING in raced and observation.cancel_during is not None:
                    halfway = observation.cancel_during.call.outcome.elapsed / 2
                    if Phase.MCP_AFTER_CANCEL in planned:
                        raced.append(Phase.MCP_AFTER_CANCEL)
                if Phase.DEADLINE in raced and observation.deadline is not None:
                    # Never later than the first: a tool that works past any deadline
                    # still answers past this one.
                    deadline = min(DEADLINE, observation.deadline.outcome.elapsed / 2)
                await make_probes(env, raced, cancel_at=halfway, deadline=deadline)
        except Gone:  # the server exited and was given up: the first verdicts stand
            return False
        return True
    return False


def _raced(observation: Observation) -> list[Phase]:
    """The probes whose finding is a race the tool may lose only to a busy machine:
    a success after the cancel fired, or past the deadline. A tool that polls for the
    cancel and has just finished its work when it fires answers with success if its
    thread was not run in between; a tool that ignores the cancel does so every time.
    Each is made once more, alone, and the finding stands only if that shows it too;
    the cancel then comes halfway through the time the call took, not "a moment in"
    stretched by the load (which on a busy machine can be the end of the tool's work
    every time), and the deadline too, where that is sooner than the first."""
    raced = []
    if _succeeded_after_cancel(observation.cancel_during):
        raced.append(Phase.CANCEL_DURING)
    if _succeeded_late(observation.deadline, observation.deadline_after):
        raced.append(Phase.DEADLINE)
    return raced


# -- timing probes -------------------------------------------------------------------
async def make_probes(
    env: Env,
    phases: list[Phase],
    *,
    together: bool = False,
    cancel_at: float | None = None,
    deadline: float | None = None,
) -> None:
    """The single-call probes, with the simplest valid arguments; ``cancel_at``: when
    the cancel comes during the call, instead of a moment in; ``deadline``: the deadline
    probe's, instead of ``DEADLINE``."""
    if not phases or env.observation.simplest_skip is not None:
        return
    # Begun only when made: a probe after one that raised (``Gone``) is never begun.
    probes: list[Callable[[], Awaitable[None]]] = []
    if Phase.CANCEL_BEFORE in phases:
        probes.append(lambda: _cancel_before(env))
    if Phase.CANCEL_DURING in phases or Phase.MCP_AFTER_CANCEL in phases:
        watch = Phase.MCP_AFTER_CANCEL in phases
        probes.append(lambda: _cancel_during(env, watch=watch, at=cancel_at))
    if Phase.DEADLINE in phases:
        probes.append(lambda: _deadline(env, DEADLINE if deadline is None else deadline))
    if Phase.TASK_CANCEL in phases and is_async(env.subject):
        probes.append(lambda: _task_cancel(env))
    if together:
        # Every probe ends before the first error is raised: one left running could
        # call the server once it is restarted.
        ended = await asyncio.gather(*(probe() for probe in probes), return_exceptions=True)
        for outcome in ended:
            if isinstance(outcome, BaseException):
                raise outcome
    else:
        for probe in probes:
            await probe()


async def _cancel_before(env: Env) -> None:
    args = env.observation.simplest
    ctx = ToolContext()
    ctx.cancel("conformance: cancelled before the call")
    outcome = await env.call(args, ctx, env.options.grace)
    env.observation.cancel_before = Call(args, outcome)


async def _deadline(env: Env, after: float) -> None:
    args = env.observation.simplest
    ctx = ToolContext(timeout=after)
    outcome = await env.call(args, ctx, after + env.options.grace + SLACK)
    env.observation.deadline = Call(args, outcome)
    env.observation.deadline_after = after


class _WatchedCall:
    """An MCP tool called with a progress log, so progress after the cancel is seen."""

    def __init__(self, connection: Any, declared: Any, log: Any, timeout: float) -> None:
        self.name = "watched"
        self._connection, self._declared, self._log, self._timeout = (
            connection,
            declared,
            log,
            timeout,
        )

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> Any:
        return await self._connection.call(
            self._declared, args, ctx, timeout=self._timeout, progress=self._log
        )


def mcp_declared(subject: ToolSubject) -> tuple[Any, Any] | None:
    connection = subject.extra.get("connection", getattr(subject.tool, "connection", None))
    name = subject.extra.get("original_name", getattr(subject.tool, "original_name", None))
    if connection is None or not isinstance(name, str):
        return None
    for declared in getattr(connection, "tools", ()):
        if getattr(declared, "name", None) == name:
            return connection, declared
    return None


async def _cancel_during(env: Env, *, watch: bool, at: float | None = None) -> None:
    """Call, cancel from another thread a moment in (or ``at`` seconds, never sooner);
    for MCP, cancel once the server has the call (``_cancel_once_received``) and watch
    the server after."""
    options, args = env.options, env.observation.simplest
    mcp = mcp_declared(env.subject) if env.subject.source == "mcp" else None
    soonest = MCP_CANCEL_AFTER if mcp is not None else CANCEL_AFTER
    # "A moment in" is later on a busy machine (``stretch``): a tool that answers at
    # once on a quiet one may not have begun by then, and would answer after the cancel.
    after = soonest * stretch() if at is None else max(soonest, at)
    ctx = ToolContext()
    fired: list[float] = []

    def cancel() -> None:
        fired.append(time.monotonic())
        ctx.cancel("conformance: cancelled during the call")

    bound = after + options.grace + SLACK
    if mcp is None or not watch:
        timer = threading.Timer(after, cancel)
        timer.daemon = True
        timer.start()
        try:
            outcome = await env.call(args, ctx, bound)
        finally:
            timer.cancel()
        env.observation.cancel_during = CancelDuring(
            Call(args, outcome), _fired(fired, outcome), after
        )
        return
    connection, declared = mcp
    with connection.progress_log() as log:
        watched = _WatchedCall(connection, declared, log, options.call_timeout)
        canceller = asyncio.ensure_future(_cancel_once_received(connection, after, options, cancel))
        started = time.monotonic()
        try:
            env.observation.calls += 1
            # The wait for the server to show it has the call may take the grace too.
            outcome = await call_once(
                watched, args, ctx, timeout=bound + options.grace, scratch=False
            )
        finally:
            canceller.cancel()
        moment = _fired(fired, outcome)
        if moment is not None:
            await asyncio.sleep(max(options.grace, 2 * IN_FLIGHT))  # the window we watch
        late = tuple(e.at - moment for e in log.after(moment + IN_FLIGHT)) if moment else ()
        total = len(log.events)
    problem = await connection.probe(options.grace)
    env.observation.cancel_during = CancelDuring(
        Call(args, outcome),
        moment,
        # When the cancel came, or the call ended first: either can be past ``after``.
        (moment if moment is not None else outcome.ended or started) - started,
        server_problem=problem,
        late_progress=late,
        progress_total=total,
        watched=moment is not None,
    )


async def _cancel_once_received(
    connection: Any, after: float, options: RunOptions, cancel: Callable[[], None]
) -> None:
    """Cancel ``after`` seconds in, once the server has answered a request sent since.

    A server reads its messages in order: one busy when the call was sent (another
    tool's call blocking its loop a moment) reads the call and its cancel together,
    and the SDKs drop a request cancelled before its handler began. Such a call was
    never cancelled mid-way, and a handler that blocks the server would pass. A
    request answered after the call was sent shows the call's handler has begun (or
    the server is not answering while it runs: then the cancel comes after the grace).
    """
    await asyncio.sleep(after)
    await connection.probe(options.grace)
    cancel()


def _fired(fired: list[float], outcome: CallOutcome) -> float | None:
    """When the cancel fired, if it did before the call ended (else nothing to honour)."""
    if not fired or outcome.ended is None or outcome.ended < fired[0]:
        return None
    return fired[0]


async def _task_cancel(env: Env) -> None:
    options, args, tool = env.options, env.observation.simplest, env.subject.tool
    if blocked_before(tool):
        env.observation.blocked_loop = "an earlier call blocked the event loop"
        return
    ctx = ToolContext()
    env.observation.calls += 1
    task = asyncio.ensure_future(capture(tool, args, ctx))
    await asyncio.wait({task}, timeout=CANCEL_AFTER)
    if task.done():
        if not task.cancelled():
            task.result()
        env.observation.task_cancel = TaskCancel(args, "finished-first")
        return
    task.cancel()
    await asyncio.wait({task}, timeout=options.grace)
    if not task.done():
        ctx.cancel("conformance: task cancel ignored")
        task.add_done_callback(lambda t: None if t.cancelled() else t.exception())
        env.observation.task_cancel = TaskCancel(args, "still-running")
        return
    if task.cancelled():
        env.observation.task_cancel = TaskCancel(args, "propagated")
        return
    ok, payload, _ = task.result()
    what = f"returned {describe(payload)}" if ok else f"raised {describe_error(payload)}"
    env.observation.task_cancel = TaskCancel(args, "swallowed", what)
