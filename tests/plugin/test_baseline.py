"""The baseline of accepted findings, read directly: states, the rewrite, the file, the table.

The whole cycle through real sessions is in ``test_plugin_baseline``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._report import Records

from pytest_toolnexus._baseline import (
    ACCEPTED,
    FIXED,
    NEW,
    REASON_FIELD,
    RECORD_FIELD,
    Baseline,
    BaselineError,
    parse_entries,
)

CATALOG = {c.code: c.info for c in load_catalog()}


def verdict(tool: str, code: str, outcome: str, **extra: Any) -> Verdict:
    return Verdict("t", tool, CATALOG[code], Outcome(outcome), "m", **extra)


def record(tool: str, code: str, outcome: str, **extra: Any) -> dict[str, Any]:
    return verdict(tool, code, outcome).as_record() | extra


def test_states_are_accepted_fixed_new_or_none_and_the_record_says_which() -> None:
    baseline = Baseline(
        Path("b.toml"), {("t", "a", "TN102"): "legacy name", ("t", "a", "TN201"): ""}
    )
    cases = [
        (verdict("a", "TN102", "failed"), ACCEPTED),
        (verdict("a", "TN201", "passed"), FIXED),
        (verdict("b", "TN102", "failed"), NEW),
        (verdict("b", "TN102", "passed"), None),
        (verdict("a", "TN102", "skipped"), None),  # not judged: neither accepted nor fixed
        (verdict("a", "TN102", "skipped", kit_failure=True), None),
    ]
    assert [baseline.state(v) for v, _ in cases] == [want for _, want in cases]
    shown = verdict("a", "TN102", "failed").as_record()
    assert baseline.mark(shown, verdict("a", "TN102", "failed")) == ACCEPTED
    assert (shown[RECORD_FIELD], shown[REASON_FIELD]) == (ACCEPTED, "legacy name")
    plain = verdict("b", "TN102", "passed").as_record()
    baseline.mark(plain, verdict("b", "TN102", "passed"))
    assert plain[RECORD_FIELD] is None
    assert REASON_FIELD not in plain
    assert baseline.xfail_reason([verdict("a", "TN102", "failed")]) == (
        "accepted in b.toml: TN102 (legacy name)"
    )
    fixed = baseline.fixed_message([verdict("a", "TN201", "passed")])
    assert fixed.startswith("[XPASS(strict)] accepted in b.toml, and no longer failing")
    assert "[accepted.t.a] TN201" in fixed
    # Rewriting: every finding is accepted, and a listed check that passes is not "fixed".
    updating = Baseline(Path("b.toml"), dict(baseline.entries), updating=True)
    assert updating.state(verdict("b", "TN102", "failed")) == ACCEPTED
    assert updating.state(verdict("a", "TN201", "passed")) is None


def test_the_rewrite_adds_failures_removes_passes_keeps_the_rest_sorted(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "baseline.toml"
    old = {
        ("t", "a", "TN201"): "",  # passes now: removed
        ("t", "a", "TN102"): "kept reason",  # fails again: kept with its reason
        ("t", "z", "TN101"): "",  # deselected (no record): kept
        ("t", "y", "TN301"): "",  # skipped: kept
    }
    baseline = Baseline(path, dict(old), updating=True)
    for shown in [
        record("a", "TN201", "passed"),
        record("a", "TN102", "failed"),
        record("y", "TN301", "skipped"),
        record("b tool", "TN102", "failed"),  # new: added
        record("c", "TN102", "skipped", kit_failure=True),  # the kit's failure: never added
    ]:
        baseline.observe(shown)
    baseline.write()
    text = path.read_text()
    assert text.startswith("# Findings pytest-toolnexus accepts")
    assert tomllib.loads(text) == {
        "accepted": {
            "t": {
                "a": {"TN102": "kept reason"},
                "b tool": {"TN102": ""},
                "y": {"TN301": ""},
                "z": {"TN101": ""},
            }
        }
    }
    # Sorted by tool, so that a rewrite's diff shows only what changed.
    assert text.index('"b tool"') < text.index("t.y]") < text.index("t.z]")
    assert Baseline.read(path).entries == {
        ("t", "a", "TN102"): "kept reason",
        ("t", "b tool", "TN102"): "",
        ("t", "y", "TN301"): "",
        ("t", "z", "TN101"): "",
    }
    assert baseline.summary_lines() == [
        f"baseline written to {path}: 4 accepted finding(s) (1 added, 1 removed)"
    ]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ([1], "the top level must be a table"),
        ({"acepted": {}}, "unknown key(s) 'acepted'; the only key is 'accepted'"),
        ({"accepted": {"t": {"a": {"TN101": True}}}}, "accepted.t.a.TN101 must be a string"),
        ({"accepted": {"t": {"a": "TN101"}}}, "accepted.t.a must be a table of check codes"),
        ({"accepted": {"t": 1}}, "accepted.t must be a table of tools"),
    ],
)
def test_a_file_not_exactly_right_says_where(data: Any, expected: str) -> None:
    with pytest.raises(BaselineError, match=r"^b\.toml: ") as caught:
        parse_entries(data, "b.toml")
    assert expected in str(caught.value)


def test_a_missing_file_is_an_error_unless_it_is_to_be_written(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="does not exist; write it with --toolnexus-update"):
        Baseline.read(tmp_path / "none.toml")
    assert Baseline.read(tmp_path / "none.toml", updating=True).entries == {}
    (tmp_path / "bad.toml").write_text("[accepted\n")
    with pytest.raises(BaselineError, match="cannot be read as TOML"):
        Baseline.read(tmp_path / "bad.toml")


def test_entries_naming_nothing_collected_list_what_there_is() -> None:
    baseline = Baseline(
        Path("b.toml"),
        {
            ("t", "a", "TN102"): "",  # collected: not listed
            ("gone", "a", "TN102"): "",
            ("t", "nope", "TN102"): "",
            ("t", "a", "TN999"): "",
            ("t", "a", "TN201"): "",  # a real check, not collected (ignored, not selected...)
            ("unloaded", "a", "TN102"): "",  # its target did not load: its TN001 says why
        },
    )
    present = {("t", "a", "TN102"), ("t", "a", "TN103"), ("t", "b", "TN102")}
    text = baseline.absent(present, {"t": {"a", "b"}}, unloaded=["unloaded"])
    assert text is not None
    lines = text.splitlines()
    assert lines[0] == "b.toml: 4 entries name nothing this run collected (kept, and not judged):"
    assert lines[1:] == [
        "  gone::a TN102: no target 'gone'; the targets are: t",
        "  t::a TN201: check TN201 is not collected for t::a (not selected, ignored, or not"
        " run on tools of its kind); its checks here are: TN102, TN103",
        "  t::a TN999: check TN999 is not collected for t::a (no such check); its checks here"
        " are: TN102, TN103",
        "  t::nope TN102: 't' has no tool 'nope'; its tools are: a, b",
    ]
    assert baseline.absent(present, {"t": {"a"}}, ["unloaded", "gone", "t"]) is None


def test_the_table_and_summary_show_accepted_findings_apart() -> None:
    records = Records()
    try:
        records.add(record("a", "TN102", "failed", baseline=ACCEPTED))
        records.add(record("a", "TN201", "passed", baseline=FIXED))
        records.add(record("b", "TN102", "failed", baseline=NEW))
        records.add(record("b", "TN201", "passed", baseline=None))
        summary = records.summary()
        assert {k: summary[k] for k in ("passed", "failed", "errors", "accepted", "fixed")} == {
            "passed": 2,
            "failed": 1,
            "errors": 1,
            "accepted": 1,
            "fixed": 1,
        }
        table = records.table()
        assert table[0] == (
            "t: 2 tools, 4 checks: 1 passed, 0 passed with a warning, 1 failed, 0 skipped,"
            " 1 accepted by the baseline (xfail), 1 accepted but passing (XPASS)"
        )
        rows = {line.split()[0]: line.split()[1:3] for line in table[2:4]}
        assert rows == {"a": ["xfail", "XPASS"], "b": ["FAIL", "ok"]}  # naming, description
    finally:
        records.close()
