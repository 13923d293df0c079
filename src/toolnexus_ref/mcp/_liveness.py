"""Liveness probes of one server, shared by everyone who asks at about the same time.

A live check asks whether a server still answers after it cancelled a call, once
per tool (``ServerConnection.probe``). Every caller that asks while a probe is on
its way shares the *next* one, which starts only after they asked (a request sent
before a caller's cancel proves nothing about it): tools explored at once send a
few requests between them, and a server that is slow to answer is asked once at a
time, not once per waiting tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

__all__ = ["SharedProbe"]


class SharedProbe:
    """One request answering every caller that asked before it started."""

    def __init__(self, request: Callable[[], Awaitable[object]]) -> None:
        self._request = request
        #: The request on its way, if any.
        self._running: asyncio.Task[None] | None = None
        #: The request the callers arriving now wait for: it starts once ``_running`` ends.
        self._next: asyncio.Task[None] | None = None
        #: Requests sent (a count for benchmarks and tests).
        self.sent = 0

    async def ask(self, timeout: float) -> None:
        """Return once a request begun after this call was answered; raise what it raised.

        ``TimeoutError`` after ``timeout`` seconds, and ``ConnectionError`` if the
        probes were cancelled (``cancel``); cancelling the caller cancels only its
        wait, never the request the others share.
        """
        if self._next is None:
            self._next = asyncio.ensure_future(self._after(self._running))
            self._next.add_done_callback(_retrieve)
        shared = self._next
        await asyncio.wait({shared}, timeout=timeout)
        if not shared.done():
            raise TimeoutError
        if shared.cancelled():
            raise ConnectionError("the connection closed while its liveness was asked")
        shared.result()

    async def _after(self, previous: asyncio.Task[None] | None) -> None:
        if previous is not None and not previous.done():
            await asyncio.wait({previous})
        me = asyncio.current_task()
        if self._next is me:
            self._next = None  # whoever asks from now on waits for the request after this
        self._running = me
        self.sent += 1
        await self._request()

    def cancel(self) -> None:
        """Stop the requests on their way (the connection is closing or restarting)."""
        for task in (self._running, self._next):
            if task is not None and not task.done():
                task.cancel()
        self._running = self._next = None


def _retrieve(task: asyncio.Task[None]) -> None:
    """Mark a request's failure as seen: its callers may all have stopped waiting."""
    if not task.cancelled():
        task.exception()
