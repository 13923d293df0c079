"""``LineReader`` and ``StdoutNoise``: how a server's stdout becomes messages, within bounds."""

from __future__ import annotations

import pytest

from toolnexus_ref.mcp._framing import (
    MAX_NOISE_LINES,
    LineReader,
    LineTooLong,
    NotificationRate,
    StderrTail,
    StdoutNoise,
)


def test_lines_split_across_chunks_come_out_whole() -> None:
    reader = LineReader(limit=100)
    assert reader.feed(b'{"a"') == []
    assert reader.feed(b': 1}\n{"b": ') == [b'{"a": 1}']
    assert reader.pending == 6
    assert reader.feed(b"2}\n\n") == [b'{"b": 2}', b""]
    assert reader.pending == 0


def test_many_lines_in_one_chunk() -> None:
    reader = LineReader(limit=100)
    assert reader.feed(b"1\n2\n3\n4") == [b"1", b"2", b"3"]
    assert reader.feed(b"\n") == [b"4"]


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_a_line_that_never_ends_is_refused_at_the_limit(chunk: int) -> None:
    reader = LineReader(limit=10_000)

    def feed_forever() -> None:
        for _ in range(100_000):
            reader.feed(b"x" * chunk)

    with pytest.raises(LineTooLong) as info:
        feed_forever()
    assert 10_000 < info.value.args[0] <= 10_000 + chunk


def test_a_line_at_the_limit_is_kept() -> None:
    reader = LineReader(limit=10)
    assert reader.feed(b"x" * 10 + b"\n") == [b"x" * 10]
    with pytest.raises(LineTooLong):
        LineReader(limit=10).feed(b"x" * 11 + b"\n")


def test_noise_is_counted_sampled_and_bounded() -> None:
    noise = StdoutNoise()
    for index in range(MAX_NOISE_LINES):
        noise.record(f"log line {index} ".encode() + b"z" * 500)
    assert not noise.flooding
    assert len(noise.samples) == 3
    assert all(len(s) <= 123 for s in noise.samples)
    assert noise.describe().startswith(f"the server wrote {MAX_NOISE_LINES} lines (")
    noise.record(b"one more")
    assert noise.flooding


def test_notifications_past_the_limit_within_a_window_are_a_flood() -> None:
    rate = NotificationRate(limit=3, window=10.0)
    assert not any(rate.record(now) for now in (0.0, 1.0, 2.0))
    assert rate.record(3.0) == "more than 3 within 10s"
    fresh = NotificationRate(limit=3, window=10.0)
    assert not any(fresh.record(now) for now in (0.0, 1.0, 2.0, 12.5, 13.0, 14.0))


def test_notifications_past_the_limit_while_the_reader_is_behind_are_a_flood_at_any_pace() -> None:
    """A reader too slow for the window's pace still finds a server that stays ahead of it."""
    rate = NotificationRate(limit=3, window=1.0)
    slow = [10.0 * n for n in range(3)]  # one every ten seconds: no window holds two
    assert not any(rate.record(now, behind=True) for now in slow)
    assert rate.record(30.0, behind=True) == (
        "more than 3 in a row, each written before the kit had read the last"
    )


def test_a_reader_that_catches_up_begins_the_run_again() -> None:
    """Progress of a long call: the server was ahead now and then, never for long."""
    rate = NotificationRate(limit=3, window=1.0)
    for second in range(0, 300, 10):
        assert not any(rate.record(second + n, behind=True) for n in range(3))
        rate.caught_up()  # a read that found less than a full buffer
    paced = NotificationRate(limit=3, window=1.0)
    for second in range(0, 300, 10):
        assert not any(paced.record(second + n, behind=n != 1) for n in range(3))


def test_stderr_keeps_a_bounded_tail_and_marks_by_offset() -> None:
    tail = StderrTail(keep=100)
    tail.feed(b"early traceback\n")
    for index in range(1000):
        tail.feed(f"line {index}\n".encode())
    assert tail.total > 5000
    assert len(tail.text(1000)) <= 100
    assert tail.text(2) == "line 998\nline 999"
    fresh = StderrTail(keep=100)
    fresh.feed(b"early traceback\n")
    mark = fresh.total
    fresh.feed(b"fatal: the crash itself\n")
    assert fresh.text(20, since=mark) == "fatal: the crash itself"
    assert "early" in fresh.text(20)
