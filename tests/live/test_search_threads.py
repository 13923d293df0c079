"""A search thread has hypothesis's per-thread random generator without walking the heap.

Hypothesis registers that generator at a thread's first search with ``gc.collect()``
and ``gc.get_referrers()``: in a test process that imported a few frameworks, a second
or more per thread. The search threads are given theirs unregistered.
"""

from __future__ import annotations

import asyncio
import gc
import threading
from typing import Any

import pytest
from toolnexus_conformance.live._workers import SearchWorkers


def test_a_new_search_thread_searches_without_walking_the_heap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walks: list[tuple[str, str]] = []
    for name in ("collect", "get_referrers"):
        real = getattr(gc, name)

        def spy(*args: Any, _name: str = name, _real: Any = real) -> Any:
            walks.append((threading.current_thread().name, _name))
            return _real(*args)

        monkeypatch.setattr(gc, name, spy)
    workers = SearchWorkers(1, name="toolnexus-heap-test")

    def first_search() -> tuple[str, Any]:
        from hypothesis.core import threadlocal
        from hypothesis.internal.entropy import deterministic_PRNG

        with deterministic_PRNG():  # what hypothesis enters for every example it runs
            pass
        return threading.current_thread().name, threadlocal._hypothesis_global_random

    async def run() -> tuple[str, Any]:
        return await workers.run(first_search)

    thread, generator = asyncio.run(run())
    assert generator is not None, "the thread has its generator"
    assert [name for who, name in walks if who == thread] == [], "a walk of the heap"

    # A thread that is not the kit's still registers its generator as hypothesis does:
    # the spy sees those walks, so their absence above is the workers' doing.
    def other() -> None:
        from hypothesis.internal.entropy import deterministic_PRNG

        with deterministic_PRNG():
            pass

    plain = threading.Thread(target=other, name="toolnexus-plain-thread")
    plain.start()
    plain.join(timeout=30)
    assert ("toolnexus-plain-thread", "collect") in walks


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


#: A fresh interpreter: a warm-up under way (the import turn held), then a new search thread.
WAITS_FOR_THE_WARM = """
import asyncio, sys
from toolnexus_conformance._imports import IMPORTS
from toolnexus_conformance.live._workers import SearchWorkers

assert "hypothesis" not in sys.modules, "hypothesis was imported before the test began"


async def main():
    workers = SearchWorkers(1)
    with IMPORTS:
        job = workers.run(lambda: "hypothesis.core" in sys.modules)
        await asyncio.sleep(0.5)
        during = "hypothesis.core" in sys.modules
    after = await asyncio.wait_for(job, 60)
    print("DURING", during, "AFTER", after)


asyncio.run(main())
"""


def test_a_new_search_thread_imports_hypothesis_only_after_the_warm_up() -> None:
    """Two threads importing hypothesis's modules at once can each hold a module the other
    needs; Python then hands one a half-imported module, and a search run with it fails
    ("module 'hypothesis' has no attribute 'core'"). A new search thread takes its
    generator from hypothesis only once the warm-up, which imports it, is done."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", WAITS_FOR_THE_WARM], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["DURING", "False", "AFTER", "True"], done.stdout
