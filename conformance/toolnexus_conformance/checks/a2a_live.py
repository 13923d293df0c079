"""Live A2A checks: a cancelled task really ends, and a failed task is never a success.

Both put a question to the agent itself (``get_task``, ``cancel_task``) beside
what the tool answered: an agent that says "cancelled" and keeps working, or a
tool that hides a failed task behind a success, looks fine from the tool alone.
They ask only about tools the live checks may call at all.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

from toolnexus_conformance._model import Category, Finding, Severity, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance.live._explorer import parts
from toolnexus_conformance.live._observation import Observation, Phase, Stream

from .a2a import A2A

__all__ = ["a2a_cancel_ends_task", "a2a_failed_task_is_error"]

#: Task states that are no success, whatever the tool said.
_NOT_SUCCESS = frozenset({"failed", "rejected", "canceled", "input-required", "auth-required"})
#: Bound on one question to the agent, past the run's grace.
_ASK_LIMIT = 15.0
T = TypeVar("T")


def _run(make: Callable[[], Awaitable[T]], limit: float) -> T:
    """Run a coroutine on a loop of its own in a thread: checks are called from sync code,
    sometimes on a thread whose loop is running."""
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["value"] = asyncio.run(_bounded(make, limit))
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=main, name="a2a-check", daemon=True)
    thread.start()
    thread.join(limit + 5.0)
    if thread.is_alive():
        raise Skip(f"the agent did not answer the check's questions within {limit:g}s")
    if "error" in box:
        error = box["error"]
        raise Skip(f"the agent could not be asked: {type(error).__name__}: {error}")
    value: T = box["value"]
    return value


async def _bounded(make: Callable[[], Awaitable[T]], limit: float) -> T:
    return await asyncio.wait_for(make(), limit)


def _connect(observation: Observation) -> tuple[Callable[..., Any], str | None]:
    extra = observation.subject.extra
    connect = extra.get("a2a_connect")
    if not callable(connect):
        reading = extra.get("a2a_card")
        if reading is None:
            raise Skip("the tool does not say which agent it talks to (a2a_card)")
        from toolnexus_ref.a2a import open_client

        connect = functools.partial(open_client, reading)
    skill = extra.get("a2a_skill_id")
    return connect, skill if isinstance(skill, str) else None


@check(
    "TN771",
    "a2a-cancel-ends-task",
    title="A task cancelled mid-way reaches the canceled state",
    category=Category.CANCELLATION,
    severity=Severity.ERROR,
    why="A host that cancels a call (a user pressed stop, a deadline passed) sends cancel_task"
    " and moves on; an agent that accepts it but keeps the task working goes on spending and"
    " acting for nobody, and its client never learns the task's fate.",
    fix="In the AgentExecutor, implement cancel() to stop the work and publish the canceled"
    " status (TaskUpdater.cancel()); let the execute() task be cancelled, and never answer"
    " cancel_task while the task keeps running.",
    reference="https://a2a-protocol.org/latest/specification/#316-cancel-task",
    live=True,
    needs=[Phase.VALID],
    sources=A2A,
)
def a2a_cancel_ends_task(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    calls = observation.stream(Stream.VALID).calls
    if not calls:
        raise Skip("no call with valid arguments was made")
    # Arguments the agent took (a success) run a real task; others may be refused at once.
    took = [c for c in calls if c.outcome.returned and parts(c.outcome.value)[2] is False]
    args = (took or calls)[0].args
    if not isinstance(args, Mapping):
        raise Skip("the valid arguments are not an object")
    connect, skill = _connect(observation)
    from toolnexus_ref.a2a import probe_cancel

    grace = max(options.grace, 1.0)
    probe = _run(lambda: probe_cancel(connect, args, skill, grace=grace), grace + _ASK_LIMIT)
    if probe.verdict == "unjudged":
        raise Skip(f"not judged: {probe.detail}")
    if probe.verdict == "ended":
        return []
    return [
        Finding(
            f"task {probe.task_id}: {probe.detail} (states seen: {' -> '.join(probe.states)})",
            sent=dict(args),
        )
    ]


@check(
    "TN671",
    "a2a-failed-task-is-error",
    title="A call whose task failed is an error result, not a success",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="The model trusts a success: a task the agent failed, rejected or cancelled, handed back"
    " as a success, makes it build on work that was never done, and the host never retries.",
    fix="Map the task's final state to the result: completed is a success; failed, rejected,"
    " canceled (and input-required, auth-required: the task is waiting) are error results that"
    " carry the agent's words.",
    reference="https://a2a-protocol.org/latest/specification/#63-taskstate-enum",
    live=True,
    needs=[Phase.VALID],
    sources=A2A,
)
def a2a_failed_task_is_error(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    calls = observation.stream(Stream.VALID).calls
    connect, _ = _connect(observation)
    told = []
    for call in calls:
        ok, output, is_error, metadata = (
            parts(call.outcome.value) if call.outcome.returned else (False,) * 4
        )
        if not ok or is_error is not False or not isinstance(metadata, Mapping):
            continue
        task_id = metadata.get("a2a_task_id")
        if isinstance(task_id, str) and task_id:
            told.append((call, task_id, output))
    if not told:
        raise Skip("no successful call named its task (result metadata 'a2a_task_id')")
    from toolnexus_ref.a2a import task_state

    for call, task_id, output in told[:5]:
        state = _run(functools.partial(task_state, connect, task_id), _ASK_LIMIT)
        if state in _NOT_SUCCESS:
            return [
                Finding(
                    f"the result is a success, but the agent reports task {task_id} {state}",
                    sent=call.args,
                    got=output,
                )
            ]
    return []
