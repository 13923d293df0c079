"""The SIGTERM handler itself, in this process: whom it replaces, what it raises, what it restores."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_toolnexus._interrupts import InterruptGuard

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture
def default_sigterm() -> Iterator[None]:
    """SIGTERM at its default for the test, and whatever it was put back afterwards."""
    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.mark.usefixtures("default_sigterm")
def test_sigterm_raises_keyboard_interrupt_once_installed() -> None:
    guard = InterruptGuard()
    assert guard.install()
    try:
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            signal.raise_signal(signal.SIGTERM)
        assert guard.received == "SIGTERM"
        with pytest.raises(KeyboardInterrupt):  # every time, as Ctrl-C does
            signal.raise_signal(signal.SIGTERM)
    finally:
        guard.restore()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.usefixtures("default_sigterm")
def test_a_sigterm_while_holding_is_noted_not_raised() -> None:
    guard = InterruptGuard()
    assert guard.install()
    try:
        with guard.holding():
            signal.raise_signal(signal.SIGTERM)
        assert guard.held
        assert guard.received == "SIGTERM"
    finally:
        guard.restore()


@pytest.mark.usefixtures("default_sigterm")
def test_a_handler_of_the_projects_is_never_replaced() -> None:
    def theirs(signum: int, frame: Any) -> None:
        pass

    signal.signal(signal.SIGTERM, theirs)
    guard = InterruptGuard()
    assert not guard.install()
    guard.restore()
    assert signal.getsignal(signal.SIGTERM) is theirs


@pytest.mark.usefixtures("default_sigterm")
def test_an_ignored_sigterm_stays_ignored() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    assert not InterruptGuard().install()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


@pytest.mark.usefixtures("default_sigterm")
def test_restore_leaves_a_handler_installed_after_ours_alone() -> None:
    def later(signum: int, frame: Any) -> None:
        pass

    guard = InterruptGuard()
    assert guard.install()
    signal.signal(signal.SIGTERM, later)
    guard.restore()
    assert signal.getsignal(signal.SIGTERM) is later


@pytest.mark.usefixtures("default_sigterm")
def test_nothing_is_installed_from_another_thread() -> None:
    installed: list[bool] = []
    thread = threading.Thread(target=lambda: installed.append(InterruptGuard().install()))
    thread.start()
    thread.join()
    assert installed == [False]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_conformance_run_restores_the_default_at_unconfigure(
    pytester: pytest.Pytester, default_sigterm: None
) -> None:
    pytester.makeconftest(
        """
import signal
from pathlib import Path

from toolnexus_ref import tool


@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


def pytest_toolnexus_targets(config):
    return [add]


def pytest_sessionfinish(session):
    handler = signal.getsignal(signal.SIGTERM)
    owner = getattr(handler, "__self__", handler)
    (Path(__file__).parent / "during.txt").write_text(type(owner).__name__)
"""
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-only",
        "--toolnexus-select", "TN1",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / "during.txt").read_text() == "InterruptGuard"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


@pytest.mark.parametrize("full", [False, True], ids=["short", "full-trace"])
def test_an_interrupt_is_rendered_from_the_frame_it_landed_in(
    pytester: pytest.Pytester, full: bool
) -> None:
    pytester.makeconftest(
        """
from pathlib import Path

import pytest
from toolnexus_ref import tool


@tool
def add(a: int, b: int) -> int:
    '''Add two integers.'''
    return a + b


def pytest_toolnexus_targets(config):
    return [add]


def pytest_runtest_call(item):
    raise KeyboardInterrupt


@pytest.hookimpl(trylast=True)
def pytest_keyboard_interrupt(excinfo):
    (Path(__file__).parent / "frames.txt").write_text(str(len(excinfo.traceback)))
"""
    )
    args = ["-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-only"]
    result = pytester.runpytest(
        *args, "--toolnexus-select", "TN101", *(["--full-trace"] if full else []),
        no_reraise_ctrlc=True,
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*conftest.py:*: KeyboardInterrupt"])
    frames = int((pytester.path / "frames.txt").read_text())
    assert (frames > 1) if full else (frames == 1)
