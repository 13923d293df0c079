"""The kit's threads import heavy packages in turn, and a failed warm-up says why later.

Two threads importing at once can be handed each other's modules half made
(python/cpython#83065): hypothesis's import on the warm-up thread failed on a module
the SDK's import was making on a load's thread, and the modules it left behind broke
every search of that xdist worker. These tests hold the turn and watch who waits.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from _sessions import RunningSession, Session, SessionsByKey, early
from toolnexus_conformance import RunOptions
from toolnexus_conformance._imports import IMPORTS, import_whole
from toolnexus_conformance.live import _search


def _held_elsewhere() -> tuple[threading.Event, threading.Thread]:
    """``IMPORTS`` held by another thread until the returned event is set."""
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with IMPORTS:
            taken.set()
            release.wait(60)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert taken.wait(10)
    return release, holder


def test_a_module_already_whole_never_waits_for_the_turn() -> None:
    """A thread whose module is imported goes on while another imports: a search thread
    must not wait out a warm-up for a module it already has."""
    release, holder = _held_elsewhere()
    try:
        got: list[object] = []
        asker = threading.Thread(target=lambda: got.append(import_whole("json")), daemon=True)
        asker.start()
        asker.join(5)
        assert got == [sys.modules["json"]]
    finally:
        release.set()
        holder.join(10)


def _taken_elsewhere() -> bool:
    """Whether another thread could take the turn now (and gave it back)."""
    got: list[bool] = []

    def take() -> None:
        got.append(IMPORTS.acquire(timeout=0.2))
        if got[0]:
            IMPORTS.release()

    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    taker.join(10)
    return got == [True]


def test_a_holder_sets_the_turn_aside_while_it_waits_and_holds_it_as_deeply_after() -> None:
    """A thread holding the turn that waits for the kit's threads (collection running
    the suites in a test module) must not keep them from it."""
    with IMPORTS, IMPORTS:
        assert not _taken_elsewhere()
        with IMPORTS.set_aside():
            assert _taken_elsewhere()
        assert not _taken_elsewhere()
        IMPORTS.release()
        assert not _taken_elsewhere()  # still held once
        IMPORTS.acquire()
    assert _taken_elsewhere()


#: A fresh interpreter: the import turn held (by a warm-up under way, say) while
#: ``{call}`` starts on a new thread; says whether ``{watched}`` was imported meanwhile,
#: and whether ``{after}`` was once the turn was given up.
TURN_HELD = """
import sys, threading, time
{setup}
from toolnexus_conformance._imports import IMPORTS

assert {watched!r} not in sys.modules, "{watched} was imported before the test began"
with IMPORTS:
    waiting = threading.Thread(target=lambda: {call})
    waiting.start()
    time.sleep(0.5)
    during = {watched!r} in sys.modules
waiting.join(60)
print("DURING", during, "AFTER", {after!r} in sys.modules)
"""


#: A fresh interpreter: the plugin's warm-up with an MCP target to load.
WARM_UP_ORDER = """
import sys
from toolnexus_conformance import RunOptions
from toolnexus_conformance.targets import parse_target
from pytest_toolnexus._session import _warm_generation

for name in ("toolnexus_ref.mcp", "hypothesis"):
    assert name not in sys.modules, f"{name} was imported before the test began"
_warm_generation(RunOptions(), parse_target("stdio:python -m some_server"))
order = list(sys.modules)
print(order.index("toolnexus_ref.mcp") < order.index("hypothesis"))
"""

#: What each fresh interpreter of ``TURN_HELD`` sets up, calls on a new thread, and watches.
LOAD_IN_TURN = dict(
    setup="from toolnexus_conformance.targets import parse_target\n"
    "from pytest_toolnexus._listed import ready_to_build",
    call='ready_to_build(parse_target("stdio:python -m some_server"))',
    watched="toolnexus_ref.mcp",
    after="toolnexus_ref.mcp",
)
EXPLORATION_IN_TURN = dict(
    setup="from toolnexus_conformance.live._explorations import import_generator",
    call="import_generator()",
    watched="hypothesis",
    after="hypothesis.core",
)


#: Each fresh interpreter's script, by the test that reads it.
SCRIPTS = {
    "load": TURN_HELD.format(**LOAD_IN_TURN),
    "exploration": TURN_HELD.format(**EXPLORATION_IN_TURN),
    "warm-up": WARM_UP_ORDER,
}


def _interpreter(folder: Path, name: str) -> RunningSession:
    return RunningSession([sys.executable, "-c", SCRIPTS[name]], folder, timeout=120)


@early
def fresh_interpreters(folder: Path) -> SessionsByKey[str]:
    """The fresh interpreters these tests read, by test: started early, as their
    scripts are fixed and each mostly imports, or sleeps while the turn is held."""
    return SessionsByKey(folder, _interpreter, ahead=SCRIPTS)


def _while_the_turn_is_held(done: Session) -> list[str]:
    assert done.ret == 0, done.stderr
    return "\n".join(done.stdout.lines).split()


def test_a_load_imports_the_sdk_only_in_its_turn(
    fresh_interpreters: SessionsByKey[str],
) -> None:
    seen = _while_the_turn_is_held(fresh_interpreters.start("load").result())
    assert seen == ["DURING", "False", "AFTER", "True"]


def test_the_first_exploration_imports_hypothesis_only_after_the_warm_up(
    fresh_interpreters: SessionsByKey[str],
) -> None:
    """An import that finds hypothesis in ``sys.modules`` goes on while another thread is
    still importing it: an exploration begun beside the warm-up's import met a
    half-imported hypothesis (an xdist worker's first item, under load). The first
    exploration of a process imports it only once the warm-up is done."""
    seen = _while_the_turn_is_held(fresh_interpreters.start("exploration").result())
    assert seen == ["DURING", "False", "AFTER", "True"]


def test_the_warm_up_imports_the_sdk_before_hypothesis(
    fresh_interpreters: SessionsByKey[str],
) -> None:
    """The listing, which collection waits for, needs the SDK before any exploration
    needs hypothesis: a warm-up that took its turn first imports the SDK first, so
    the load does not wait out a whole warm search."""
    done = fresh_interpreters.start("warm-up").result()
    assert done.ret == 0, done.stderr
    stdout = "\n".join(done.stdout.lines)
    assert stdout.split() == ["True"], stdout


def test_a_failed_warm_up_is_said_again_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up runs on a thread whose failure nobody sees; the first exploration then
    calls it again. Retrying would mix a second import of hypothesis with what the first
    left behind, and fail on that; each later call says the first failure instead."""
    calls: list[int] = []

    def broken(options: RunOptions) -> None:
        calls.append(1)
        raise ImportError("partially initialized module 'annotated_types'")

    monkeypatch.setattr(_search, "_warmed", False)
    monkeypatch.setattr(_search, "_warm_failure", None)
    monkeypatch.setattr(_search, "_prepare", broken)
    with pytest.raises(ImportError):
        _search.warm_generation(RunOptions())
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"failed earlier.*partially initialized") as raised:
            _search.warm_generation(RunOptions())
        assert isinstance(raised.value.__cause__, ImportError)
    assert len(calls) == 1
    assert not _search.warmed()
