"""What collection made is frozen out of the collector's passes while the items run, and only then."""

from __future__ import annotations

import gc

import pytest

from pytest_toolnexus._heap import HeapFreeze

FROZEN_PROBE = """
import gc

def pytest_collection_finish(session):
    session.config.frozen_after_collection = gc.get_freeze_count()

import pytest

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    print(f"frozen after collection: {config.frozen_after_collection > 0}")
    # The last unconfigure hook: pytest's own full collection (unraisableexception),
    # which runs before it, found the heap still frozen.
    print(f"frozen at the last unconfigure: {gc.get_freeze_count() > 0}")
"""


def test_a_freeze_is_undone_by_its_thaw_and_another_freeze_is_left_alone() -> None:
    assert gc.get_freeze_count() == 0
    heap, another = HeapFreeze(), HeapFreeze()
    try:
        assert heap.freeze()
        assert gc.get_freeze_count() > 0
        assert not another.freeze()  # already frozen: not ours to undo
        another.thaw()
        assert gc.get_freeze_count() > 0
    finally:
        heap.thaw()
    assert gc.get_freeze_count() == 0
    gc.disable()
    try:
        assert not HeapFreeze().freeze()
    finally:
        gc.enable()
    assert gc.get_freeze_count() == 0


def test_a_session_freezes_after_collection_and_thaws_after_pytests_own_collections(
    tools_module: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _pytest import unraisableexception

    # pytest collects in full twice as a session ends: in its unconfigure hook and in
    # the cleanup its configure hook registered. Both must find the heap still frozen.
    walks: list[bool] = []
    real = unraisableexception.gc_collect_harder

    def spy(iterations: int) -> None:
        walks.append(gc.get_freeze_count() > 0)
        real(iterations)

    monkeypatch.setattr(unraisableexception, "gc_collect_harder", spy)
    tools_module.makeconftest(FROZEN_PROBE)
    result = tools_module.runpytest(
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-execute",
        "none",
        "--toolnexus-target",
        "mytools:good",
        "-s",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["frozen after collection: True", "frozen at the last unconfigure: True"]
    )
    assert walks == [True, True], "a full collection walked the whole heap"
    assert gc.get_freeze_count() == 0  # the in-process session gave everything back
