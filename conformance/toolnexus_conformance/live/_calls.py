"""One bounded call to a tool, whatever the tool does: return, raise, hang, exit or flood.

Every live check calls tools through ``call_once``. It captures exactly what came
back (the raw value, any ``BaseException`` including ``SystemExit``), never waits
past its bound, and runs the call inside a scratch working directory.

The working directory is process-wide state. An exploration changes it around its
calls and restores it in ``finally``; explorations on several threads at once share
one scratch directory (``scratch_cwd``). A sync tool abandoned after a
timeout keeps running in its daemon thread and would see the restored directory,
which is why timed-out tools are reported, not trusted. Only the working directory
changes: ``HOME`` and the environment stay as they are, because tools that read
credentials or config from them would otherwise fail for reasons of ours.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolnexus_ref import ToolContext, execute_raw

__all__ = [
    "CallOutcome",
    "blocked_before",
    "call_once",
    "capture",
    "describe",
    "describe_error",
    "scratch_cwd",
    "show",
]

#: How long a timed-out or cancelled call may take to unwind before it is abandoned.
UNWIND = 0.5
#: The most characters of any value shown in a message.
SHOWN = 300
#: Set in a worker process (``_worker``), where a tool runs in a process of its own.
IN_WORKER = False
#: Told ``("calling", args)`` and ``("called", args)`` around every call; a worker
#: process uses it to show its session which call was in flight if the tool ends it.
ON_CALL: Callable[[str, Any], None] | None = None


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What one call did. Exactly one of: a value came back, it raised, it timed out."""

    args: Any
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    #: The tool blocked the event loop in an earlier call; it was not called again.
    blocked_loop: bool = False
    elapsed: float = 0.0
    #: ``time.monotonic()`` when execute returned or raised (``None`` if it never did).
    ended: float | None = None
    #: What the tool's MCP server wrote on stderr while a call that timed out waited
    #: (``_probes.Env.call``): a driver retrying a connection says so there, and the
    #: call's own answer never came.
    said: str = ""

    @property
    def returned(self) -> bool:
        return not self.timed_out and self.error is None


def _clip(text: str, limit: int = SHOWN) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def describe(value: Any) -> str:
    """A short, safe text for any value: huge outputs and hostile ``__repr__`` stay harmless."""
    if isinstance(value, str):
        if len(value) <= SHOWN:
            return repr(value)
        return f"{value[:SHOWN]!r}... ({len(value):,} characters)"
    output = _safe_getattr(value, "output")
    if output is not None and _safe_getattr(value, "is_error") is not None:
        return (
            f"{type(value).__name__}(output={describe(output)}, "
            f"is_error={describe(_safe_getattr(value, 'is_error'))})"
        )
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<{type(value).__name__} whose repr raised {type(exc).__name__}>"
    return _clip(text)


def show(outcome: CallOutcome) -> str:
    """What came back from a call, in one short line."""
    if outcome.timed_out:
        return "no answer (timed out)"
    if outcome.error is not None:
        return f"raised {describe_error(outcome.error)}"
    return describe(outcome.value)


def describe_error(exc: BaseException) -> str:
    try:
        message = str(exc)
    except Exception:
        message = "<str() raised>"
    return _clip(f"{type(exc).__name__}: {message}" if message else type(exc).__name__)


def _safe_getattr(value: Any, name: str) -> Any:
    try:
        return getattr(value, name, None)
    except BaseException:  # a hostile property, SystemExit included
        return None


@dataclass(slots=True)
class _Scratch:
    """The scratch directory the process is in, and how many bodies are running in it."""

    path: Path
    previous: str
    owned: bool  # made for the run, so removed after it (not the user's ``root``)
    users: int = 1


#: The working directory is the process's, not a thread's: explorations on several
#: threads at once (``check_target`` called from threads) share one scratch directory.
_SCRATCH_LOCK = threading.Lock()
_SCRATCH: list[_Scratch] = []


@contextmanager
def scratch_cwd(root: Path | None = None) -> Iterator[Path]:
    """Run the body in a fresh directory (removed afterwards), or in ``root`` when given.

    A body that begins while another's scratch directory is current runs there too,
    whatever ``root`` it asked for, and the last body to end restores the directory
    the first one left. Each body changing it for itself would strand the others:
    one ending first would take them back to the user's directory (a tool's writes
    landing there) and remove theirs from under them.
    """
    with _SCRATCH_LOCK:
        if _SCRATCH:
            scratch = _SCRATCH[0]
            scratch.users += 1
        else:
            previous = os.getcwd()
            if root is None:
                path = Path(tempfile.mkdtemp(prefix="toolnexus-scratch-"))
            else:
                path = Path(root)
                path.mkdir(parents=True, exist_ok=True)
            os.chdir(path)
            scratch = _Scratch(path, previous, owned=root is None)
            _SCRATCH.append(scratch)
    try:
        yield scratch.path
    finally:
        with _SCRATCH_LOCK:
            scratch.users -= 1
            if scratch.users == 0:
                _SCRATCH.clear()
                os.chdir(scratch.previous)
                if scratch.owned:
                    shutil.rmtree(scratch.path, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class _Flight:
    tool: Any
    loop: asyncio.AbstractEventLoop
    until: float


#: Calls in progress. A call still here past its bound, made on another loop than
#: the running one, never reached its ``finally``: its tool blocked that loop's
#: thread (``time.sleep`` in an ``async def``) and the runner replaced the loop.
#: Such a tool is not called again: it would only block the new loop too.
_IN_FLIGHT: dict[int, _Flight] = {}
_ids = itertools.count()


def blocked_before(tool: Any) -> bool:
    """Whether an earlier call of ``tool`` blocked its event loop for good."""
    now = time.monotonic()
    try:
        current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    return any(
        f.tool is tool and f.loop is not current and now > f.until
        for f in list(_IN_FLIGHT.values())
    )


async def capture(tool: Any, args: Any, ctx: ToolContext | None) -> tuple[bool, Any, float]:
    """``(True, value, ended)`` or ``(False, exception, ended)``; no exception leaves here.

    ``SystemExit`` and ``KeyboardInterrupt`` must be caught inside the coroutine: an
    asyncio task re-raises them out of the event loop, which would end the loop's
    thread and with it every later check.
    """
    try:
        value = await execute_raw(tool, args, ctx)
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # we cancelled it: let it propagate
        return False, exc, time.monotonic()  # the tool raised CancelledError on its own
    except BaseException as exc:
        return False, exc, time.monotonic()
    return True, value, time.monotonic()


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def call_once(
    tool: Any,
    args: Mapping[str, Any] | Any,
    ctx: ToolContext | None,
    *,
    timeout: float,
    scratch: Path | bool | None = None,
) -> CallOutcome:
    """Call ``tool.execute(args, ctx)`` once, for at most ``timeout`` seconds.

    ``scratch``: ``None`` runs in a fresh scratch directory, a path runs there, and
    ``False`` leaves the working directory alone (the caller already set one up).
    On timeout the context is cancelled, the call is cancelled and given ``UNWIND``
    seconds, then abandoned (a sync tool's daemon thread dies with the process).
    """
    if blocked_before(tool):
        return CallOutcome(args, timed_out=True, blocked_loop=True)
    if scratch is False:
        return await _bounded(tool, args, ctx, timeout)
    with scratch_cwd(scratch if isinstance(scratch, Path) else None):
        return await _bounded(tool, args, ctx, timeout)


async def _bounded(tool: Any, args: Any, ctx: ToolContext | None, timeout: float) -> CallOutcome:
    key = next(_ids)
    started = time.monotonic()
    _IN_FLIGHT[key] = _Flight(tool, asyncio.get_running_loop(), started + timeout)
    watch = ON_CALL
    if watch is not None:
        watch("calling", args)
    try:
        task = asyncio.ensure_future(capture(tool, args, ctx))
        try:
            done, _ = await asyncio.wait({task}, timeout=timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            elapsed = time.monotonic() - started
            if task.cancelled():
                return CallOutcome(args, error=asyncio.CancelledError(), elapsed=elapsed)
            ok, payload, ended = task.result()
            if ok:
                return CallOutcome(args, value=payload, elapsed=elapsed, ended=ended)
            return CallOutcome(args, error=payload, elapsed=elapsed, ended=ended)
        if ctx is not None:
            ctx.cancel("the conformance call timed out")
        task.cancel()
        await asyncio.wait({task}, timeout=UNWIND)
        if not task.done():
            task.add_done_callback(_consume)
        else:
            _consume(task)
        return CallOutcome(args, timed_out=True, elapsed=time.monotonic() - started)
    finally:
        _IN_FLIGHT.pop(key, None)
        if watch is not None:
            watch("called", args)
