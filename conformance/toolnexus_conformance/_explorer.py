"""Exploring a tool once: the calls every live check judges, made in one bounded pass.

For each tool the exploration builds its argument strategies, finds the simplest
valid arguments once, and makes the calls the live checks need: a stream of valid
arguments, a stream of invalid ones, a few calls without a context, a cancel before
and during a call, a deadline, a cancelled task, and concurrent calls. A tool
marked read-only gets these at once (it says concurrent calls are harmless to
it); any other tool gets them one after another, starting with the simplest call,
so a tool that never answers costs one call timeout and the short timing probes.

Every call is bounded (``_calls.call_once``); each stream stops calling once its
budget is spent, so a slow tool costs seconds, not examples times seconds.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolnexus_ref import BaseTool, ToolContext, annotations_of

from ._calls import CallOutcome, blocked_before, call_once, capture, describe, describe_error
from ._model import Skip
from ._observation import CancelDuring, Observation, Phase, Stream, TaskCancel, properties_for
from ._options import RunOptions
from ._safety import may_execute
from ._search import (
    BUILD_LIMIT,
    Call,
    Failure,
    Lane,
    args_key,
    build_strategy,
    search,
    simplest,
)
from ._subject import ToolSubject
from ._workers import SearchWorkers

__all__ = ["explore_tool", "is_async", "parts", "runs_on_loop"]

#: When the cancel arrives, after the call started (MCP: the request must reach the server).
CANCEL_AFTER = 0.05
MCP_CANCEL_AFTER = 0.1
#: The deadline given to the call of the deadline probe.
DEADLINE = 0.2
#: Scheduling slack on top of the grace period before a call counts as hung.
SLACK = 0.1
#: The most calls made at once by the concurrency probe.
BATCH = 4
#: Progress arriving this soon after the cancellation may have left the server before it
#: read the cancellation (it crossed on the wire), so it is not held against the server.
IN_FLIGHT = 0.25

_STREAM_PHASES = {Stream.VALID: Phase.VALID, Stream.INVALID: Phase.INVALID}
_TIMING = (Phase.CANCEL_BEFORE, Phase.CANCEL_DURING, Phase.DEADLINE, Phase.TASK_CANCEL)


def parts(value: Any) -> tuple[bool, Any, Any, Any]:
    """``(result_like, output, is_error, metadata)`` read without trusting the value."""
    try:
        if not (hasattr(value, "output") and hasattr(value, "is_error")):
            return False, None, None, None
        return True, value.output, value.is_error, getattr(value, "metadata", None)
    except Exception:  # a property that raises: not a usable result
        return False, None, None, None


def is_async(tool: Any) -> bool:
    try:
        return inspect.iscoroutinefunction(tool.execute)
    except Exception:
        return False


def runs_on_loop(tool: Any, source: Any) -> bool:
    """Whether the tool's own code runs on the event loop, where it could block it.

    MCP tools only wait for their server; sync code runs in threads. Only an
    in-process ``async def`` can stop the loop (``time.sleep`` inside it).
    """
    if source == "mcp":
        return False
    try:
        marker = getattr(tool, "_is_async", None)
        if isinstance(marker, bool):
            return marker
        if isinstance(tool, BaseTool):
            return inspect.iscoroutinefunction(tool.run)
    except Exception:
        return True
    return is_async(tool)


@dataclass(slots=True)
class _Env:
    """What the phases of one exploration share."""

    subject: ToolSubject
    options: RunOptions
    codes: frozenset[str] | None
    workers: SearchWorkers
    observation: Observation
    #: Calls with a fresh context, by arguments; the calls without one apart.
    with_ctx: dict[str, Call]
    without_ctx: dict[str, Call]

    async def call(self, args: Any, ctx: ToolContext | None, timeout: float) -> CallOutcome:
        self.observation.calls += 1
        return await call_once(self.subject.tool, args, ctx, timeout=timeout, scratch=False)


async def explore_tool(
    subject: ToolSubject,
    options: RunOptions,
    phases: frozenset[Phase],
    workers: SearchWorkers,
    *,
    codes: frozenset[str] | None = None,
) -> Observation:
    """Make the calls ``phases`` need; never raises for anything the tool does."""
    started = time.monotonic()
    observation = Observation(subject, call_timeout=options.call_timeout)
    reason = may_execute(subject, options)
    if reason is not None:
        observation.not_called = reason
        return observation
    env = _Env(subject, options, codes, workers, observation, {}, {})
    try:
        await _explore(env, phases)
    except Skip as skip:
        observation.error = skip.reason
    finally:
        observation.elapsed = time.monotonic() - started
    return observation


async def _explore(env: _Env, phases: frozenset[Phase]) -> None:
    observation, options, schema = env.observation, env.options, env.subject.input_schema
    valid_needed = bool(phases - {Phase.INVALID})
    valid, invalid = await asyncio.gather(
        _strategy(env, schema, invalid=False) if valid_needed else _none(),
        _strategy(env, schema, invalid=True) if Phase.INVALID in phases else _none(),
    )
    if valid is not None and phases & {*_TIMING, Phase.MCP_AFTER_CANCEL, Phase.VALID}:
        try:
            observation.simplest = await simplest(valid, options, env.workers.builders)
        except Skip as skip:
            observation.simplest_skip = skip.reason
    elif valid is None:
        observation.simplest_skip = observation.stream_skips.get(Stream.VALID)

    streams: list[Callable[[], Awaitable[None]]] = []
    no_context = valid is not None and Phase.NO_CONTEXT in phases
    if valid is not None and (Phase.VALID in phases or no_context):
        streams.append(lambda: _stream(env, Stream.VALID, valid, with_no_context=no_context))
    if invalid is not None:
        streams.append(lambda: _stream(env, Stream.INVALID, invalid, with_no_context=False))
    timing = [p for p in (*_TIMING, Phase.MCP_AFTER_CANCEL) if p in phases]

    if annotations_of(env.subject.tool).read_only is True:
        # The tool says concurrent calls are harmless to it: make them all at once. A
        # timing verdict that contention could have caused is made again, alone, at
        # the end of the batch (``recheck``).
        await asyncio.gather(*(run() for run in streams), _timing(env, timing))
    else:
        if Phase.VALID in phases and observation.simplest_skip is None and valid is not None:
            first = await env.call(observation.simplest, ToolContext(), options.call_timeout)
            made = Call(observation.simplest, first)
            if first.timed_out:
                observation.unresponsive = made
                await _timing(env, timing, together=True)
                return
            env.with_ctx[args_key(observation.simplest)] = made
        for run in streams:
            if observation.unresponsive is None and observation.blocked_loop is None:
                await run()
        await _timing(env, timing)
    if Phase.CONCURRENT in phases and observation.unresponsive is None:
        await _concurrent(env)
    if timing and observation.simplest_skip is None:
        observation.recheck = lambda: _recheck(env, timing)


def _late(call: Call | None, limit: float) -> bool:
    """A probe whose verdict could be contention's doing: it ended late, or succeeded late."""
    if call is None:
        return False
    outcome = call.outcome
    if outcome.timed_out:
        return True
    return outcome.elapsed >= limit and parts(outcome.value)[2] is False


async def _recheck(env: _Env, timing: list[Phase]) -> bool:
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
        or (during.fired is not None and parts(during.call.outcome.value)[2] is False)
        or during.server_problem is not None  # another tool may have kept the server busy
        or during.late_progress
    ):
        again.append(Phase.CANCEL_DURING)
        if Phase.MCP_AFTER_CANCEL in timing:
            again.append(Phase.MCP_AFTER_CANCEL)
    if _late(observation.deadline, DEADLINE):
        again.append(Phase.DEADLINE)
    if observation.task_cancel is not None and observation.task_cancel.what == "still-running":
        again.append(Phase.TASK_CANCEL)
    if again and observation.unresponsive is None and observation.blocked_loop is None:
        mcp = _mcp_declared(env.subject) if env.subject.source == "mcp" else None
        if mcp is not None:
            # Let the server finish what earlier calls left it doing before judging again.
            await mcp[0].probe(env.options.call_timeout)
        await _timing(env, again)
        return True
    return False


async def _none() -> None:
    return None


async def _strategy(env: _Env, schema: Any, *, invalid: bool) -> Any:
    """Built on a worker thread: compiling a large schema is our work, not the tool's."""
    work = env.workers.builders.run(lambda: build_strategy(schema, invalid=invalid))
    try:
        done, _ = await asyncio.wait({work}, timeout=BUILD_LIMIT)
        if not done:
            env.workers.builders.wedged()
            raise Skip(
                f"building arguments for this schema took longer than {BUILD_LIMIT:g}s"
                " (TN302 reports schemas too large to use)"
            )
        return work.result()
    except Skip as skip:
        for stream in (Stream.INVALID,) if invalid else (Stream.VALID, Stream.NO_CONTEXT):
            env.observation.stream_skips[stream] = skip.reason
        return None


async def _stream(
    env: _Env, stream: Stream, strategy: Any, *, with_no_context: bool, with_context: bool = True
) -> None:
    """One search; the valid one also calls each example without a context (TN603)."""
    options, subject = env.options, env.subject
    timeout = options.call_timeout

    async def with_ctx(args: Any) -> CallOutcome:
        return await env.call(args, ToolContext(), timeout)

    async def without_ctx(args: Any) -> CallOutcome:
        return await env.call(args, None, timeout)

    streams: list[Stream] = []
    lanes: list[Lane] = []
    if with_context:
        streams.append(stream)
        lanes.append(Lane(with_ctx, properties_for(stream, env.codes), env.with_ctx))
    if with_no_context:
        streams.append(Stream.NO_CONTEXT)
        lanes.append(
            Lane(without_ctx, properties_for(Stream.NO_CONTEXT, env.codes), env.without_ctx)
        )
    results = await search(
        strategy,
        lanes,
        options,
        workers=env.workers,
        key=f"{stream.value}\0{subject.target}\0{subject.display_name}",
        schema=subject.input_schema,
        bound=timeout + 5.0,
        examples=options.examples,
        invalid=stream is Stream.INVALID,
        first=None if stream is Stream.INVALID else env.observation.simplest,
        together=annotations_of(subject.tool).read_only is True,
    )
    for name, result in zip(streams, results, strict=True):
        env.observation.streams[name] = result
        if result.hang is not None and env.observation.unresponsive is None:
            if result.hang.outcome.blocked_loop:
                env.observation.blocked_loop = "an earlier call blocked the event loop"
            else:
                env.observation.unresponsive = result.hang


# -- timing probes -------------------------------------------------------------------
async def _timing(env: _Env, phases: list[Phase], *, together: bool = False) -> None:
    """The single-call probes, with the simplest valid arguments."""
    if not phases or env.observation.simplest_skip is not None:
        return
    probes: list[Awaitable[None]] = []
    if Phase.CANCEL_BEFORE in phases:
        probes.append(_cancel_before(env))
    if Phase.CANCEL_DURING in phases or Phase.MCP_AFTER_CANCEL in phases:
        probes.append(_cancel_during(env, watch=Phase.MCP_AFTER_CANCEL in phases))
    if Phase.DEADLINE in phases:
        probes.append(_deadline(env))
    if Phase.TASK_CANCEL in phases and is_async(env.subject.tool):
        probes.append(_task_cancel(env))
    if together:
        await asyncio.gather(*probes)
    else:
        for probe in probes:
            await probe


async def _cancel_before(env: _Env) -> None:
    args = env.observation.simplest
    ctx = ToolContext()
    ctx.cancel("conformance: cancelled before the call")
    outcome = await env.call(args, ctx, env.options.grace)
    env.observation.cancel_before = Call(args, outcome)


async def _deadline(env: _Env) -> None:
    args = env.observation.simplest
    ctx = ToolContext(timeout=DEADLINE)
    outcome = await env.call(args, ctx, DEADLINE + env.options.grace + SLACK)
    env.observation.deadline = Call(args, outcome)


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


def _mcp_declared(subject: ToolSubject) -> tuple[Any, Any] | None:
    connection = subject.extra.get("connection", getattr(subject.tool, "connection", None))
    name = subject.extra.get("original_name", getattr(subject.tool, "original_name", None))
    if connection is None or not isinstance(name, str):
        return None
    for declared in getattr(connection, "tools", ()):
        if getattr(declared, "name", None) == name:
            return connection, declared
    return None


async def _cancel_during(env: _Env, *, watch: bool) -> None:
    """Call, cancel from another thread a moment in; for MCP, watch the server after."""
    options, args = env.options, env.observation.simplest
    mcp = _mcp_declared(env.subject) if env.subject.source == "mcp" else None
    after = MCP_CANCEL_AFTER if mcp is not None else CANCEL_AFTER
    ctx = ToolContext()
    fired: list[float] = []

    def cancel() -> None:
        fired.append(time.monotonic())
        ctx.cancel("conformance: cancelled during the call")

    timer = threading.Timer(after, cancel)
    timer.daemon = True
    bound = after + options.grace + SLACK
    if mcp is None or not watch:
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
        timer.start()
        try:
            env.observation.calls += 1
            outcome = await call_once(watched, args, ctx, timeout=bound, scratch=False)
        finally:
            timer.cancel()
        moment = _fired(fired, outcome)
        if moment is not None:
            await asyncio.sleep(max(options.grace, 2 * IN_FLIGHT))  # the window we watch
        late = tuple(e.at - moment for e in log.after(moment + IN_FLIGHT)) if moment else ()
        total = len(log.events)
    problem = await connection.probe(options.grace)
    env.observation.cancel_during = CancelDuring(
        Call(args, outcome),
        moment,
        after,
        server_problem=problem,
        late_progress=late,
        progress_total=total,
        watched=moment is not None,
    )


def _fired(fired: list[float], outcome: CallOutcome) -> float | None:
    """When the cancel fired, if it did before the call ended (else nothing to honour)."""
    if not fired or outcome.ended is None or outcome.ended < fired[0]:
        return None
    return fired[0]


async def _task_cancel(env: _Env) -> None:
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


# -- concurrency ---------------------------------------------------------------------
def _result_key(outcome: CallOutcome) -> tuple[str, Any, Any]:
    if outcome.error is not None:
        return ("raised", type(outcome.error).__name__, None)
    _, output, is_error, _ = parts(outcome.value)
    return ("returned", output, is_error)


async def _concurrent(env: _Env) -> None:
    """Valid calls already made one by one, made again all at once; the answers must agree."""
    hints = annotations_of(env.subject.tool)
    observation = env.observation
    if not (hints.read_only is True and hints.idempotent is True):
        observation.concurrent_skip = (
            "only tools marked read-only and idempotent can be compared across calls; this one "
            f"has read_only={hints.read_only}, idempotent={hints.idempotent}"
        )
        return
    alone = [c for c in env.with_ctx.values() if c.mutation is None and c.outcome.returned]
    alone = alone[:BATCH]
    if len(alone) < 2:
        observation.concurrent_skip = (
            "fewer than two valid calls came back to compare (the tool is slow, or its schema "
            "admits few arguments)"
        )
        return
    timeout = env.options.call_timeout
    together = await asyncio.gather(*(env.call(c.args, ToolContext(), timeout) for c in alone))
    batch = [c.args for c in alone]
    for index, (one, many) in enumerate(zip(alone, together, strict=True)):
        if many.timed_out:
            observation.concurrent = Failure(
                batch,
                f"call {index + 1} of {len(batch)} did not return within {timeout:g}s "
                "when run concurrently, but did alone",
            )
            return
        mine, theirs = _result_key(one.outcome), _result_key(many)
        if mine == theirs:
            continue
        others = {_result_key(c.outcome) for c in alone if c is not one}
        failed_alone, failed_together = mine[2] is not False, theirs[2] is not False
        # A mix-up is another call's answer, or a failure only concurrency causes. Output
        # that changes from call to call (a timestamp) is neither.
        if theirs not in others and failed_alone == failed_together:
            continue
        again = await env.call(one.args, ToolContext(), timeout)
        if _result_key(again) == theirs:
            continue  # alone, now, it answers the same: no mix-up
        from ._calls import show

        observation.concurrent = Failure(
            batch,
            f"call {index + 1} of {len(batch)} gave {show(many)} when run concurrently but "
            f"{show(one.outcome)} alone",
            got=show(many),
        )
        return
