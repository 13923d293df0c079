"""ToolContext across threads and the event loop: every wait here is bounded."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from toolnexus_ref import DEADLINE_EXCEEDED, ToolContext

#: Generous bound for "promptly": far above the expected milliseconds, far below a hang.
PROMPT = 2.0  # prompt against the waits' own bounds (PROMPT * 5), with room for a loaded machine


def test_cancel_from_another_thread_wakes_an_async_waiter_promptly() -> None:
    ctx = ToolContext()

    async def main() -> float:
        def canceller() -> None:
            time.sleep(0.05)
            ctx.cancel("stop")

        waiter = asyncio.ensure_future(ctx.wait_cancelled())
        await asyncio.sleep(0)
        threading.Thread(target=canceller, daemon=True).start()
        started = time.monotonic()
        await asyncio.wait_for(waiter, PROMPT * 5)
        return time.monotonic() - started

    elapsed = asyncio.run(main())
    assert elapsed < PROMPT
    assert ctx.is_cancelled()
    assert ctx.cancel_reason == "stop"


def test_async_waiter_returns_at_the_deadline_without_cancel() -> None:
    # Timed from the context's making, where its deadline starts: starting the event
    # loop can take most of the 50 ms on a busy machine.
    started = time.monotonic()
    ctx = ToolContext(timeout=0.05)

    async def main() -> None:
        await asyncio.wait_for(ctx.wait_cancelled(), PROMPT * 5)

    asyncio.run(main())
    elapsed = time.monotonic() - started
    assert 0.045 <= elapsed < PROMPT
    assert ctx.is_cancelled()


def test_wait_cancelled_returns_at_once_when_already_cancelled() -> None:
    ctx = ToolContext()
    ctx.cancel()
    asyncio.run(asyncio.wait_for(ctx.wait_cancelled(), PROMPT))


def test_a_passed_deadline_reads_as_cancelled_with_deadline_reason() -> None:
    ctx = ToolContext(timeout=0.02)
    before = (ctx.is_cancelled(), ctx.cancel_reason, ctx.remaining() is not None)
    assert before == (False, None, True)
    time.sleep(0.04)
    assert ctx.is_cancelled()
    assert ctx.expired()
    assert ctx.deadline_exceeded
    assert ctx.cancel_reason == DEADLINE_EXCEEDED
    assert ctx.remaining() == 0.0


def test_explicit_cancel_wins_over_a_later_deadline() -> None:
    ctx = ToolContext(timeout=0.02)
    ctx.cancel("user")
    time.sleep(0.04)
    assert ctx.cancel_reason == "user"
    assert not ctx.deadline_exceeded


def test_no_deadline_means_no_remaining() -> None:
    ctx = ToolContext()
    assert ctx.remaining() is None
    assert ctx.deadline is None
    assert not ctx.is_cancelled()


def test_negative_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="timeout must be >= 0"):
        ToolContext(timeout=-1)


def test_timeout_and_deadline_take_the_earlier() -> None:
    far = time.monotonic() + 100
    ctx = ToolContext(timeout=1, deadline=far)
    remaining = ctx.remaining()
    assert remaining is not None
    assert remaining <= 1


def race_cancels(threads: int) -> tuple[ToolContext, list[tuple[int, bool]], list[int]]:
    """Cancel one context from ``threads`` threads released at the same instant."""
    ctx = ToolContext()
    fired: list[int] = []
    ctx.on_cancel(lambda: fired.append(1))
    barrier = threading.Barrier(threads)
    returns: list[tuple[int, bool]] = []
    lock = threading.Lock()

    def cancel(i: int) -> None:
        barrier.wait(PROMPT * 5)
        won = ctx.cancel(f"reason-{i}")
        with lock:
            returns.append((i, won))

    workers = [threading.Thread(target=cancel, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(PROMPT * 5)
    return ctx, returns, fired


def test_concurrent_cancels_from_many_threads_keep_the_first_reason() -> None:
    for _ in range(20):
        ctx, returns, fired = race_cancels(16)
        winners = [i for i, won in returns if won]
        assert len(returns) == 16
        assert len(winners) == 1
        assert ctx.cancel_reason == f"reason-{winners[0]}"
        assert fired == [1]


def test_cancel_returns_true_then_false_and_keeps_the_first_reason() -> None:
    ctx = ToolContext()
    assert ctx.cancel("first") is True
    assert ctx.cancel("second") is False
    assert ctx.cancel_reason == "first"
    assert ToolContext().cancel() is True


def test_on_cancel_runs_once_late_registration_runs_now_unregister_works() -> None:
    ctx = ToolContext()
    calls: list[str] = []
    ctx.on_cancel(lambda: calls.append("a"))
    unregister = ctx.on_cancel(lambda: calls.append("b"))
    ctx.on_cancel(lambda: 1 / 0)  # a broken callback does not stop the others
    ctx.on_cancel(lambda: calls.append("c"))
    unregister()
    ctx.cancel()
    ctx.cancel()
    assert calls == ["a", "c"]
    ctx.on_cancel(lambda: calls.append("late"))
    assert calls == ["a", "c", "late"]


def test_deadline_does_not_fire_on_cancel_callbacks() -> None:
    ctx = ToolContext(timeout=0.01)
    calls: list[int] = []
    ctx.on_cancel(lambda: calls.append(1))
    time.sleep(0.03)
    assert ctx.is_cancelled()
    assert calls == []


def test_child_follows_parent_but_not_the_other_way() -> None:
    parent = ToolContext()
    child = parent.child()
    sibling = parent.child()
    child.cancel("child only")
    assert not parent.is_cancelled()
    assert not sibling.is_cancelled()
    parent.cancel("parent")
    assert sibling.is_cancelled()
    assert sibling.cancel_reason == "parent"
    assert child.cancel_reason == "child only"


def test_child_of_a_cancelled_parent_starts_cancelled() -> None:
    parent = ToolContext()
    parent.cancel("gone")
    assert parent.child().cancel_reason == "gone"


def test_child_deadline_is_the_earlier_and_answer_is_inherited() -> None:
    parent = ToolContext(timeout=100, answer={"yes": True})
    child = parent.child(timeout=0.01)
    assert child.answer == {"yes": True}
    time.sleep(0.03)
    assert child.is_cancelled()
    assert not parent.is_cancelled()
    tight = ToolContext(timeout=0.01)
    loose_child = tight.child(timeout=100)
    time.sleep(0.03)
    assert loose_child.is_cancelled()


def test_wait_in_a_thread_wakes_on_cancel_from_the_loop() -> None:
    ctx = ToolContext()
    outcome: list[tuple[bool, float]] = []

    def sync_tool() -> None:
        started = time.monotonic()
        outcome.append((ctx.wait(PROMPT * 5), time.monotonic() - started))

    async def main() -> None:
        thread = threading.Thread(target=sync_tool, daemon=True)
        thread.start()
        await asyncio.sleep(0.05)
        ctx.cancel("from the loop")
        await asyncio.to_thread(thread.join, PROMPT * 5)

    asyncio.run(main())
    assert outcome
    assert outcome[0][0] is True
    assert outcome[0][1] < PROMPT


def test_wait_with_timeout_returns_false_while_active_and_honours_deadline() -> None:
    ctx = ToolContext()
    started = time.monotonic()
    assert ctx.wait(0.02) is False
    assert time.monotonic() - started < PROMPT
    timed = ToolContext(timeout=0.02)
    started = time.monotonic()
    assert timed.wait(PROMPT * 5) is True
    assert time.monotonic() - started < PROMPT


def test_repr_says_the_state() -> None:
    ctx = ToolContext(timeout=10)
    assert "active" in repr(ctx)
    assert "remaining=" in repr(ctx)
    ctx.cancel("done")
    assert "cancelled='done'" in repr(ctx)
