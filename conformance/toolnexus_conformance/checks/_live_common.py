"""What every live check does before and around its calls: may we call, with what, and how."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from toolnexus_conformance._calls import CallOutcome, call_once, show
from toolnexus_conformance._explore import (
    Failure,
    explore,
    first_example,
    invalid_strategy,
    valid_strategy,
)
from toolnexus_conformance._model import Finding, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._safety import may_execute
from toolnexus_conformance._subject import ToolSubject
from toolnexus_ref import ToolContext, run_in_daemon_thread

__all__ = [
    "Judge",
    "hang_failure",
    "is_async",
    "parts",
    "permitted",
    "search",
    "simple_args",
]

#: Says what is wrong with one call's outcome, or ``None`` when it keeps the property.
Judge = Callable[[CallOutcome], "str | None"]


def permitted(subject: ToolSubject, options: RunOptions) -> None:
    """Every live check starts here: a tool that may not be called is skipped, with why."""
    reason = may_execute(subject, options)
    if reason is not None:
        raise Skip(reason)


def parts(value: Any) -> tuple[bool, Any, Any, Any]:
    """``(result_like, output, is_error, metadata)`` read without trusting the value."""
    try:
        if not (hasattr(value, "output") and hasattr(value, "is_error")):
            return False, None, None, None
        return True, value.output, value.is_error, getattr(value, "metadata", None)
    except Exception:  # a property that raises: not a usable result
        return False, None, None, None


def hang_failure(outcome: CallOutcome, limit: float, what: str = "the call") -> Failure:
    if outcome.blocked_loop:
        message = (
            "an earlier call blocked the event loop (an async execute that never awaits, "
            "e.g. time.sleep inside async def); the tool was not called again"
        )
    else:
        message = f"{what} did not return within {limit:g}s"
    return Failure(outcome.args, message, stop=True)


def is_async(tool: Any) -> bool:
    try:
        return inspect.iscoroutinefunction(tool.execute)
    except Exception:
        return False


def _unpack(drawn: Any, invalid: bool) -> tuple[Any, str | None]:
    if invalid:
        return drawn.value, str(drawn.mutation)
    return drawn, None


async def search(
    subject: ToolSubject,
    options: RunOptions,
    code: str,
    judge: Judge,
    *,
    invalid: bool = False,
    with_ctx: bool = True,
) -> list[Finding]:
    """Call the tool over generated arguments; the smallest failing call, if any, as a finding."""
    permitted(subject, options)
    schema = subject.input_schema
    # Built off the loop: compiling a large schema is our own work, and the loop's
    # stall watch must only ever see the tool's.
    build = invalid_strategy if invalid else valid_strategy
    strategy = await run_in_daemon_thread(lambda: build(schema), name="toolnexus-strategy")
    timeout = options.call_timeout

    async def probe(drawn: Any) -> Failure | None:
        args, mutation = _unpack(drawn, invalid)
        ctx = ToolContext() if with_ctx else None
        outcome = await call_once(
            subject.tool, args, ctx, timeout=timeout, scratch=options.scratch_root
        )
        if outcome.timed_out:
            return hang_failure(outcome, timeout)
        message = judge(outcome)
        if message is None:
            return None
        return Failure(args, message, got=show(outcome), mutation=mutation)

    key = f"{code}\0{subject.target}\0{subject.display_name}"
    failure = await explore(strategy, probe, options, key=key, schema=schema, bound=timeout + 5.0)
    return [] if failure is None else [failure.finding()]


async def simple_args(subject: ToolSubject, options: RunOptions) -> Any:
    """The simplest valid arguments, for checks that call once and judge timing."""
    return await first_example(valid_strategy(subject.input_schema), options)
