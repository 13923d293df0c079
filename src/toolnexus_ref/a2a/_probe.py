"""Questions the checks put to an agent directly: what state is a task in, does a cancel end it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._reply import FINAL, state_name

if TYPE_CHECKING:
    from collections.abc import Callable

    #: ``A2ATool.client``, or ``functools.partial(open_client, reading)``.
    Connect = Callable[..., Any]

__all__ = ["CancelProbe", "probe_cancel", "task_state"]


async def task_state(connect: Connect, task_id: str, *, limit: float = 10.0) -> str:
    """The task's state as the agent reports it now (``get_task``)."""
    from a2a.types import GetTaskRequest

    async with connect(streaming=False) as client:
        task = await asyncio.wait_for(client.get_task(GetTaskRequest(id=task_id)), limit)
    return state_name(task.status.state)


@dataclass(frozen=True, slots=True)
class CancelProbe:
    """What became of a task cancelled mid-way.

    ``verdict`` is ``ended`` (it reached ``canceled``), ``ignored`` (it did not:
    ``detail`` says how), or ``unjudged`` (it finished before the cancel could
    matter, or the agent answered with a bare message: no task to cancel).
    """

    verdict: str
    detail: str
    task_id: str | None = None
    states: tuple[str, ...] = ()


async def probe_cancel(
    connect: Connect, args: Mapping[str, Any], skill_id: str | None, *, grace: float
) -> CancelProbe:
    """Start a task without waiting for it, cancel it at once, and watch it for ``grace`` seconds."""
    from a2a.types import CancelTaskRequest, GetTaskRequest

    from ._tool import build_request

    request = build_request(args, skill_id)
    request.configuration.return_immediately = True
    async with connect(streaming=False, polling=True) as client:
        first = None
        async for event in client.send_message(request):
            first = event
            break
        if first is None or first.WhichOneof("payload") != "task":
            return CancelProbe("unjudged", "the agent answered with a message, not a task")
        task_id = first.task.id
        seen = [state_name(first.task.status.state)]
        if seen[-1] in FINAL:
            return CancelProbe(
                "unjudged",
                f"the task was {seen[-1]} before it could be cancelled",
                task_id,
                tuple(seen),
            )
        try:
            answered = await asyncio.wait_for(
                client.cancel_task(CancelTaskRequest(id=task_id)), grace
            )
            seen.append(state_name(answered.status.state))
            if (
                seen[-1] in FINAL and seen[-1] != "canceled"
            ):  # it finished first: a race, no verdict
                return CancelProbe(
                    "unjudged",
                    f"the task was {seen[-1]} when the cancel arrived",
                    task_id,
                    tuple(seen),
                )
        except Exception as exc:
            now = state_name((await client.get_task(GetTaskRequest(id=task_id))).status.state)
            if now in FINAL and now != "canceled":
                return CancelProbe(
                    "unjudged",
                    f"the task was {now} before it could be cancelled",
                    task_id,
                    (*seen, now),
                )
            return CancelProbe(
                "ignored",
                f"cancel_task failed ({type(exc).__name__}: {exc}) while the task was {now}",
                task_id,
                (*seen, now),
            )
        loop = asyncio.get_running_loop()
        until = loop.time() + grace
        while seen[-1] not in FINAL and loop.time() < until:
            await asyncio.sleep(0.1)
            seen.append(
                state_name((await client.get_task(GetTaskRequest(id=task_id))).status.state)
            )
    final = seen[-1]
    if final == "canceled":
        return CancelProbe("ended", "the task reached canceled", task_id, tuple(seen))
    if final in FINAL:
        detail = f"the agent accepted cancel_task but the task went on to {final}"
    else:
        detail = f"the task is still {final} {grace:g}s after cancel_task"
    return CancelProbe("ignored", detail, task_id, tuple(seen))
