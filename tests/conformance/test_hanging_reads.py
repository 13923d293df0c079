"""The hanging corpus (corpus/bad/hanging.py): the findings name the attribute and the bound,
the healthy neighbour of each passes every static check, and each run ends.

``test_corpus.py`` already proves every entry trips the codes it declares; this file
proves what is particular to a read that never returns.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.corpus import Entry, load_corpus

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "bad"
HANGING = [entry for _, entry in load_corpus(CORPUS, "hanging.py")]
LIMIT = 0.4
#: The check that reports an unreadable attribute, and how its finding names it.
READS = {
    "TN101": "the name cannot be read: reading 'name' did not return within 0.4s",
    "TN201": "the description cannot be read: reading 'description' did not return within 0.4s",
    "TN301": "the input schema cannot be read: reading 'input_schema' did not return within 0.4s",
}
#: OpenAI strict mode and Gemini's ``parameters`` ask opposite things of every schema.
PROFILE_CONFLICT = {"TN412", "TN431"}


def _static_codes() -> list[str]:
    return [info.code for info in load_catalog().infos() if not info.live]


@pytest.mark.parametrize("entry", HANGING, ids=lambda e: e.note)
def test_a_hanging_attribute_is_named_with_its_bound_and_the_neighbour_passes(
    entry: Entry,
) -> None:
    assert entry.release is not None
    assert entry.siblings
    try:
        subjects = read_subjects([entry.tool, *entry.siblings], "hanging", limit=LIMIT)
        verdicts = check_subjects(subjects, "hanging", select=_static_codes())
    finally:
        entry.release()
    hostile, neighbour = subjects[0].display_name, subjects[1].display_name
    assert neighbour == "healthy_neighbour"
    mine = {v.check.code: v for v in verdicts if v.tool == hostile}
    (code,) = entry.trips & READS.keys()
    assert mine[code].outcome is Outcome.FAILED
    assert mine[code].message == READS[code]
    for tripped in entry.trips - {code}:  # the checks that need the attribute say why not
        assert mine[tripped].outcome is Outcome.FAILED
        assert "did not return within 0.4s" in mine[tripped].message
    failed = {
        v.check.code: v.message
        for v in verdicts
        if v.tool == neighbour and v.outcome is Outcome.FAILED
    }
    assert set(failed) <= PROFILE_CONFLICT, failed
    assert len(failed) <= 1, failed


def test_the_entries_cover_a_wait_and_a_busy_loop_on_name_description_and_schema() -> None:
    notes = " ".join(entry.note for entry in HANGING)
    assert "event" in notes
    assert "busy loop" in notes
    assert set().union(*(e.trips for e in HANGING)) >= READS.keys()
