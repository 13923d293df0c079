"""Calling any tool, sync or async, ours or someone else's, with the contract's guarantees."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import queue
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from ._context import ToolContext
from ._result import ToolResult, coerce_result

__all__ = [
    "awaits_only",
    "call_tool",
    "cancelled_result",
    "execute_raw",
    "guard",
    "run_in_daemon_thread",
    "timeout_result",
]

T = TypeVar("T")

#: How long a cancelled async tool may take to unwind before we stop waiting for it.
UNWIND_GRACE = 0.5


def awaits_only(tool: object, owner: type, transport: object, *calls: str) -> bool:
    """Whether a call of ``tool``, an ``owner`` of ours, only awaits its endpoint.

    So it is over httpx's own transport with ``owner``'s own ``calls``: then no code
    but ours and httpx's runs on the event loop, as for an MCP call awaiting its
    server, and an exploration need not make it take turns with other tools. A
    custom transport (a mock's handler runs on the loop) or an overridden call may
    block the loop.
    """
    kind = type(tool)
    return transport is None and all(getattr(kind, c) is getattr(owner, c) for c in calls)


def cancelled_result(ctx: ToolContext | None) -> ToolResult:
    """The error result for a call ended by its context (cancel or deadline)."""
    if ctx is not None and ctx.deadline_exceeded:
        return timeout_result(None)
    reason = ctx.cancel_reason if ctx is not None else None
    return ToolResult.error(
        f"Cancelled: {reason or 'cancelled'}",
        {"cancelled": True, "error_type": "Cancelled"},
        retryable=False,
    )


def timeout_result(seconds: float | None) -> ToolResult:
    """The error result for a call that ran out of time; hosts may retry it."""
    text = "Timed out" if seconds is None else f"Timed out after {seconds:g}s"
    meta: dict[str, Any] = {"error_type": "TimeoutError"}
    if seconds is not None:
        meta["timeout"] = seconds
    return ToolResult.error(text, meta, retryable=True)


def exception_result(exc: BaseException) -> ToolResult:
    """An exception as the model should read it: its type and message."""
    message = str(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return ToolResult.error(text, {"error_type": type(exc).__name__})


class _DaemonThreads:
    """Daemon threads kept for a moment after their call, so the next call reuses one.

    Never an executor: executor threads are joined at interpreter exit, so one stuck
    tool would keep the whole process alive. A thread whose call never returns is
    simply never reused; an idle one exits after ``IDLE`` seconds.
    """

    IDLE = 5.0

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0

    def submit(self, job: Callable[[], None], name: str) -> None:
        with self._lock:
            reuse = self._idle > 0
            if reuse:
                self._idle -= 1
        if reuse:
            self._jobs.put(job)
        else:
            threading.Thread(target=self._serve, args=(job,), name=name, daemon=True).start()

    def _serve(self, job: Callable[[], None]) -> None:
        while True:
            job()
            with self._lock:
                self._idle += 1
            try:
                job = self._jobs.get(timeout=self.IDLE)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0 and self._jobs.empty():
                        self._idle -= 1
                        return
                job = self._jobs.get()  # a job was promised to this thread meanwhile


_THREADS = _DaemonThreads()


def run_in_daemon_thread(fn: Callable[[], T], *, name: str = "toolnexus-call") -> asyncio.Future[T]:
    """Run blocking ``fn`` in a daemon thread and return a future on the running loop.

    A daemon thread, not the loop's default executor: executor threads are joined at
    interpreter exit, so one stuck tool would keep the whole process alive.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    run = contextvars.copy_context().run

    def settle(setter: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            setter(value)

    def worker() -> None:
        threading.current_thread().name = name  # a reused thread says whose call it runs
        try:
            value = run(fn)
        except BaseException as exc:  # delivered to the awaiting task, not lost in the thread
            outcome: tuple[Callable[[Any], None], Any] = (future.set_exception, exc)
        else:
            outcome = (future.set_result, value)
        try:
            loop.call_soon_threadsafe(settle, *outcome)
        except RuntimeError:  # the loop is gone; nobody awaits this any more
            pass

    _THREADS.submit(worker, name)
    return future


async def guard(
    start: Callable[[ToolContext | None], Awaitable[T]],
    ctx: ToolContext | None,
    *,
    timeout: float | None = None,
) -> T | ToolResult:
    """Await ``start(ctx)`` unless the context is cancelled or the timeout passes first.

    ``timeout`` is one wall-clock budget for the whole call; the context given to
    ``start`` carries it as a deadline, so a cooperative tool can see it. When the
    context ends first, the work is cancelled (an async tool gets ``CancelledError``;
    a thread is abandoned, being a daemon) and an error result comes back at once.
    Cancelling the task that awaits ``guard`` propagates ``CancelledError``.
    """
    if ctx is not None and ctx.is_cancelled():
        return cancelled_result(ctx)
    if timeout is None:
        return await _race(start, ctx, None)
    bounded = ctx.child(timeout=timeout) if ctx is not None else ToolContext(timeout=timeout)
    try:
        return await _race(start, bounded, timeout)
    finally:
        bounded.detach()


async def _race(
    start: Callable[[ToolContext | None], Awaitable[T]],
    ctx: ToolContext | None,
    timeout: float | None,
) -> T | ToolResult:
    work = asyncio.ensure_future(_contain_exit(start(ctx)))
    if ctx is None:
        return _unwrap_exit(await work)
    watcher = asyncio.ensure_future(ctx.wait_cancelled())
    try:
        await asyncio.wait({work, watcher}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()
        watcher.cancel()
        raise
    if work.done():
        watcher.cancel()
        return _unwrap_exit(work.result())
    work.cancel()
    await asyncio.wait({work}, timeout=UNWIND_GRACE)
    if not work.done():  # a tool that swallows CancelledError: stop watching it
        work.add_done_callback(_consume)
    elif not work.cancelled() and work.exception() is None:
        return _unwrap_exit(work.result())  # it finished its work in the same instant
    else:
        _consume(work)
    if timeout is not None and ctx.deadline_exceeded:
        return timeout_result(timeout)
    return cancelled_result(ctx)


class _ToolExit:
    """A ``SystemExit`` raised by a tool, carried out of the task as a value.

    A task whose coroutine raises ``SystemExit`` re-raises it out of the event loop
    itself, ending ``asyncio.run`` before any caller could turn it into a result;
    carried as a value, it is re-raised in the awaiting coroutine instead.
    """

    __slots__ = ("exc",)

    def __init__(self, exc: SystemExit) -> None:
        self.exc = exc


async def _contain_exit(work: Awaitable[T]) -> T | _ToolExit:
    try:
        return await work
    except SystemExit as exc:
        return _ToolExit(exc)


def _unwrap_exit(value: T | _ToolExit) -> T:
    if isinstance(value, _ToolExit):
        raise value.exc
    return value


def _consume(task: asyncio.Future[Any]) -> None:
    if task.done() and not task.cancelled():
        task.exception()  # mark retrieved: no "exception was never retrieved" noise


#: ``accepts_context`` of each method's function: a method's signature is its
#: function's, whichever instance it is bound to, and reading it (tens of
#: microseconds) was paid on every call of a search.
_METHODS: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def accepts_context(execute: Callable[..., Any]) -> bool:
    """Whether ``execute`` takes a second argument (the context) besides ``args``."""
    function = execute.__func__ if inspect.ismethod(execute) else None
    if function is not None:
        try:
            return _METHODS[function]
        except (KeyError, TypeError):  # not known yet, or not a key a weak map can hold
            pass
    found = _accepts_context(execute)
    if function is not None:
        with contextlib.suppress(TypeError):
            _METHODS[function] = found
    return found


def _accepts_context(execute: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(execute).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (
        len(positional) >= 2
        or any(p.kind is p.VAR_POSITIONAL for p in params)
        or any(p.name == "ctx" for p in params)
    )


def _thread_name(tool: Any) -> str:
    """The call thread's name; a tool whose ``name`` raises (SystemExit too) is still called."""
    try:
        name = getattr(tool, "name", "tool")
    except BaseException:
        name = "tool"
    return f"toolnexus-{name if isinstance(name, str) else 'tool'}"


async def execute_raw(tool: Any, args: Mapping[str, Any], ctx: ToolContext | None = None) -> Any:
    """Call ``tool.execute`` and return exactly what it gave, exceptions included.

    A sync ``execute`` runs in a daemon thread so it can neither block the event loop
    nor, if it hangs, the interpreter's exit. The conformance suites use this to see
    what a tool really does; hosts use ``call_tool``.
    """
    execute = tool.execute
    call_args: tuple[Any, ...] = (args, ctx) if accepts_context(execute) else (args,)
    if inspect.iscoroutinefunction(execute):
        return await execute(*call_args)
    value = await run_in_daemon_thread(lambda: execute(*call_args), name=_thread_name(tool))
    if inspect.isawaitable(value):
        value = await value
    return value


async def call_tool(
    tool: Any,
    args: Mapping[str, Any],
    ctx: ToolContext | None = None,
    *,
    timeout: float | None = None,
) -> ToolResult:
    """Call any tool and always get a ``ToolResult``: the host's side of the contract.

    Works for sync and async ``execute``, duck-typed tools and results; an exception,
    a result of the wrong shape, a cancelled context or an expired timeout all come
    back as error results. Only cancelling the awaiting task raises.
    """
    try:
        raw = await guard(lambda c: execute_raw(tool, args, c), ctx, timeout=timeout)
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except BaseException as exc:
        return exception_result(exc)
    try:
        return coerce_result(raw)
    except TypeError as exc:
        return ToolResult.error(
            f"Tool returned a malformed result: {exc}", {"error_type": "TypeError"}
        )
