"""Which conformance items were meant to run and got no verdict, and why the run stopped.

A report that lists only what was judged looks complete when it is not: an
interrupted run, a crashed xdist worker or ``-x`` leave items without a verdict,
and without this ledger nothing says so. It compares the items meant to run (the
final ``session.items`` after deselection; under xdist, the ids each worker
collected) with the items whose report carried a verdict record, and remembers
what interrupted the run. The report, the terminal section and the exit status
are read from it.

Imports only the standard library and pytest: items are told apart by their node
id (``toolnexus:`` ...), which survives xdist's serialisation, not by their class.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from ._interrupts import InterruptGuard
from ._items import records_of

__all__ = ["ITEM_PREFIX", "Completeness", "RunState"]

#: Every conformance item's node id starts with this (``toolnexus:<target>::...``).
ITEM_PREFIX = "toolnexus:"
#: How many not-judged items the terminal names before it says "and N more".
SHOWN = 20


@dataclass(frozen=True, slots=True)
class RunState:
    """What the report says about the run as a whole."""

    complete: bool
    interrupted: str | None
    not_judged: list[str]

    def as_report(self) -> dict[str, Any]:
        """The keyword arguments of ``Records.write_report``."""
        return {
            "complete": self.complete,
            "interrupted": self.interrupted,
            "not_judged": self.not_judged,
        }


class Completeness:
    """A pytest plugin object on the process that reports (serial, or xdist's controller)."""

    def __init__(self, config: pytest.Config, guard: InterruptGuard) -> None:
        self.config = config
        self.guard = guard
        option = config.option
        #: ``--collect-only``, ``--setup-only`` and ``--setup-plan`` run no check at all.
        self.runs_checks = not (
            getattr(option, "collectonly", False)
            or getattr(option, "setuponly", False)
            or getattr(option, "setupplan", False)
        )
        self._expected: dict[str, None] = {}  # ordered: the order items were collected in
        self._collected = False
        self._modified = False
        self._judged: set[str] = set()
        #: Skipped before they ran (by a hook of the project's): not meant to run.
        self._excused: set[str] = set()
        self._reasons: list[str] = []
        self._stopped: str | None = None
        #: The exit status was turned from OK to failed because items went unjudged.
        self.failed_run = False

    # -- what was meant to run -------------------------------------------------------
    def expect(self, nodeids: Iterable[str]) -> None:
        self._collected = True
        for nodeid in nodeids:
            if nodeid.startswith(ITEM_PREFIX):
                self._expected.setdefault(nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self) -> None:
        self._modified = True  # every hook that adds or deselects items has run

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Serial runs: ``session.items`` is final here, after ``-k`` and ``--deselect``.

        pytest calls this from a ``finally``, after an interrupted collection too;
        its items are then not the run's, and the run was never collected.
        """
        if self._modified:
            self.expect(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        """xdist's controller collects nothing; each worker sends the ids it would run."""
        self.expect(ids)

    # -- what was judged -------------------------------------------------------------
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.nodeid.startswith(ITEM_PREFIX):
            return
        if report.when == "call":
            if records_of(report):
                self._judged.add(report.nodeid)
        elif report.when == "setup" and report.skipped:
            self._excused.add(report.nodeid)

    # -- what stopped the run --------------------------------------------------------
    def note(self, reason: str) -> None:
        if reason not in self._reasons:
            self._reasons.append(reason)

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        if self.guard.received is not None:
            self.note(self.guard.received)
        elif not (self._reasons and type(excinfo.value).__module__.startswith("xdist")):
            # xdist's own Interrupted follows a worker's interrupt or crash, said already.
            self.note(_describe(excinfo))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        if error is None:
            return
        worker = getattr(getattr(node, "gateway", None), "id", None) or str(node)
        if error == "keyboard-interrupt":
            self.note(f"an xdist worker was interrupted: {worker}")
        else:
            self.note(f"an xdist worker crashed: {worker}")

    # -- the verdict on the run ------------------------------------------------------
    def state(self) -> RunState:
        reasons = list(self._reasons)
        if self.guard.received is not None and self.guard.received not in reasons:
            reasons.insert(0, self.guard.received)
        interrupted = "; ".join(reasons) or None
        not_judged = self.not_judged()
        return RunState(
            complete=interrupted is None and not not_judged,
            interrupted=interrupted,
            not_judged=not_judged,
        )

    def not_judged(self) -> list[str]:
        if not self.runs_checks:
            return []
        done = self._judged | self._excused
        return [nodeid for nodeid in self._expected if nodeid not in done]

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A run that could not judge every item it meant to is not green, whatever else passed."""
        stopped = session.shouldfail or session.shouldstop
        self._stopped = stopped if isinstance(stopped, str) and stopped else None
        if session.exitstatus != pytest.ExitCode.OK:
            return
        if self.state().interrupted is not None:
            # pytest sets INTERRUPTED after its own interrupt hooks; one that failed
            # (an error while rendering the interrupt) leaves the status at OK.
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        elif self.not_judged():
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.failed_run = True

    def lines(self) -> list[str]:
        """The terminal section's account of an incomplete run; empty for a complete one."""
        state = self.state()
        if state.complete:
            return []
        total = len(self._expected) if self.runs_checks else 0
        missing = len(state.not_judged)
        if state.interrupted is not None:
            head = f"INTERRUPTED ({state.interrupted})"
        elif self._stopped is not None:
            head = f"INCOMPLETE (pytest stopped early: {self._stopped})"
        else:
            head = "INCOMPLETE"
        if missing:
            head += (
                f": {missing} of {total} conformance items were not judged;"
                " the table and the report lack their verdicts"
            )
        elif not self._collected:
            head += " before the conformance items were collected: none was judged"
        else:
            head += ": every conformance item meant to run was judged"
        lines = [head]
        if self.failed_run:
            lines.append(
                "the exit status is 1 (tests failed): every item that ran passed, but a run"
                " that could not judge every conformance item it collected is not a pass"
            )
        if missing:
            lines.append("not judged:")
            lines.extend(f"  {nodeid}" for nodeid in state.not_judged[:SHOWN])
            if missing > SHOWN:
                lines.append(f"  and {missing - SHOWN} more")
        return lines


def _describe(excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """``KeyboardInterrupt``, ``pytest.exit: <reason>``, ``Interrupted: 1 error during collection``."""
    value = excinfo.value
    if isinstance(value, pytest.exit.Exception):
        return f"pytest.exit: {value.msg}" if value.msg else "pytest.exit"
    try:
        message = str(value)
    except Exception:
        message = ""
    return f"{excinfo.typename}: {message}" if message else excinfo.typename
