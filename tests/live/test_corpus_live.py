"""The live corpus: every bad tool trips its codes, no good tool trips any, hostile runs end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _corpus import LIVE, live_entries
from _sessions import RunningSession, early
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.corpus import Entry
from toolnexus_conformance.process._target import check_target

OPTIONS = RunOptions(execute=ExecuteMode.ALL, examples=10, grace=0.5, call_timeout=2.0)
HERE = Path(__file__).parent
PROJECT = HERE.parents[1]
BAD = [e for e in live_entries("bad") if not e.hostile]
HOSTILE = [e for e in live_entries("bad") if e.hostile]
GOOD = live_entries("good")


Verdicts = dict[str, tuple[Outcome, str]]


@early
def in_workers_run(folder: Path) -> RunningSession:
    """``_in_workers_run.py``, started early.

    It mostly waits for frozen tools to be found frozen: meanwhile other tests run. It
    runs in the project, as the suite does, not in ``folder``: a sandboxed worker may
    read the folder it was started in, and ``_process_targets`` loads the corpus from
    the project by path (from a folder of /tmp, a clone in /tmp could not be read).
    """
    command = [sys.executable, str(HERE / "_in_workers_run.py")]
    return RunningSession(command, PROJECT, 300)


@pytest.fixture(scope="module")
def worker_verdicts(in_workers_run: RunningSession) -> dict[str, Verdicts]:
    """Each module's process-ending tools judged together, one worker per module
    (``_in_workers_run``), by tool. A tool the list lacks has no verdicts, and its test
    fails on the missing key."""
    done = in_workers_run.result()
    assert done.ret == 0, done.stderr[-3000:]
    found: dict[str, Verdicts] = {}
    for line in done.stdout.lines:
        record = json.loads(line)
        outcome = Outcome(record["outcome"])
        found.setdefault(record["tool"], {})[record["check"]] = (outcome, record["message"])
    return found


def _run(entry: Entry, select: tuple[str, ...] | list[str]) -> Verdicts:
    subjects = read_subjects([entry.tool], "corpus")
    verdicts = check_subjects(subjects, "corpus", select=select, options=OPTIONS)
    return {v.check.code: (v.outcome, v.message) for v in verdicts}


def test_every_live_code_has_a_bad_tool() -> None:
    live_codes = {
        c.code
        for c in load_catalog()
        # MCP (TNx5x) and A2A (TNx7x) codes are proven against real servers and agents,
        # in tests/mcp and tests/a2a.
        if c.info.live
        and c.code[:3] in {"TN5", "TN6", "TN7", "TN8", "TN9"}
        and c.code[3] not in "57"
    }
    covered = set().union(*(e.trips for e in BAD + HOSTILE))
    assert live_codes - covered == set()


def _trips_its_codes(entry: Entry, verdicts: Verdicts) -> None:
    for code in entry.trips:
        outcome, message = verdicts[code]
        assert outcome is Outcome.FAILED, (
            f"{entry.tool.name} should fail {code} ({entry.note}): {message}"
        )


@pytest.mark.parametrize("entry", [e for e in BAD if e.spec is None], ids=lambda e: e.tool.name)
def test_bad_tool_trips_its_codes(entry: Entry) -> None:
    _trips_its_codes(entry, _run(entry, sorted(entry.trips)))


@pytest.mark.parametrize("entry", [e for e in BAD if e.spec is not None], ids=lambda e: e.tool.name)
def test_bad_tool_judged_in_a_worker_trips_its_codes(
    entry: Entry, worker_verdicts: dict[str, Verdicts]
) -> None:
    """It ends, freezes or leaves its process: judged in a worker."""
    _trips_its_codes(entry, worker_verdicts[entry.tool.name])


@pytest.mark.parametrize("entry", GOOD, ids=lambda e: e.tool.name)
def test_good_tool_trips_nothing(entry: Entry) -> None:
    verdicts = _run(entry, LIVE)
    failed = {
        code: message for code, (outcome, message) in verdicts.items() if outcome is Outcome.FAILED
    }
    assert failed == {}


@early
def hostile_run(folder: Path) -> RunningSession:
    """``_hostile_run.py`` in a folder of its own, started early.

    It mostly waits out hanging tools' call timeouts: meanwhile other tests run.
    """
    return RunningSession([sys.executable, str(HERE / "_hostile_run.py")], folder, 180)


def test_hostile_run_ends_with_a_verdict_for_every_check(hostile_run: RunningSession) -> None:
    done = hostile_run.result()
    assert done.ret == 0, done.stderr[-3000:]
    records = [json.loads(line) for line in done.stdout.lines]
    by_tool: dict[str, dict[str, dict[str, object]]] = {}
    for record in records:
        by_tool.setdefault(str(record["tool"]), {})[str(record["check"])] = record
    for entry in HOSTILE:
        verdicts = by_tool[entry.tool.name]
        for code in entry.trips:
            # Why it was not failed (a skip says what kept it from judging), and the
            # tool's other verdicts, as text: pytest cuts any other message short.
            others = "\n".join(
                f"{c} {v['outcome']}: {str(v['message'])[:200]}" for c, v in verdicts.items()
            )
            assert verdicts[code]["outcome"] == "failed", f"{entry.tool.name} {code}\n{others}"
    assert all(len(str(r["message"])) < 2000 for r in records), (
        "a 20 MB value leaked into a message"
    )
    left = [p.name for p in done.path.iterdir() if p.name != ".hypothesis"]  # hypothesis's database
    assert left == [], "a hostile tool wrote into the run's working directory"


def test_tools_that_keep_their_process_pass_tn606() -> None:
    """TN606 does not cry wolf: every example tool, each in a process of its own, passes."""
    verdicts = check_target("toolnexus_ref.examples:toolkit", select=["TN606"], options=OPTIONS)
    outcomes = {v.tool: v.outcome for v in verdicts if v.check.code == "TN606"}
    assert len(outcomes) == 4
    assert set(outcomes.values()) == {Outcome.PASSED}, outcomes
