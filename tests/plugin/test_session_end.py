"""The session's end: one part that fails to close leaves no other part running."""

from __future__ import annotations

import warnings

import pytest

from pytest_toolnexus._session import _close_or_say


def test_a_close_that_raises_is_said_and_the_next_close_still_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    closed: list[str] = []

    def broken() -> None:
        raise OSError("the worker's socket is gone")

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under ``-W error``: nothing may raise here
        for name, close in (("first", broken), ("second", lambda: closed.append("second"))):
            _close_or_say(close, f"the worker of {name!r}")
    assert closed == ["second"]
    said = capsys.readouterr().err
    assert "closing the worker of 'first' failed" in said
    assert "the worker's socket is gone" in said
