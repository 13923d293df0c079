"""The report says whether the run was complete, before its results, in valid JSON."""

from __future__ import annotations

import json
from pathlib import Path

from toolnexus_conformance import build_report
from toolnexus_conformance._report import Records

RECORD = {
    "target": "t",
    "tool": "add",
    "check": "TN102",
    "category": "naming",
    "severity": "error",
    "outcome": "passed",
    "message": "",
}


def test_a_report_is_complete_unless_told_otherwise(tmp_path: Path) -> None:
    records = Records().extend([RECORD])
    try:
        records.write_report(tmp_path / "report.json")
    finally:
        records.close()
    report = json.loads((tmp_path / "report.json").read_text())
    assert list(report) == [
        "version",
        "complete",
        "interrupted",
        "not_judged",
        "results",
        "summary",
    ]
    assert (report["complete"], report["interrupted"], report["not_judged"]) == (True, None, [])
    assert report["version"] == 1


def test_an_interrupted_report_names_what_was_not_judged(tmp_path: Path) -> None:
    records = Records()
    missing = ["toolnexus:t::add::TN601-valid-args-no-raise", "toolnexus:t::ünï::TN102"]
    try:
        records.write_report(
            tmp_path / "report.json", complete=False, interrupted="SIGTERM", not_judged=missing
        )
    finally:
        records.close()
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["complete"] is False
    assert report["interrupted"] == "SIGTERM"
    assert report["not_judged"] == missing
    assert report["results"] == []
    assert report["summary"]["checks"] == 0


def test_the_plain_report_has_the_same_keys() -> None:
    report = build_report([RECORD])
    assert list(report) == [
        "version",
        "complete",
        "interrupted",
        "not_judged",
        "results",
        "summary",
    ]
    assert (report["complete"], report["interrupted"], report["not_judged"]) == (True, None, [])
