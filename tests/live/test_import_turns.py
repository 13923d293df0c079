"""The kit's threads import heavy packages in turn, and a failed warm-up says why later.

Two threads importing at once can be handed each other's modules half made
(python/cpython#83065): hypothesis's import on the warm-up thread failed on a module
the SDK's import was making on a load's thread, and the modules it left behind broke
every search of that xdist worker. These tests hold the turn and watch who waits.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
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
        assert got and got[0] is sys.modules["json"]
    finally:
        release.set()
        holder.join(10)


#: A fresh interpreter: another thread's import under way (the turn held), then a
#: load getting ready to build an MCP target.
LOAD_WAITS_ITS_TURN = """
import sys, threading, time
from toolnexus_conformance._imports import IMPORTS
from toolnexus_conformance.targets import parse_target
from pytest_toolnexus._listed import ready_to_build

assert "toolnexus_ref.mcp" not in sys.modules, "the SDK was imported before the test began"
spec = parse_target("stdio:python -m some_server")
with IMPORTS:
    load = threading.Thread(target=ready_to_build, args=(spec,))
    load.start()
    time.sleep(0.5)
    during = "toolnexus_ref.mcp" in sys.modules
load.join(60)
print("DURING", during, "AFTER", "toolnexus_ref.mcp" in sys.modules)
"""


def test_a_load_imports_the_sdk_only_in_its_turn() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOAD_WAITS_ITS_TURN], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["DURING", "False", "AFTER", "True"], done.stdout


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


def test_the_warm_up_imports_the_sdk_before_hypothesis() -> None:
    """The listing, which collection waits for, needs the SDK before any exploration
    needs hypothesis: a warm-up that took its turn first imports the SDK first, so
    the load does not wait out a whole warm search."""
    done = subprocess.run(
        [sys.executable, "-c", WARM_UP_ORDER], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"], done.stdout


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
        with pytest.raises(RuntimeError, match="failed earlier.*partially initialized") as raised:
            _search.warm_generation(RunOptions())
        assert isinstance(raised.value.__cause__, ImportError)
    assert len(calls) == 1
    assert not _search.warmed()
