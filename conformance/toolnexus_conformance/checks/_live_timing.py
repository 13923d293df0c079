"""Live checks about time: cancellation (TN70x), deadlines (TN80x), concurrency (TN90x).

Each timing check calls the tool once with the simplest valid arguments. A quick
tool often returns before the cancel or the deadline fires; then there is nothing
to honour, and only promptness and the result's error flag are judged, so a quick
tool passes. The suites cannot make a tool slow; the corpus has slow ones.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable
from typing import Any

from toolnexus_conformance._calls import (
    UNWIND,
    CallOutcome,
    blocked_before,
    call_once,
    capture,
    describe,
    describe_error,
    scratch_cwd,
    show,
)
from toolnexus_conformance._explore import Failure, explore, valid_strategy
from toolnexus_conformance._model import Category, Finding, Severity, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import ToolSubject
from toolnexus_ref import ToolContext, annotations_of

from ._live_common import hang_failure, is_async, parts, permitted, simple_args

__all__ = [
    "cancel_before",
    "cancel_during",
    "concurrent_calls",
    "deadline_honoured",
    "late_success",
    "success_after_cancel",
    "task_cancel_propagates",
]

#: When the cancel arrives, after the call started.
CANCEL_AFTER = 0.05
#: The deadline given to the call in the deadline checks.
DEADLINE = 0.2
#: Scheduling slack on top of the grace period before a call counts as hung.
SLACK = 0.1
#: Calls made at once by the concurrency check.
BATCH = (2, 4)

_CTX = "Tool contract: ToolContext cancellation and deadlines; DESIGN.md 'The contract'"


def _finding(outcome: CallOutcome, message: str) -> Finding:
    got = show(outcome)
    text = f"{message}: {got}, for arguments {describe(outcome.args)}"
    return Finding(text, sent=outcome.args, got=got)


def _is_success(outcome: CallOutcome) -> bool:
    ok, _, is_error, _ = parts(outcome.value)
    return outcome.returned and ok and is_error is False


async def _cancel_midway(
    subject: ToolSubject, options: RunOptions
) -> tuple[CallOutcome, float | None]:
    """Call, cancel from another thread ``CANCEL_AFTER`` in; the outcome and when it fired."""
    args = await simple_args(subject, options)
    ctx = ToolContext()
    fired: list[float] = []

    def cancel() -> None:
        fired.append(time.monotonic())
        ctx.cancel("conformance: cancelled during the call")

    timer = threading.Timer(CANCEL_AFTER, cancel)
    timer.daemon = True
    timer.start()
    try:
        outcome = await call_once(
            subject.tool,
            args,
            ctx,
            timeout=CANCEL_AFTER + options.grace + SLACK,
            scratch=options.scratch_root,
        )
    finally:
        timer.cancel()
    if not fired or outcome.ended is None or outcome.ended < fired[0]:
        return outcome, None
    return outcome, fired[0]


@check(
    "TN701",
    "cancel-before",
    title="A context cancelled before the call gives a prompt error result",
    category=Category.CANCELLATION,
    severity=Severity.ERROR,
    why="A host that was cancelled while queueing calls still passes them on; doing the work "
    "(and reporting success) after the user said stop is what cancellation exists to prevent.",
    fix="Start execute with `if ctx is not None and ctx.is_cancelled(): return "
    "ToolResult.error('Cancelled')` (BaseTool does it).",
    reference=_CTX,
    live=True,
)
async def cancel_before(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    args = await simple_args(subject, options)
    ctx = ToolContext()
    ctx.cancel("conformance: cancelled before the call")
    outcome = await call_once(
        subject.tool, args, ctx, timeout=options.grace, scratch=options.scratch_root
    )
    if outcome.timed_out:
        return [
            Finding(hang_failure(outcome, options.grace, "a pre-cancelled call").finding().message)
        ]
    if outcome.error is not None:
        return [
            _finding(outcome, "a pre-cancelled call raised instead of returning an error result")
        ]
    ok, _, is_error, _ = parts(outcome.value)
    if ok and is_error is not True:
        return [_finding(outcome, "a call whose context was already cancelled reported success")]
    return []


@check(
    "TN702",
    "cancel-during",
    title="A cancel during the call ends it within the grace period",
    category=Category.CANCELLATION,
    severity=Severity.ERROR,
    why="Users stop runaway tools; a tool that ignores ctx.cancel() keeps working (and holding "
    "resources) after the host gave up, and a host that waits for it hangs.",
    fix="Poll `ctx.is_cancelled()` or block in `ctx.wait(...)` (sync), await "
    "`ctx.wait_cancelled()` alongside the work (async), and return an error result.",
    reference=_CTX,
    live=True,
)
async def cancel_during(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    outcome, fired = await _cancel_midway(subject, options)
    if outcome.timed_out:
        return [
            Finding(
                hang_failure(outcome, options.grace, f"{options.grace:g}s after a cancel, the call")
                .finding()
                .message
            )
        ]
    if fired is None:
        return []  # it returned before the cancel: only promptness could be judged
    if outcome.error is not None:
        return [_finding(outcome, "the cancelled call raised instead of returning an error result")]
    return []


@check(
    "TN703",
    "task-cancel-propagates",
    title="Cancelling the asyncio task propagates CancelledError",
    category=Category.CANCELLATION,
    severity=Severity.ERROR,
    why="asyncio.timeout, TaskGroup and anyio cancel scopes rely on CancelledError reaching "
    "them; a tool that swallows it breaks structured concurrency, and the host hangs or "
    "carries on as if nothing was cancelled.",
    fix="Re-raise CancelledError after cleanup (`except asyncio.CancelledError: ...; raise`); "
    "never return a result from it.",
    reference=_CTX,
    live=True,
)
async def task_cancel_propagates(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    if not is_async(subject.tool):
        raise Skip(
            "execute is synchronous: a thread cannot be cancelled; TN702 checks ctx.cancel()"
        )
    args = await simple_args(subject, options)
    if blocked_before(subject.tool):
        blocked = CallOutcome(args, timed_out=True, blocked_loop=True)
        return [Finding(hang_failure(blocked, options.grace).finding().message)]
    ctx = ToolContext()
    with scratch_cwd(options.scratch_root):
        task = asyncio.ensure_future(capture(subject.tool, args, ctx))
        await asyncio.wait({task}, timeout=CANCEL_AFTER)
        if task.done():
            if not task.cancelled():
                task.result()
            return []  # it finished before we could cancel it
        task.cancel()
        await asyncio.wait({task}, timeout=options.grace)
    sent = f"for arguments {describe(args)}"
    if not task.done():
        ctx.cancel("conformance: task cancel ignored")
        task.add_done_callback(lambda t: None if t.cancelled() else t.exception())
        return [
            Finding(
                f"the task was still running {options.grace:g}s after it was cancelled, {sent}",
                sent=args,
            )
        ]
    if task.cancelled():
        return []
    ok, payload, _ = task.result()
    what = f"returned {describe(payload)}" if ok else f"raised {describe_error(payload)}"
    return [Finding(f"CancelledError was swallowed: the cancelled task {what}, {sent}", sent=args)]


@check(
    "TN704",
    "success-after-cancel",
    title="A call cancelled while running does not report success",
    category=Category.CANCELLATION,
    severity=Severity.WARNING,
    why="After ctx.cancel() the host treats the call as abandoned; a success result that "
    "arrives anyway is either ignored or, worse, reported to the model as work done.",
    fix="When execute notices the cancel, return `ToolResult.error('Cancelled')`.",
    reference=_CTX,
    live=True,
)
async def success_after_cancel(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    outcome, fired = await _cancel_midway(subject, options)
    if fired is None or not _is_success(outcome):
        return []
    return [_finding(outcome, "the call reported success after its context was cancelled")]


async def _with_deadline(subject: ToolSubject, options: RunOptions) -> CallOutcome:
    args = await simple_args(subject, options)
    ctx = ToolContext(timeout=DEADLINE)
    return await call_once(
        subject.tool,
        args,
        ctx,
        timeout=DEADLINE + options.grace + SLACK,
        scratch=options.scratch_root,
    )


@check(
    "TN801",
    "deadline-honoured",
    title="A context deadline ends the call within the grace period",
    category=Category.TIMEOUT,
    severity=Severity.ERROR,
    why="A per-call timeout is one wall-clock budget; a tool that works past it holds the "
    "host's turn (and the user) hostage, and the host cannot tell it apart from a hang.",
    fix="Pass `ctx.remaining()` as the timeout of every blocking call, or wait with "
    "`ctx.wait(...)` / `ctx.wait_cancelled()`, and return a retryable error result.",
    reference=_CTX,
    live=True,
)
async def deadline_honoured(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    outcome = await _with_deadline(subject, options)
    if outcome.timed_out:
        message = f"{options.grace:g}s past its {DEADLINE:g}s deadline, the call"
        return [Finding(hang_failure(outcome, options.grace, message).finding().message)]
    if outcome.error is not None and outcome.elapsed >= DEADLINE:
        return [
            _finding(
                outcome,
                "when its deadline passed, execute raised instead of returning an error result",
            )
        ]
    return []


@check(
    "TN802",
    "late-success",
    title="A call past its deadline does not report success",
    category=Category.TIMEOUT,
    severity=Severity.WARNING,
    why="Once the deadline passed the host has moved on; a success that arrives late is "
    "work the model will never hear about, or hears about twice after a retry.",
    fix="Check the deadline (`ctx.is_cancelled()` reads true past it) and return "
    "`ToolResult.error('Timed out', retryable=True)`.",
    reference=_CTX,
    live=True,
)
async def late_success(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    outcome = await _with_deadline(subject, options)
    if outcome.elapsed < DEADLINE or not _is_success(outcome):
        return []
    return [
        _finding(
            outcome,
            f"the call reported success {outcome.elapsed:.2f}s in, past its {DEADLINE:g}s deadline",
        )
    ]


def _key(outcome: CallOutcome) -> tuple[str, Any, Any]:
    if outcome.error is not None:
        return ("raised", type(outcome.error).__name__, None)
    _, output, is_error, _ = parts(outcome.value)
    return ("returned", output, is_error)


@check(
    "TN901",
    "concurrent-calls",
    title="Concurrent calls return what the same calls return one by one",
    category=Category.CONCURRENCY,
    severity=Severity.ERROR,
    why="Hosts run a model's parallel tool calls at once; a read-only, idempotent tool that "
    "keeps per-call state on itself mixes them up and answers one call with another's data.",
    fix="Keep per-call state in local variables, not on the tool object or module globals.",
    reference="MCP ToolAnnotations readOnlyHint, idempotentHint",
    live=True,
)
async def concurrent_calls(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    permitted(subject, options)
    hints = annotations_of(subject.tool)
    if not (hints.read_only is True and hints.idempotent is True):
        raise Skip(
            "only tools marked read-only and idempotent can be compared across calls; this one "
            f"has read_only={hints.read_only}, idempotent={hints.idempotent}"
        )
    from hypothesis import strategies as st

    strategy = st.lists(valid_strategy(subject.input_schema), min_size=BATCH[0], max_size=BATCH[1])
    timeout = options.call_timeout

    async def probe(batch: list[Any]) -> Failure | None:
        with scratch_cwd(options.scratch_root):
            alone = [
                await call_once(subject.tool, a, ToolContext(), timeout=timeout, scratch=False)
                for a in batch
            ]
            together = await asyncio.gather(
                *(
                    call_once(subject.tool, a, ToolContext(), timeout=timeout, scratch=False)
                    for a in batch
                )
            )
        for one, many in zip(alone, together, strict=True):
            if one.timed_out or many.timed_out:
                return hang_failure(one if one.timed_out else many, timeout)
        for index, (one, many) in enumerate(zip(alone, together, strict=True)):
            if _key(one) != _key(many):
                return Failure(
                    batch,
                    f"call {index + 1} of {len(batch)} gave {show(many)} when run "
                    f"concurrently but {show(one)} alone",
                    got=show(many),
                )
        return None

    key = f"TN901\0{subject.target}\0{subject.display_name}"
    bound = 2 * BATCH[1] * (timeout + UNWIND) + 5.0
    failure = await explore(
        strategy, probe, options, key=key, schema=subject.input_schema, bound=bound
    )
    return [] if failure is None else [failure.finding()]
