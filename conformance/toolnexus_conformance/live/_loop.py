"""One event loop on a daemon thread, where targets live and live checks call tools.

MCP sessions and async factories are bound to the loop that created them, so every
call for a target must run on one loop. The loop's thread is a daemon: a tool that
blocks it (``time.sleep`` inside ``async def``) cannot keep the interpreter alive,
and a blocked loop is abandoned and replaced, never waited on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop", "LoopBlocked", "blocked_within"]

T = TypeVar("T")

#: How many probes ``BackgroundLoop.run`` posts per ``stall``: how soon past it a block is found.
PROBES_PER_STALL = 8


def blocked_within(stall: float) -> float:
    """The longest a block of the loop goes unfound by ``BackgroundLoop.run(stall=)``.

    A block starting just after a probe ran is met by the next probe, posted one beat
    later, which must then wait ``stall`` unrun, seen at the beat after that."""
    return stall * (1 + 2 / PROBES_PER_STALL)


class LoopBlocked(TimeoutError):
    """The loop did not finish a call in time: something blocks it or the call hangs."""


class BackgroundLoop:
    def __init__(self, name: str = "toolnexus-loop") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self.generation = 0

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()
                    # Stopped by ``close``: its selector and self-pipe go now, not to a
                    # ResourceWarning at the interpreter's exit.
                    try:
                        loop.run_until_complete(loop.shutdown_asyncgens())
                    finally:
                        loop.close()

                threading.Thread(target=serve, name=self._name, daemon=True).start()
                ready.wait()
                self._loop = loop
                self.generation += 1
            return self._loop

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._ensure()

    def run(
        self,
        coro: Coroutine[Any, Any, T],
        timeout: float | None = None,
        *,
        stall: float | None = None,
    ) -> T:
        """Run ``coro`` on the loop and wait for it, at most ``timeout`` seconds.

        On timeout the coroutine is cancelled; if the loop does not even process the
        cancellation within a second it is blocked, so it is abandoned and the next
        call gets a fresh loop. Either way ``LoopBlocked`` is raised. A
        ``KeyboardInterrupt`` in the waiting thread cancels ``coro`` too.

        With ``stall``, the loop is also probed while ``coro`` runs: a loop that runs
        no callback at all for ``stall`` seconds is blocked (``time.sleep`` inside an
        ``async def`` tool) and is abandoned at once, long before ``timeout``.
        """
        loop = self._ensure()
        # The future exists before the loop can start ``coro``: an interrupt that the
        # coroutine itself provokes (a signal sent the moment it starts) may land while
        # this thread is still submitting it, and must still find something to cancel.
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        try:
            loop.call_soon_threadsafe(_start, loop, coro, future)
            if stall is not None:
                return self._watch(loop, future, timeout, stall)
            try:
                return future.result(timeout)
            except concurrent.futures.TimeoutError:
                self._give_up(loop, future)
                raise LoopBlocked(f"no answer within {timeout:g}s") from None
        except KeyboardInterrupt:
            # The waiter was interrupted (Ctrl-C, SIGTERM): work nobody waits for must
            # not go on calling tools while the run cleans up around it.
            future.cancel()
            raise

    def _watch(
        self,
        loop: asyncio.AbstractEventLoop,
        future: concurrent.futures.Future[T],
        timeout: float | None,
        stall: float,
    ) -> T:
        # A probe is posted every eighth of ``stall``, and the loop is blocked once one
        # has waited ``stall`` unrun: a block is found at most a quarter of ``stall``
        # after ``stall`` has passed, not up to twice ``stall`` as with one probe per
        # bound. The watch of a tool's process (``process._isolation``) counts on it.
        beat = stall / PROBES_PER_STALL
        end = None if timeout is None else time.monotonic() + timeout
        posted = time.monotonic()
        probe = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop)
        while True:
            left = None if end is None else end - time.monotonic()
            wait = beat if left is None else max(0.0, min(beat, left))
            try:
                return future.result(wait)
            except concurrent.futures.TimeoutError:
                pass
            now = time.monotonic()
            if probe.done():
                posted = now
                probe = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop)
            elif now - posted >= stall:
                probe.cancel()
                future.cancel()
                self.abandon()
                raise LoopBlocked(
                    f"the event loop ran nothing for {stall:.2g}s: something blocks it"
                )
            if left is not None and left <= wait:
                self._give_up(loop, future)
                raise LoopBlocked(f"no answer within {timeout:g}s")

    def _give_up(
        self, loop: asyncio.AbstractEventLoop, future: concurrent.futures.Future[Any]
    ) -> None:
        future.cancel()
        probe = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop)
        try:
            probe.result(1.0)
        except concurrent.futures.TimeoutError:
            self.abandon()

    def abandon(self) -> None:
        """Forget the current loop (it is blocked); its daemon thread dies with the process."""
        with self._lock:
            self._loop = None

    def take_back(self, loop: asyncio.AbstractEventLoop, within: float) -> bool:
        """Make ``loop``, found blocked and abandoned, this one's again if it runs within
        ``within`` seconds and none has replaced it.

        Then it was only held: on a busy machine the scheduler can keep its thread from
        a core for longer than a bound. Whatever lives on it (MCP sessions, a target's
        async objects) goes on serving from it; a loop still blocked stays abandoned.
        """
        if loop.is_closed():
            return False
        probe = asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop)
        try:
            probe.result(within)
        except concurrent.futures.TimeoutError:
            probe.cancel()
            return False
        with self._lock:
            if self._loop is None and not loop.is_closed():
                self._loop = loop
            return self._loop is loop

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None or loop.is_closed():
            return

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=timeout)

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout + 1)
        except (concurrent.futures.TimeoutError, RuntimeError):
            return  # blocked: leave it to die with the process
        loop.call_soon_threadsafe(loop.stop)


def _start(
    loop: asyncio.AbstractEventLoop,
    coro: Coroutine[Any, Any, T],
    future: concurrent.futures.Future[T],
) -> None:
    """Run ``coro`` as a task whose outcome is ``future``'s, as ``run_coroutine_threadsafe`` does.

    ``future`` stays pending while the task runs, so cancelling it cancels the task.
    """
    if future.cancelled():
        coro.close()  # cancelled before it started: it never runs
        return
    task = loop.create_task(coro)

    def settle(done: asyncio.Task[T]) -> None:
        if done.cancelled():
            future.cancel()
        elif future.set_running_or_notify_cancel():
            exc = done.exception()
            if exc is not None:
                future.set_exception(exc)
            else:
                future.set_result(done.result())

    def cancel_task(done: concurrent.futures.Future[T]) -> None:
        if done.cancelled():
            loop.call_soon_threadsafe(task.cancel)

    task.add_done_callback(settle)
    future.add_done_callback(cancel_task)
