"""The warm starter's sessions (``tests/_warm.py``) are what a new ``python -m pytest`` would be.

The suite forks most of its sessions from it; a difference here would be a
difference in every test that reads a session.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from _warm import FORKED_MARK, WarmProcess, WarmStarter

PROBE = """
import json, os, sys

from hypothesis.configuration import storage_directory

def test_where_it_runs():
    print("WHERE " + json.dumps({
        "cwd": os.getcwd(),
        "path": sys.path[:2],
        "home": os.environ.get("HOME"),
        "argv0": os.path.basename(sys.argv[0]),
        "bytecode": sys.dont_write_bytecode,
        "stdin": sys.stdin.read(),
        "interrupt": str(__import__("signal").getsignal(__import__("signal").SIGINT)),
        "forked": os.environ.get(MARK),
        "hypothesis": str(storage_directory(intent_to_write=False).home_directory),
    }))

def test_that_fails():
    assert 1 == 2
""".replace("MARK", repr(FORKED_MARK))


def _where(result: pytest.RunResult) -> dict[str, object]:
    (line,) = [line for line in result.outlines if "WHERE " in line]
    found: dict[str, object] = json.loads(line.split("WHERE ", 1)[1])
    return found


@pytest.fixture
def starter() -> WarmStarter:
    found = WarmStarter.shared()
    if found is None:
        pytest.skip("sessions start as new interpreters here (no fork, or TOOLNEXUS_TESTS_FRESH=1)")
    return found


@pytest.mark.fresh_interpreter
def test_a_fresh_session_is_the_reference(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    assert _where(result)["forked"] is None


def test_a_forked_session_runs_where_a_fresh_one_would(
    pytester: pytest.Pytester, starter: WarmStarter
) -> None:
    pytester.makepyfile(test_probe=PROBE)
    forked = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pytester, "popen", type(pytester).popen.__get__(pytester))
        fresh = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider")
    assert forked.ret == fresh.ret == 1
    forked.assert_outcomes(passed=1, failed=1)
    assert _where(forked).pop("forked") == "1"
    assert _where(fresh).pop("forked") is None
    assert {**_where(forked), "forked": None} == _where(fresh)
    assert _where(forked)["cwd"] == str(pytester.path)
    # No warning about modules imported before pytest could rewrite them: the summary
    # line is a fresh session's.
    assert forked.outlines[-1].split(" in ")[0] == fresh.outlines[-1].split(" in ")[0]


def _sleeping_session(starter: WarmStarter, folder: Path) -> WarmProcess:
    (folder / "test_sleeps.py").write_text(
        "import time\n\ndef test_sleeps():\n    time.sleep(60)\n"
    )
    with open(os.devnull, "wb") as sink:
        process = starter.start(
            ["-p", "no:cacheprovider", "-q"],
            cwd=folder,
            env=dict(os.environ, PYTHONPATH=str(folder)),
            stdout=sink.fileno(),
            stderr=sink.fileno(),
        )
    assert process is not None
    return process


def test_a_forked_sessions_exit_by_signal_is_popens(starter: WarmStarter, tmp_path: Path) -> None:
    process = _sleeping_session(starter, tmp_path)
    assert process.poll() is None
    time.sleep(0.5)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == -signal.SIGTERM
    assert process.poll() == -signal.SIGTERM


def test_a_session_waited_for_in_one_thread_is_polled_and_killed_from_another(
    starter: WarmStarter, tmp_path: Path
) -> None:
    """As ``RunningSession.stop`` does while its thread waits for the session's end."""
    process = _sleeping_session(starter, tmp_path)
    waited: list[int] = []
    waiter = threading.Thread(target=lambda: waited.append(process.wait(60)))
    waiter.start()
    time.sleep(0.2)
    began = time.monotonic()
    assert process.poll() is None
    assert time.monotonic() - began < 5, "poll waited for the waiting thread"
    process.kill()
    waiter.join(30)
    assert waited == [-signal.SIGKILL]
    assert process.poll() == -signal.SIGKILL
