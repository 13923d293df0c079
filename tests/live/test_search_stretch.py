"""The search's wall-clock budgets stretch with the machine's load, within bounds."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _slow_tools import ReadOnlySleepsOnValid, SleepsOnValid
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live import _contention, _explorations, _search

from toolnexus_ref import ToolResult


@pytest.mark.parametrize(
    ("load", "cores", "expected"),
    [(0.3, 2, 1.0), (2.0, 2, 1.0), (6.0, 2, 3.0), (45.0, 2, _search.MAX_STRETCH)],
)
def test_budgets_stretch_by_the_load_per_core(
    monkeypatch: pytest.MonkeyPatch, load: float, cores: int, expected: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert _search.stretch() == expected


def test_no_load_average_means_no_stretch(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert _search.stretch() == 1.0


@pytest.mark.parametrize(
    ("waited", "expected"),
    # a load of 8 per core, remembered by the load average, and what the CPUs say now
    [(0.0, 1.0), (0.5, 2.0), (0.75, 4.0), (1.0, 8.0), (None, 8.0)],
)
def test_search_budgets_stretch_no_more_than_the_cpus_are_contended_now(
    monkeypatch: pytest.MonkeyPatch, waited: float | None, expected: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (16.0, 16.0, 16.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_search, "cpu_waited", lambda: waited)
    assert _search.search_stretch() == pytest.approx(expected)


def test_a_quiet_load_average_is_not_raised_by_pressure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.setattr(_search, "cpu_waited", lambda: 1.0)
    assert _search.search_stretch() == 1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "some avg10=37.50 avg60=12.00 avg300=1.00 total=123\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            0.375,
        ),
        ("full avg10=5.00 avg60=0.00 avg300=0.00 total=0\n", None),  # no "some" line
        ("some avg60=1.00\n", None),  # no ten-second average
        ("some avg10=lots\n", None),
        ("", None),
    ],
)
def test_the_share_of_time_tasks_waited_is_read_from_the_pressure_file(
    tmp_path: Path, text: str, expected: float | None
) -> None:
    path = tmp_path / "cpu"
    path.write_text(text)
    assert _search.cpu_waited(path) == expected


def test_no_pressure_file_is_no_reading(tmp_path: Path) -> None:
    assert _search.cpu_waited(tmp_path / "absent") is None


#: A busy loop for a process of its own: what a tool that computes does to the CPU. It
#: says when it begins: its interpreter's start-up may wait on the disk as well as on a
#: CPU, and a spinner still starting leaves the other one the CPU.
SPIN = "print('spinning', flush=True)\nwhile True: pass"


def _spinning(cpu: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", SPIN], stdout=subprocess.PIPE)
    os.sched_setaffinity(process.pid, {cpu})
    return process


def _begun(process: subprocess.Popen[bytes]) -> None:
    assert process.stdout is not None
    process.stdout.readline()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs CPU affinity (Linux)")
def test_two_processes_sharing_one_cpu_each_wait_and_a_sleeping_one_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Read from the kernel: two busy processes held to one CPU wait for it about half
    the time each, so their searches stretch; a process that sleeps never waits."""
    monkeypatch.setattr(_contention, "MIN_WINDOW", 0.3)
    cpu = min(os.sched_getaffinity(0))
    first, second = _spinning(cpu), _spinning(cpu)
    sleeper = subprocess.Popen(
        [sys.executable, "-c", "import time; print('asleep', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE,
    )
    try:
        for process in (first, second, sleeper):
            _begun(process)  # its start-up, which may wait for a CPU or the disk, is over
        busy = _contention.Contention(lambda: [first.pid], machine=8.0)
        idle = _contention.Contention(lambda: [sleeper.pid], machine=8.0)
        time.sleep(1.0)
        assert busy.stretch(8.0, _search.MAX_STRETCH) >= 1.5  # about 2: half its time waited
        assert idle.stretch(8.0, _search.MAX_STRETCH) == pytest.approx(1.0, abs=0.05)
    finally:
        for process in (first, second, sleeper):
            process.kill()
            process.wait()


def test_a_contention_says_nothing_until_its_window_is_long_enough_nor_on_a_quiet_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_contention, "thread_waits", lambda pids: {(1, 1): 0})
    contention = _contention.Contention(lambda: [1])
    assert contention.stretch(6.0, _search.MAX_STRETCH) == 6.0  # just begun: the machine's
    assert contention.stretch(1.0, _search.MAX_STRETCH) == 1.0
    real = time.monotonic
    monkeypatch.setattr(_contention.time, "monotonic", lambda: real() + 60)
    assert contention.stretch(6.0, _search.MAX_STRETCH) == 1.0  # a minute, never waited
    monkeypatch.setattr(_contention, "thread_waits", lambda pids: {(1, 1): 45 * 10**9})
    assert contention.stretch(6.0, _search.MAX_STRETCH) == pytest.approx(4.0, rel=0.01)
    monkeypatch.setattr(_contention, "thread_waits", lambda pids: None)  # gone, unreadable
    assert contention.stretch(6.0, _search.MAX_STRETCH) == 6.0


#: How long a valid call takes: a slow tool (``FAST_CALL``) whose calls wait.
SLEEP = 0.6


@pytest.mark.parametrize("kind", [SleepsOnValid, ReadOnlySleepsOnValid])
def test_a_tool_whose_processes_never_waited_for_a_cpu_is_called_as_on_a_quiet_machine(
    monkeypatch: pytest.MonkeyPatch, kind: type[SleepsOnValid]
) -> None:
    """server-everything's long-running operation (ten seconds a call, asleep) was called
    once on a quiet machine and six times at a load of two per core: the budgets
    stretched by the load bought a tool that waits more calls, not the same ones."""
    monkeypatch.setattr(_contention, "MIN_WINDOW", 0.3)
    monkeypatch.setattr(_contention, "thread_waits", lambda pids: {(1, 1): 0})
    monkeypatch.setattr(_search, "cpu_waited", lambda: 1.0)  # every CPU contended
    options = RunOptions(
        execute=ExecuteMode.ALL, examples=3, grace=0.3, call_timeout=3 * SLEEP, search_budget=0.3
    )
    calls = {}
    for load in (1.0, 6.0):
        monkeypatch.setattr(_search, "stretch", lambda load=load: load)
        tool = kind(SLEEP)
        check_tools(tool, select=["TN601"], options=options)
        calls[load] = tool.valid_calls
    assert calls[6.0] == calls[1.0], calls


class Hangs:
    name = "hangs"
    description = "Answers after longer than any call may take, asleep meanwhile."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(2.0)
        return ToolResult.ok("late")


def test_a_silent_tool_whose_processes_never_waited_is_asked_again_with_its_own_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call that did not answer is made again once the batch is done, its bound
    stretched by the load: a tool asleep past its bound on a busy machine would be
    on a quiet one, and server-everything's run at a load of six per core waited
    30 s times six for it."""
    monkeypatch.setattr(_contention, "MIN_WINDOW", 0.3)
    monkeypatch.setattr(_contention, "thread_waits", lambda pids: {(1, 1): 0})
    cores = os.cpu_count() or 1
    monkeypatch.setattr(os, "getloadavg", lambda: (6.0 * cores,) * 3)  # six per core
    bounds: list[float] = []
    real = _explorations.call_once

    async def spied(tool: Any, args: Any, ctx: Any, *, timeout: float, **kwargs: Any) -> Any:
        bounds.append(timeout)
        return await real(tool, args, ctx, timeout=timeout, **kwargs)

    monkeypatch.setattr(_explorations, "call_once", spied)
    options = RunOptions(execute=ExecuteMode.ALL, grace=0.3, call_timeout=0.5)
    verdicts = check_tools(Hangs(), select=["TN803"], options=options)
    assert [v.outcome for v in verdicts] == [Outcome.FAILED]
    assert bounds == [0.5]  # the second chance's: the run's own, not stretched sixfold
