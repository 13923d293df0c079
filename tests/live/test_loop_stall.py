"""The background loop's watch: a blocked loop is found while it is blocked, a busy one never."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from toolnexus_conformance.live._loop import BackgroundLoop, LoopBlocked
from toolnexus_conformance.live._search import stretch


def test_a_block_is_found_while_it_lasts() -> None:
    """A coroutine that holds the loop's thread for 20 s, after a stretch of honest
    awaiting, is given up as blocked long before the hold ends."""
    loop = BackgroundLoop()
    began: list[float] = []

    async def blocks() -> None:
        for _ in range(20):
            await asyncio.sleep(0.01)
        began.append(time.monotonic())
        time.sleep(20)

    try:
        with pytest.raises(LoopBlocked, match=r"ran nothing for 0\.4s"):
            loop.run(blocks(), timeout=60, stall=0.4)
        assert began
        assert time.monotonic() - began[0] < 10
    finally:
        loop.close()


def test_a_loop_that_keeps_running_is_never_blocked() -> None:
    """Each await gives the probes their turn, however long the coroutine runs."""
    loop = BackgroundLoop()
    # Stretched by the load, as the explorations stretch theirs: on a loaded machine the
    # loop's thread can wait longer than 0.4 s for a core (the suite under -n 4 on two
    # cores, in a CI run on a fresh clone, found this loop "blocked").
    stall = 0.4 * stretch()

    async def busy() -> int:
        end = time.monotonic() + 2.5 * stall
        turns = 0
        while time.monotonic() < end:
            time.sleep(0.02)  # short holds, far below the bound
            await asyncio.sleep(0)
            turns += 1
        return turns

    try:
        assert loop.run(busy(), timeout=60, stall=stall) > 0
    finally:
        loop.close()


def test_a_held_loop_is_taken_back_once_it_runs_again_unless_another_replaced_it() -> None:
    """``take_back``: a loop whose thread is still held stays abandoned; one that runs
    again is this owner's loop again, but only while no fresh loop has taken its place."""
    owner = BackgroundLoop()
    held = owner.loop
    gate = threading.Event()
    held.call_soon_threadsafe(gate.wait, 30)
    owner.abandon()
    try:
        assert owner.take_back(held, 0.2) is False  # still held
        gate.set()
        assert owner.take_back(held, 10) is True
        assert owner.loop is held
        assert owner.generation == 1
        owner.abandon()
        fresh = owner.loop  # a fresh loop took its place
        assert owner.take_back(held, 10) is False
        assert owner.loop is fresh
    finally:
        gate.set()
        owner.close()
        if not held.is_closed():
            held.call_soon_threadsafe(held.stop)
