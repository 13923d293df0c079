"""SIGTERM ends a conformance run the way Ctrl-C does: cleaned up, reported, marked interrupted.

CI cancels a job with SIGTERM, and Python's default for it is to die on the spot:
no terminal summary, no report, scratch directories left in the temp dir, and MCP
servers (started in sessions of their own, so the signal never reaches them)
orphaned with every helper they started. Raising ``KeyboardInterrupt`` instead
hands the signal to the machinery pytest already has for Ctrl-C: the summary is
printed, ``pytest_sessionfinish`` writes the report, ``pytest_unconfigure`` closes
the targets, and every ``finally`` on the way runs.

Only a handler nobody chose is replaced (``SIG_DFL``, in the main thread, where
Python runs signal handlers); a project's own SIGTERM handler is left alone, and
the previous handler is put back at unconfigure. A SIGTERM that arrives while the
plugin is cleaning up (writing the report, closing targets, each step bounded) is
held rather than raised, so that it cannot cut short the very cleanup it asks
for; the run then ends with pytest's INTERRUPTED status unless it had already
failed. An interrupt, from SIGTERM or Ctrl-C, is rendered from the frame it
landed in (``InterruptGuard.pytest_keyboard_interrupt`` says why).

Imports only the standard library and pytest.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from types import FrameType

import pytest

__all__ = ["SIGTERM_NAME", "InterruptGuard"]

#: What the interrupt says about itself, in the report and in pytest's own banner.
SIGTERM_NAME = "SIGTERM"


class InterruptGuard:
    """A pytest plugin object: installs the SIGTERM handler, holds it during cleanup, restores
    it, and keeps an interrupt's rendering to the frame it landed in."""

    def __init__(self) -> None:
        #: ``"SIGTERM"`` once one was received (raised or held).
        self.received: str | None = None
        #: A SIGTERM arrived while cleaning up and was not raised.
        self.held = False
        self._holding = 0
        self._installed = False
        self._session: pytest.Session | None = None

    # -- the handler -----------------------------------------------------------------
    def install(self) -> bool:
        """Install the handler if nobody chose one; ``True`` when it is installed."""
        if self._installed:
            return True
        sigterm = getattr(signal, "SIGTERM", None)
        if sigterm is None or threading.current_thread() is not threading.main_thread():
            return False  # only the main thread may set a handler, and handlers run there
        if signal.getsignal(sigterm) is not signal.SIG_DFL:
            return False  # a handler of the project's (or SIG_IGN): theirs to keep
        signal.signal(sigterm, self._on_sigterm)
        self._installed = True
        return True

    def restore(self) -> None:
        """Put ``SIG_DFL`` back, unless someone replaced our handler since."""
        if not self._installed:
            return
        self._installed = False
        if signal.getsignal(signal.SIGTERM) == self._on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.received = SIGTERM_NAME
        if self._holding:
            self.held = True
            return
        # Raised every time, as Ctrl-C is: a first one swallowed by a tool's code in
        # the main thread must not make the process deaf to the next.
        raise KeyboardInterrupt(SIGTERM_NAME)

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Within the block a SIGTERM is noted (``held``), not raised."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1

    # -- pytest hooks ----------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._session = session

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Keep only the frames from the one the interrupt landed in, unless ``--full-trace``.

        pytest renders an interrupt's whole traceback, parsing the source of every
        frame, and without ``--full-trace`` shows only its last line. Tool
        explorations may still be parsing in other threads at that moment (hypothesis
        reads modules for constants), and CPython 3.11 keeps the ast module's
        recursion depth per interpreter, not per thread: the two together can fail
        with "SystemError: AST constructor recursion depth mismatch", which ends the
        run with a traceback instead of pytest's INTERRUPTED status. One frame is one
        parse, and what pytest shows is the same.
        """
        session = self._session
        if session is not None and session.config.option.fulltrace:
            return
        traceback = excinfo.traceback
        for index in range(len(traceback) - 1, -1, -1):
            if not traceback[index].ishidden(excinfo):
                excinfo.traceback = traceback[index:]
                return

    @pytest.hookimpl(wrapper=True)
    def pytest_unconfigure(self, config: pytest.Config) -> Generator[None, None, None]:
        """Hold SIGTERM while every plugin unconfigures (targets close here), then restore."""
        try:
            with self.holding():
                return (yield)
        finally:
            self.restore()
            session = self._session
            # Unconfigure runs before pytest returns the session's status, so a SIGTERM
            # held here still makes it INTERRUPTED, as it would have without the hold.
            if self.held and session is not None and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.INTERRUPTED
