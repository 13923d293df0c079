"""The evidence: every check code has a known-bad tool that trips it; known-good tools trip nothing.

``run_corpus(live=...)`` is the one switch between the static suites (today) and the
static plus live suites: with ``live=True`` it also selects live codes and lets the
live checks call each entry (``ExecuteMode.ALL`` for entries marked ``execute``).
``EVIDENCE_MODES`` lists the modes this test covers. The live codes have their own
evidence test, ``tests/live/test_corpus_live.py``, which runs the live corpus with
short grace periods and bounds the hostile entries; running the live suites here
too, with default options, over every static bad tool would only repeat it slowly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from toolnexus_conformance._model import CheckInfo, Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.corpus import Entry, load_corpus
from toolnexus_conformance.live._loop import BackgroundLoop

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus"
#: Whether the live suites are part of the evidence (see the module docstring).
EVIDENCE_MODES: tuple[bool, ...] = (False,)
#: Codes a corpus tool cannot trip (they judge how a target loads, from the loader's
#: ``TargetSubject.extra``), with the test folder whose tests must name the code instead.
EVIDENCE_ELSEWHERE = {
    "TN001": "tests/plugin",  # the target loads at all: fed broken specs
    "TN851": "tests/mcp",  # every MCP server starts: fed servers that fail to start
    "TN852": "tests/mcp",  # stdout noise and endless paging: fed hostile servers
    "TN752": "tests/mcp",  # no progress after a cancel: fed a server that keeps sending it
    "TN871": "tests/a2a",  # the agent card is valid: fed agents serving broken cards
    "TN853": "tests/mcp",  # a foreign Host and Origin refused: fed servers with and without it
}
#: The bound on each read of a corpus tool's declaration. The hanging entries
#: (corpus/bad/hanging.py) cost it once each; a healthy read takes microseconds.
READ_LIMIT = 0.5
#: A good tool may trip exactly one of these: OpenAI strict needs
#: additionalProperties: false on every object (TN412), Gemini's parameters
#: have no additionalProperties field (TN431). See conformance/corpus/good/tools.py.
PROFILE_CONFLICT = frozenset({"TN412", "TN431"})


def codes_under_test(live: bool) -> list[CheckInfo]:
    return [
        info
        for info in load_catalog().infos()
        if (live or not info.live) and info.code not in EVIDENCE_ELSEWHERE
    ]


@dataclass(frozen=True)
class Run:
    folder: str
    module: str
    index: int
    entry: Entry
    tripped: frozenset[str]
    messages: dict[str, str]

    @property
    def id(self) -> str:
        return f"{self.folder}/{self.module}[{self.index}] {self.entry.note}"


def _run_folder(folder: str, live: bool, loop: BackgroundLoop) -> Iterator[Run]:
    codes = [info.code for info in codes_under_test(live)]
    counts: dict[str, int] = {}
    for module, entry in load_corpus(CORPUS / folder):
        index = counts.get(module, 0)
        counts[module] = index + 1
        target = f"{folder}/{module}[{index}]"
        try:
            subjects = read_subjects([entry.tool, *entry.siblings], target, limit=READ_LIMIT)
            execute = ExecuteMode.ALL if (live and entry.execute) else ExecuteMode.AUTO
            verdicts = check_subjects(
                subjects, target, select=codes, options=RunOptions(execute=execute), loop=loop
            )
        finally:
            if entry.release is not None:
                entry.release()
        mine = {subjects[0].display_name, "*"}
        failed = {
            v.check.code: v.message
            for v in verdicts
            if v.outcome is Outcome.FAILED and v.tool in mine
        }
        yield Run(folder, module, index, entry, frozenset(failed), failed)


_RUNS: dict[bool, list[Run]] = {}


def run_corpus(live: bool) -> list[Run]:
    """Every entry of both folders, run once per mode and shared by the tests below."""
    if live not in _RUNS:
        loop = BackgroundLoop()
        try:
            _RUNS[live] = [
                run for folder in ("bad", "good") for run in _run_folder(folder, live, loop)
            ]
        finally:
            loop.close()
    return _RUNS[live]


def _code_params() -> list[object]:
    return [
        pytest.param(live, info.code, id=f"{'live' if live else 'static'}-{info.code}-{info.slug}")
        for live in EVIDENCE_MODES
        for info in codes_under_test(live)
    ]


@pytest.mark.parametrize(("live", "code"), _code_params())
def test_every_code_has_a_bad_tool_that_trips_it(live: bool, code: str) -> None:
    runs = [r for r in run_corpus(live) if r.folder == "bad"]
    declared = [r for r in runs if code in r.entry.trips]
    assert declared, f"no bad corpus entry declares {code}; add one to conformance/corpus/bad/"
    assert any(code in r.tripped for r in declared), (
        f"{code}: no bad entry that declares it trips it: {[r.id for r in declared]}"
    )


@pytest.mark.parametrize("live", EVIDENCE_MODES)
def test_every_bad_tool_trips_every_code_it_declares(live: bool) -> None:
    known = {info.code for info in codes_under_test(live)}
    problems = []
    for run in run_corpus(live):
        if run.folder != "bad":
            continue
        assert run.entry.trips, f"{run.id}: a bad entry must declare the codes it trips"
        missing = (run.entry.trips & known) - run.tripped
        if missing:
            problems.append(
                f"{run.id}: did not trip {sorted(missing)} (tripped {sorted(run.tripped)})"
            )
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("live", EVIDENCE_MODES)
def test_good_tools_trip_nothing(live: bool) -> None:
    good = [r for r in run_corpus(live) if r.folder == "good"]
    assert len(good) >= 10
    problems = []
    for run in good:
        assert not run.entry.trips, f"{run.id}: a good entry declares no codes"
        unexpected = run.tripped - PROFILE_CONFLICT
        if unexpected or run.tripped >= PROFILE_CONFLICT:
            problems.append(
                f"{run.id}: tripped "
                + "; ".join(f"{c}: {run.messages[c]}" for c in sorted(run.tripped))
            )
    assert not problems, "\n".join(problems)
    for code in PROFILE_CONFLICT:
        assert any(code not in r.tripped for r in good), f"no good tool passes {code}"


@pytest.mark.parametrize(("code", "folder"), sorted(EVIDENCE_ELSEWHERE.items()))
def test_codes_without_corpus_evidence_are_tested_elsewhere(code: str, folder: str) -> None:
    if code not in load_catalog():
        pytest.skip(f"{code} is not in the catalog (its module is not loaded)")
    root = CORPUS.parents[1] / folder
    naming = [p for p in sorted(root.rglob("*.py")) if code in p.read_text(encoding="utf-8")]
    assert naming, (
        f"{code} cannot be tripped by a corpus tool; a test under {folder}/ must exercise it (and name it)"
    )


def test_good_corpus_is_varied() -> None:
    good = [r.entry.tool for r in run_corpus(False) if r.folder == "good"]
    import inspect

    sources = {tool.source for tool in good}
    assert {"native", "http", "custom", "skill", "builtin"} <= sources
    kinds = {inspect.iscoroutinefunction(tool.execute) for tool in good}
    assert kinds == {True, False}, "good tools must include sync and async execute"


def test_hostile_entries_give_verdicts() -> None:
    hostile = [r for r in run_corpus(False) if r.entry.hostile]
    assert hostile
    for run in hostile:
        assert run.tripped, run.id
