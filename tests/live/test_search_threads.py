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


def test_an_example_on_one_search_thread_reseeds_no_other_threads_generator() -> None:
    """Hypothesis reseeds and restores every registered generator around each example;
    one per search thread made that a sixth of a run. A search thread's own
    generator is its, and nobody else's example touches it."""
    from hypothesis.core import threadlocal
    from hypothesis.internal.entropy import RANDOMS_TO_MANAGE, deterministic_PRNG

    workers = SearchWorkers(3, name="toolnexus-reseed-test")
    started = threading.Barrier(3)

    def own() -> Any:
        started.wait(timeout=30)  # three jobs at once: three threads
        return threadlocal._hypothesis_global_random

    async def run() -> list[Any]:
        return list(await asyncio.gather(*(workers.run(own) for _ in range(3))))

    generators = asyncio.run(run())
    assert len({id(g) for g in generators}) == 3
    managed = [ref() for ref in RANDOMS_TO_MANAGE.data.values()]
    assert not any(g is m for g in generators for m in managed)
    states = [g.getstate() for g in generators]
    with deterministic_PRNG():  # an example, here
        assert [g.getstate() for g in generators] == states
    import random

    saved = random.getstate()
    random.seed(12345)  # not the state an example seeds (a session may leave that)
    try:
        before = random.getstate()
        with deterministic_PRNG():  # the random module's generator stays managed
            assert random.getstate() != before
        assert random.getstate() == before
    finally:
        random.setstate(saved)
