"""Live checks about time: cancellation (TN70x), deadlines (TN80x), concurrency (TN90x).

Each is judged on a single probe of the tool's exploration, made with the
simplest valid arguments. A quick tool often returns before the cancel or the
deadline fires; then there is nothing to honour, and only promptness and the
result's error flag are judged, so a quick tool passes. The suites cannot make a
tool slow; the corpus has slow ones.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolnexus_conformance._model import Category, Finding, Severity, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._safety import in_sandbox
from toolnexus_conformance.live._calls import CallOutcome, describe, show
from toolnexus_conformance.live._explorer import parts
from toolnexus_conformance.live._observation import Observation, Phase
from toolnexus_conformance.live._search import Call

from ._start_excuses import network_refused

__all__ = [
    "call_answers",
    "cancel_before",
    "cancel_during",
    "concurrent_calls",
    "deadline_honoured",
    "late_success",
    "success_after_cancel",
    "task_cancel_propagates",
]

_CTX = "Tool contract: ToolContext cancellation and deadlines (docs/contract.md)"


def _finding(outcome: CallOutcome, message: str) -> Finding:
    got = show(outcome)
    text = f"{message}: {got}, for arguments {describe(outcome.args)}"
    return Finding(text, sent=outcome.args, got=got)


def _is_success(outcome: CallOutcome) -> bool:
    ok, _, is_error, _ = parts(outcome.value)
    return outcome.returned and ok and is_error is False


def _probe(observation: Observation, call: Call | None) -> CallOutcome:
    """A timing probe's outcome, or ``Skip`` saying why it was not made."""
    observation.needs_simplest()
    if call is None:
        raise Skip("the probe was not made")
    if call.outcome.blocked_loop:
        raise Skip("not judged: an earlier call blocked the event loop (TN501)")
    return call.outcome


def _hung(message: str, outcome: CallOutcome) -> Finding:
    return Finding(f"{message} did not return", sent=outcome.args)


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
    needs=[Phase.CANCEL_BEFORE],
)
def cancel_before(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    outcome = _probe(observation, observation.cancel_before)
    if outcome.timed_out:
        return [Finding(f"a pre-cancelled call did not return within {options.grace:g}s")]
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
    needs=[Phase.CANCEL_DURING],
)
def cancel_during(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    during = observation.cancel_during
    outcome = _probe(observation, during.call if during else None)
    assert during is not None
    if outcome.timed_out:
        return [
            Finding(
                f"the call was cancelled {during.after:.2f}s in and had not returned"
                f" {options.grace:g}s later, for arguments {describe(outcome.args)}",
                sent=outcome.args,
            )
        ]
    if during.fired is None:
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
    needs=[Phase.TASK_CANCEL],
)
def task_cancel_propagates(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    observation.needs_simplest()
    task = observation.task_cancel
    if task is None:
        raise Skip(
            "execute is synchronous: a thread cannot be cancelled; TN702 checks ctx.cancel()"
        )
    sent = f"for arguments {describe(task.args)}"
    if task.what == "still-running":
        return [
            Finding(
                f"the task was still running {options.grace:g}s after it was cancelled, {sent}",
                sent=task.args,
            )
        ]
    if task.what == "swallowed":
        return [
            Finding(
                f"CancelledError was swallowed: the cancelled task {task.detail}, {sent}",
                sent=task.args,
            )
        ]
    return []


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
    needs=[Phase.CANCEL_DURING],
)
def success_after_cancel(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    during = observation.cancel_during
    outcome = _probe(observation, during.call if during else None)
    if during is None or during.fired is None or not _is_success(outcome):
        return []
    return [_finding(outcome, "the call reported success after its context was cancelled")]


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
    needs=[Phase.DEADLINE],
)
def deadline_honoured(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    outcome = _probe(observation, observation.deadline)
    deadline = observation.deadline_after
    if outcome.timed_out:
        return [
            Finding(
                f"{options.grace:g}s past its {deadline:.3g}s deadline, the call did not return",
                sent=outcome.args,
            )
        ]
    if outcome.error is not None and outcome.elapsed >= deadline:
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
    needs=[Phase.DEADLINE],
)
def late_success(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    outcome = _probe(observation, observation.deadline)
    deadline = observation.deadline_after
    if outcome.elapsed < deadline or not _is_success(outcome):
        return []
    return [
        _finding(
            outcome,
            f"the call reported success {outcome.elapsed:.2f}s in, past its {deadline:.3g}s"
            " deadline",
        )
    ]


@check(
    "TN803",
    "call-answers",
    title="Every call answers within the call timeout",
    category=Category.TIMEOUT,
    severity=Severity.WARNING,
    why="A host waits for each tool call; one that never answers holds the model's turn (and"
    " the user) until the host gives up, and the model learns nothing. Slow is one finding, not"
    " one per check: the checks that could not judge such a tool skip, naming this one.",
    fix="Bound the tool's own waits (network, subprocesses, locks) with `ctx.remaining()` and"
    " return an error result when they run out. Where an argument sets how long the call takes"
    " (a duration, a number of steps or retries), declare its `maximum` in the schema: a model"
    " asks for whatever the schema allows. For a tool that is slow by design, give it its own"
    " call_timeout ([tool.toolnexus.tools.<name>]) or raise --toolnexus-call-timeout.",
    reference=_CTX,
    live=True,
    needs=[Phase.VALID],
)
def call_answers(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    crash = observation.crashed
    if crash is not None and crash.silent:
        # Its call left the whole server answering nothing, replayed on a fresh one too.
        return [Finding(crash.describe(), sent=crash.args)]
    observation.needs_simplest()
    hung = observation.unresponsive
    if hung is None:
        return []
    what = f"arguments {describe(hung.args)}"
    if hung.mutation:
        what += f" (invalid: {hung.mutation})"
    message = f"the call did not return within {observation.call_timeout:g}s, for {what}"
    said = _last_lines(hung.outcome.said)
    if said:
        message += f". While it waited, the server wrote on stderr:\n{said}"
        if in_sandbox(observation.subject, options) and network_refused(said) is not None:
            message += (
                "\nIt was reaching for the network, and the sandbox gives the server none,"
                " not even your loopback's services (a database on localhost)."
                " If the tool needs a service, judge it with --toolnexus-allow-network"
            )
    return [Finding(message, sent=hung.args)]


#: The most lines, and characters a line, of a server's stderr a TN803 finding quotes.
SAID_LINES = 6
SAID_WIDTH = 240


def _last_lines(said: str) -> str:
    """The last lines of what a server wrote, blank ones dropped, each one shortened."""
    lines = [line.rstrip() for line in said.splitlines() if line.strip()][-SAID_LINES:]
    return "\n".join(
        line if len(line) <= SAID_WIDTH else f"{line[: SAID_WIDTH - 3]}..." for line in lines
    )


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
    needs=[Phase.VALID, Phase.CONCURRENT],
)
def concurrent_calls(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    observation.usable()
    if observation.concurrent_skip is not None:
        raise Skip(observation.concurrent_skip)
    failure = observation.concurrent
    return [] if failure is None else [failure.finding()]
