"""An interrupted wait on the background loop cancels the work it was waiting for."""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from toolnexus_conformance.live._loop import BackgroundLoop

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture
def sigusr1_interrupts() -> Iterator[None]:
    """SIGUSR1 raises KeyboardInterrupt in the main thread, as Ctrl-C does."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGUSR1, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR1, before)


@pytest.mark.usefixtures("sigusr1_interrupts")
@pytest.mark.parametrize("stall", [None, 5.0], ids=["plain", "watched"])
def test_an_interrupt_while_waiting_cancels_the_coroutine(stall: float | None) -> None:
    loop = BackgroundLoop()
    cancelled = threading.Event()

    async def work() -> None:
        # Sent from the loop's thread to the main thread, which waits by now.
        main = threading.main_thread().ident
        assert main is not None
        signal.pthread_kill(main, signal.SIGUSR1)
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run(work(), timeout=60, stall=stall)
        assert cancelled.wait(30)
    finally:
        loop.close()


def test_a_closed_loop_releases_its_selector() -> None:
    """``close`` stops the loop and closes it on its own thread (no unclosed-loop warning)."""
    import asyncio
    import time

    loop = BackgroundLoop()

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert loop.run(answer(), timeout=5) == 42
    inner = loop._loop
    assert inner is not None
    loop.close()
    deadline = time.monotonic() + 5
    while not inner.is_closed() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert inner.is_closed()
    assert loop.run(answer(), timeout=5) == 42  # a new loop, as after any close
    loop.close()
