"""Exploring a tool once: the calls every live check judges, made in one bounded pass.

For each tool the exploration builds its argument strategies, finds the simplest
valid arguments once, and makes the calls the live checks need: a stream of valid
arguments, a stream of invalid ones, a few calls without a context, a cancel before
and during a call, a deadline, a cancelled task, and concurrent calls. A tool
marked read-only gets these at once (it says concurrent calls are harmless to
it); any other tool gets them one after another, starting with the simplest call,
so a tool that never answers costs one call timeout and the short timing probes.

Every call is bounded (``_calls.call_once``); each stream stops calling once its
budget is spent, so a slow tool costs seconds, not examples times seconds. An MCP
tool's exploration ends at once when its server has exited on its own
(``_crashes.exit_check``, asked before each call of a stream): the calls left would
all fail with that exit, and the tool is explored again once the server restarts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from toolnexus_ref import ToolContext

from .._execution import code_on_loop
from .._model import Skip
from .._options import RunOptions, ToolArguments
from .._safety import may_execute
from .._subject import ToolSubject, hints_of
from ._calls import CallOutcome
from ._contention import Contention, processes_of
from ._crashes import connection_of, exit_check
from ._given import explicit_args, with_literals, with_values
from ._observation import Observation, Phase, Stream, properties_for
from ._probes import DEADLINE, TIMING, Env, is_async, make_probes, parts, recheck
from ._search import (
    BUILD_LIMIT,
    MAX_STRETCH,
    WARM_LIMIT,
    Call,
    Failure,
    Gone,
    Lane,
    args_key,
    build_strategy,
    search,
    search_stretch,
    simplest,
    stretch,
    warm_generation,
    warmed,
)
from ._workers import SearchWorkers

__all__ = ["DEADLINE", "explore_tool", "is_async", "parts", "runs_on_loop"]

#: The most calls made at once by the concurrency probe.
BATCH = 4
#: Why an MCP tool is not called without a context (TN603).
NO_CONTEXT_OVER_MCP = (
    "not judged over MCP: a context (cancellation, deadline) stays in the client, and"
    " the server receives the same tools/call with or without one; TN603 judges tools"
    " whose execute() the host calls directly"
)


def runs_on_loop(tool: Any, source: Any = None) -> bool:
    """Whether the tool's own code runs on the event loop, where it could block it.

    Given a ``ToolSubject``, the answer read with its declaration, in bounded time;
    given a tool and its source, read now (``_execution.code_on_loop``).
    """
    if isinstance(tool, ToolSubject):
        if tool.on_loop is not None:
            return tool.on_loop
        tool, source = tool.tool, tool.source
    return code_on_loop(tool, source)


async def explore_tool(
    subject: ToolSubject,
    options: RunOptions,
    phases: frozenset[Phase],
    workers: SearchWorkers,
    *,
    codes: frozenset[str] | None = None,
) -> Observation:
    """Make the calls ``phases`` need; never raises for anything the tool does.

    A server that exited mid-way ends the exploration (``Gone``): its checks skip
    saying so, unless the tool is explored again on the restarted server.
    """
    started = time.monotonic()
    observation = Observation(subject, call_timeout=options.call_timeout)
    reason = may_execute(subject, options) or _task_required(subject)
    if reason is not None:
        observation.not_called = reason
        return observation
    contention = Contention(processes_of(subject), stretch())
    env = Env(subject, options, codes, workers, observation, {}, {}, contention)
    try:
        await _explore(env, phases)
    except Skip as skip:
        observation.error = skip.reason
    except Gone as gone:
        observation.error = f"not judged: {gone}"
        observation.interrupted = True
    finally:
        observation.elapsed = time.monotonic() - started
        observation.stretch = contention.stretch(stretch(), MAX_STRETCH)
    return observation


def _task_required(subject: ToolSubject) -> str | None:
    """Why an MCP tool that must run as a task is not called (``None`` for any other)."""
    if subject.source != "mcp" or subject.extra.get("task_support") != "required":
        return None
    return (
        'not called: the tool declares execution.taskSupport "required" (MCP tasks,'
        " 2025-11-25), so the server refuses a plain tools/call, and the checks call tools"
        " without tasks"
    )


async def _explore(env: Env, phases: frozenset[Phase]) -> None:
    observation, options, schema = env.observation, env.options, env.subject.input_schema
    # The invalid stream needs the valid strategy too: its lax values (``_given``) are
    # the simplest valid arguments with one property changed.
    valid, invalid = await asyncio.gather(
        _strategy(env, schema, invalid=False) if phases else _none(),
        _strategy(env, schema, invalid=True) if Phase.INVALID in phases else _none(),
    )
    if valid is not None and phases & {*TIMING, Phase.MCP_AFTER_CANCEL, Phase.VALID, Phase.INVALID}:
        try:
            observation.simplest = await simplest(valid, options, env.workers.builders)
        except Skip as skip:
            observation.simplest_skip = skip.reason
    elif valid is None:
        observation.simplest_skip = observation.stream_skips.get(Stream.VALID)

    streams: list[Callable[[], Awaitable[None]]] = []
    no_context = valid is not None and Phase.NO_CONTEXT in phases
    if no_context and env.subject.source == "mcp":
        # The context stays in the client: the server gets the same tools/call with
        # or without one, so a second call per example would judge only our client.
        no_context = False
        observation.stream_skips[Stream.NO_CONTEXT] = NO_CONTEXT_OVER_MCP
    if valid is not None and (Phase.VALID in phases or no_context):
        streams.append(lambda: _stream(env, Stream.VALID, valid, with_no_context=no_context))
    if invalid is not None:
        streams.append(lambda: _stream(env, Stream.INVALID, invalid, with_no_context=False))
    timing = [p for p in (*TIMING, Phase.MCP_AFTER_CANCEL) if p in phases]

    if hints_of(env.subject).read_only is True:
        # The tool says concurrent calls are harmless to it: make them all at once. A
        # timing verdict that contention could have caused is made again, alone, at
        # the end of the batch (``recheck``). Every part ends before the first error
        # is raised (``Gone``): one left running could call the server once restarted.
        ended = await asyncio.gather(
            *(run() for run in streams), make_probes(env, timing), return_exceptions=True
        )
        for outcome in ended:
            if isinstance(outcome, BaseException):
                raise outcome
    else:
        if Phase.VALID in phases and observation.simplest_skip is None and valid is not None:
            first = await env.call(observation.simplest, ToolContext(), options.call_timeout)
            made = Call(observation.simplest, first)
            if first.timed_out:
                observation.unresponsive = made
                await make_probes(env, timing, together=True)
                return
            env.with_ctx[args_key(observation.simplest)] = made
        for run in streams:
            if observation.unresponsive is None and observation.blocked_loop is None:
                await run()
        await make_probes(env, timing)
    if Phase.CONCURRENT in phases and observation.unresponsive is None:
        await _concurrent(env)
    if timing and observation.simplest_skip is None:
        observation.recheck = lambda: recheck(env, timing)


async def _none() -> None:
    return None


async def _strategy(env: Env, schema: Any, *, invalid: bool) -> Any:
    """Built on a worker thread: compiling a large schema is our work, not the tool's."""
    try:
        await _warm(env)
        given = given_for(env)
        done, built = await env.workers.builders.bounded(
            lambda: with_values(build_strategy(schema, invalid=invalid), schema, given, invalid),
            BUILD_LIMIT,
        )
        if not done:
            raise Skip(
                f"building arguments for this schema took longer than {BUILD_LIMIT:g}s"
                " (TN302 reports schemas too large to use)"
            )
        return built
    except Skip as skip:
        for stream in (Stream.INVALID,) if invalid else (Stream.VALID, Stream.NO_CONTEXT):
            env.observation.stream_skips[stream] = skip.reason
        return None


async def _warm(env: Env) -> None:
    """The generator's one-time preparation, bounded apart from any schema's build."""
    if warmed():
        return
    work = env.workers.builders.run(lambda: warm_generation(env.options))
    done, _ = await asyncio.wait({work}, timeout=WARM_LIMIT)
    if not done:
        raise Skip(
            f"preparing the argument generator (importing hypothesis, building its unicode"
            f" table) took longer than {WARM_LIMIT:g}s"
        )
    work.result()


async def _stream(
    env: Env, stream: Stream, strategy: Any, *, with_no_context: bool, with_context: bool = True
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
    explicit = _explicit(env, stream) if with_context else None
    results = await search(
        strategy,
        lanes,
        options,
        workers=env.workers,
        key=f"{stream.value}\0{subject.target}\0{subject.display_name}",
        place=place_of(subject),
        tool=subject.display_name,
        schema=subject.input_schema,
        bound=timeout + 5.0,
        examples=options.examples,
        invalid=stream is Stream.INVALID,
        first=None if stream is Stream.INVALID else env.observation.simplest,
        together=hints_of(subject).read_only is True,
        explicit=explicit,
        gone=exit_check(subject),
        stretch=lambda: _stretch(env),
    )
    for name, result in zip(streams, results, strict=True):
        env.observation.streams[name] = result
        if result.hang is not None and env.observation.unresponsive is None:
            if result.hang.outcome.blocked_loop:
                env.observation.blocked_loop = "an earlier call blocked the event loop"
            else:
                env.observation.unresponsive = result.hang


def place_of(subject: ToolSubject) -> str:
    """Where the tool's calls queue behind its neighbours': its MCP server (one of an
    mcp.json's several), else its target (a worker, pytest's process, a service)."""
    connection = connection_of(subject)
    if connection is None:
        return subject.target
    return f"{subject.target}\0server {id(connection)}"


def _stretch(env: Env) -> float:
    """The search's stretch on this machine now, no more than the tool's processes were
    held back since its exploration began (``_contention``): a tool whose calls sleep
    gets the calls a quiet machine gives it, not more."""
    machine = search_stretch()
    if env.contention is None:
        return machine
    return env.contention.stretch(machine, MAX_STRETCH)


def given_for(env: Env) -> ToolArguments:
    if env.given is None:
        subject = env.subject
        name = subject.name if isinstance(subject.name, str) else subject.display_name
        given = env.options.arguments_for(subject.target, name)
        env.given = with_literals(given, subject.input_schema, subject.tool)
    return env.given


def _explicit(env: Env, stream: Stream) -> Callable[[], list[Any]]:
    """The arguments called before any generated one (``_given.explicit_args``), built
    when the search starts, on its thread."""
    schema, simplest = env.subject.input_schema, env.observation.simplest
    given = given_for(env)
    invalid = stream is Stream.INVALID
    return lambda: explicit_args(schema, simplest, given, invalid=invalid)


# -- concurrency ---------------------------------------------------------------------
def _result_key(outcome: CallOutcome) -> tuple[str, Any, Any]:
    if outcome.error is not None:
        return ("raised", type(outcome.error).__name__, None)
    _, output, is_error, _ = parts(outcome.value)
    return ("returned", output, is_error)


async def _concurrent(env: Env) -> None:
    """Valid calls already made one by one, made again all at once; the answers must agree."""
    hints = hints_of(env.subject)
    observation = env.observation
    if not (hints.read_only is True and hints.idempotent is True):
        observation.concurrent_skip = (
            "only tools marked read-only and idempotent can be compared across calls; this one "
            f"has read_only={hints.read_only}, idempotent={hints.idempotent}"
        )
        return
    made = [c for c in env.with_ctx.values() if c.mutation is None and c.outcome.returned]
    if len(made[:BATCH]) < 2:
        observation.concurrent_skip = (
            "fewer than two valid calls came back to compare (the tool is slow, or its schema "
            "admits few arguments)"
        )
        return
    timeout = env.options.call_timeout
    # Made again one by one first: the search may have made them at once (a read-only
    # tool's explicit arguments are), so what they gave then is no answer "alone".
    alone = [Call(c.args, await env.call(c.args, ToolContext(), timeout)) for c in made[:BATCH]]
    alone = [c for c in alone if c.outcome.returned]
    if len(alone) < 2:
        observation.concurrent_skip = "fewer than two valid calls came back when made again alone"
        return
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
