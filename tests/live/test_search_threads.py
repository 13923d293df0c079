"""A search thread makes hypothesis's per-thread random generator without walking the heap.

Hypothesis registers that generator at a thread's first search with ``gc.collect()``
and ``gc.get_referrers()``: in a test process that imported a few frameworks, a second
or more per thread. The search threads do it once each, with the heap frozen.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
from toolnexus_conformance.live._workers import SearchWorkers


def test_a_new_search_thread_registers_its_random_with_the_heap_frozen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0, "the suite's process freezes nothing"
    walks: list[tuple[str, int]] = []
    collect = gc.collect

    def spy(*args: Any) -> int:
        walks.append((threading.current_thread().name, gc.get_freeze_count()))
        return collect(*args)

    monkeypatch.setattr(gc, "collect", spy)
    workers = SearchWorkers(1, name="toolnexus-heap-test")

    def first_search() -> str:
        from hypothesis.internal.entropy import deterministic_PRNG

        with deterministic_PRNG():  # what hypothesis enters for every example it runs
            pass
        return threading.current_thread().name

    async def run() -> str:
        return await workers.run(first_search)

    thread = asyncio.run(run())
    mine = [frozen for name, frozen in walks if name == thread]
    assert mine, "hypothesis registers a new thread's generator with a gc.collect()"
    assert all(frozen > 0 for frozen in mine), "a walk of the whole heap"
    assert gc.get_freeze_count() == 0, "the freeze is given back"
