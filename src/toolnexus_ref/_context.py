"""Cooperative cancellation and deadlines shared by the host, the tool and its threads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["DEADLINE_EXCEEDED", "ToolContext"]

#: The ``cancel_reason`` of a context whose deadline passed.
DEADLINE_EXCEEDED = "deadline exceeded"


class ToolContext:
    """A cancellation token with an optional deadline, usable from any thread or event loop.

    The host owns it: ``cancel()`` may be called from another thread (a UI, a signal
    handler) while an async tool awaits ``wait_cancelled()`` on the event loop or a
    sync tool polls ``is_cancelled()`` in a worker thread. A context whose deadline
    has passed reads as cancelled, so a tool needs to watch only one thing.

    Deadlines use ``time.monotonic()``. ``answer`` carries the reply to a suspended
    call (a tool that asked the user something and is being resumed).
    """

    __slots__ = ("_callbacks", "_deadline", "_detach", "_event", "_lock", "_reason", "answer")

    def __init__(
        self,
        *,
        timeout: float | None = None,
        deadline: float | None = None,
        answer: Any = None,
    ) -> None:
        if timeout is not None:
            if timeout < 0:
                raise ValueError(f"timeout must be >= 0, got {timeout!r}")
            by_timeout = time.monotonic() + timeout
            deadline = by_timeout if deadline is None else min(deadline, by_timeout)
        self._deadline = deadline
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._reason: str | None = None
        self._callbacks: list[Callable[[], object]] = []
        self._detach: Callable[[], None] | None = None
        self.answer = answer

    def __repr__(self) -> str:
        state = f"cancelled={self.cancel_reason!r}" if self.is_cancelled() else "active"
        remaining = self.remaining()
        left = "" if remaining is None else f", remaining={remaining:.3f}s"
        return f"<ToolContext {state}{left}>"

    # -- deadline -----------------------------------------------------------------
    @property
    def deadline(self) -> float | None:
        """The ``time.monotonic()`` instant after which the call counts as cancelled."""
        return self._deadline

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative); ``None`` without a deadline."""
        if self._deadline is None:
            return None
        return max(0.0, self._deadline - time.monotonic())

    def expired(self) -> bool:
        return self._deadline is not None and time.monotonic() >= self._deadline

    # -- cancellation ---------------------------------------------------------------
    def is_cancelled(self) -> bool:
        return self._event.is_set() or self.expired()

    @property
    def cancel_reason(self) -> str | None:
        """Why the context reads as cancelled, or ``None`` while it is active."""
        if self._event.is_set():
            return self._reason
        if self.expired():
            return DEADLINE_EXCEEDED
        return None

    @property
    def deadline_exceeded(self) -> bool:
        """True when the context ended by its deadline rather than by ``cancel()``."""
        return not self._event.is_set() and self.expired()

    def cancel(self, reason: str | None = None) -> bool:
        """Cancel the call; safe from any thread, and idempotent.

        Returns ``True`` for the call that cancelled, ``False`` when it was already
        cancelled (the first reason is kept).
        """
        with self._lock:
            if self._event.is_set():
                return False
            self._reason = reason or "cancelled"
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            try:
                callback()
            except Exception:  # a listener's bug must not stop the others hearing
                pass
        return True

    def on_cancel(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Run ``callback`` once when ``cancel()`` is called (now, if it already was).

        Deadlines do not fire callbacks: a waiter that cares about the deadline uses
        ``wait`` or ``wait_cancelled``, which return at whichever comes first.
        Returns a function that unregisters the callback.
        """
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def unregister() -> None:
                    with self._lock:
                        if callback in self._callbacks:
                            self._callbacks.remove(callback)

                return unregister
        callback()
        return lambda: None

    def wait(self, timeout: float | None = None) -> bool:
        """Block the calling thread until cancelled, the deadline, or ``timeout``.

        Returns whether the context is cancelled. Meant for sync tools in threads;
        never call it on an event loop.
        """
        limits = [t for t in (timeout, self.remaining()) if t is not None]
        self._event.wait(min(limits) if limits else None)
        return self.is_cancelled()

    async def wait_cancelled(self) -> None:
        """Return once the context is cancelled or its deadline passes.

        Wakes promptly when ``cancel()`` is called from another thread.
        """
        if self.is_cancelled():
            return
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(_resolve, woken)
            except RuntimeError:  # the loop closed: nobody is waiting any more
                pass

        unregister = self.on_cancel(wake)
        try:
            remaining = self.remaining()
            if remaining is None:
                await woken
            else:
                try:
                    await asyncio.wait_for(woken, remaining)
                except TimeoutError:
                    pass
        finally:
            unregister()

    def child(self, *, timeout: float | None = None) -> ToolContext:
        """A context cancelled with this one, whose deadline is the earlier of both."""
        derived = ToolContext(timeout=timeout, deadline=self._deadline, answer=self.answer)
        derived._detach = self.on_cancel(lambda: derived.cancel(self._reason))
        derived.on_cancel(derived.detach)
        return derived

    def detach(self) -> None:
        """Stop following the parent (a child whose call is over), so a long-lived
        parent does not keep a callback for every call it ever made."""
        detach, self._detach = self._detach, None
        if detach is not None:
            detach()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
