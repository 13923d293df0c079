"""The bounded call harness: every outcome captured, nothing waited on past its bound."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance.live._calls import CallOutcome, call_once, describe, scratch_cwd, show

from toolnexus_ref import ToolContext, ToolResult


class _Sync:
    name = "sync"

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def execute(self, args: Any, ctx: Any = None) -> Any:
        return self.fn()


class _Async:
    name = "async"

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        return self.fn()


def _call(tool: Any, timeout: float = 2.0) -> CallOutcome:
    return asyncio.run(call_once(tool, {}, ToolContext(), timeout=timeout))


def _exit() -> None:
    sys.exit(4)


def _interrupt() -> None:
    raise KeyboardInterrupt("tool")


@pytest.mark.parametrize("wrap", [_Sync, _Async])
@pytest.mark.parametrize("fn", [_exit, _interrupt], ids=["SystemExit", "KeyboardInterrupt"])
def test_base_exceptions_are_outcomes_not_the_end_of_the_run(wrap: Any, fn: Any) -> None:
    outcome = _call(wrap(fn))
    assert outcome.returned is False
    assert not outcome.timed_out
    assert isinstance(outcome.error, SystemExit | KeyboardInterrupt)
    # the loop is still usable afterwards: the exception did not escape the task
    assert _call(wrap(lambda: ToolResult.ok("after"))).value == ToolResult.ok("after")


def test_the_raw_value_comes_back_exactly() -> None:
    marker = object()
    outcome = _call(_Sync(lambda: marker))
    assert outcome.returned
    assert outcome.value is marker
    assert outcome.ended is not None


def test_a_hanging_sync_call_times_out_and_its_context_is_cancelled() -> None:
    ctx = ToolContext()
    tool = _Sync(lambda: time.sleep(60))
    started = time.monotonic()
    outcome = asyncio.run(call_once(tool, {}, ctx, timeout=0.2))
    assert outcome.timed_out
    assert outcome.error is None
    assert time.monotonic() - started < 5.0  # bound + unwind, never the tool's 60 s
    assert ctx.is_cancelled()


def test_huge_values_are_clipped_in_messages() -> None:
    text = "x" * 20_000_000
    assert len(describe(text)) < 400
    assert "20,000,000 characters" in describe(text)
    assert len(describe(ToolResult.ok(text))) < 1000
    assert len(show(CallOutcome({}, error=ValueError(text)))) < 400


def test_a_hostile_repr_is_described_not_raised() -> None:
    class Bad:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert "repr raised RuntimeError" in describe(Bad())


def test_scratch_cwd_is_fresh_restored_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with scratch_cwd() as scratch:
        assert Path.cwd() == scratch.resolve() != tmp_path
        Path("made.txt").write_text("x")
    assert Path.cwd() == tmp_path
    assert not scratch.exists()
    assert list(tmp_path.iterdir()) == []


def test_scratch_cwd_is_restored_when_the_body_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError), scratch_cwd():
        raise RuntimeError("boom")
    assert os.getcwd() == str(tmp_path)


def test_scratch_cwd_entered_on_two_threads_is_one_directory_left_by_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The working directory is the process's: a second exploration (another thread)
    entering while the first is in its scratch must not be taken back to the user's
    directory, nor have its scratch removed, when the first one ends."""
    monkeypatch.chdir(tmp_path)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, Path] = {}

    def first() -> None:
        with scratch_cwd() as scratch:
            seen["first"] = scratch
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with scratch_cwd() as scratch:
            seen["second"] = scratch
            second_in.set()
            first_out.wait(5)
            seen["after the first ended"] = Path.cwd()
            Path("written-late.txt").write_text("x")  # a tool of the second, still running

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen["first"] == seen["second"]
    assert seen["after the first ended"] == seen["first"].resolve()
    assert Path.cwd() == tmp_path
    assert not seen["first"].exists()
    assert list(tmp_path.iterdir()) == []


def test_a_tool_writing_a_file_leaves_the_working_directory_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[str] = []

    def write() -> ToolResult:
        seen.append(os.getcwd())
        Path("out.txt").write_text("written")
        return ToolResult.ok("ok")

    monkeypatch.chdir(tmp_path)
    assert _call(_Sync(write)).returned
    assert seen
    assert seen[0] != str(tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert not Path(seen[0]).exists()
