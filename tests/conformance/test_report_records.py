"""The table and counts of records: counted but not kept give the same as kept; a
target's own findings say their status."""

from __future__ import annotations

from typing import Any

import pytest
from toolnexus_conformance._report import Records


def _record(tool: str, check: str, category: str, outcome: str, **more: Any) -> dict[str, Any]:
    return {
        "target": "t",
        "tool": tool,
        "check": check,
        "category": category,
        "severity": more.pop("severity", "error"),
        "outcome": outcome,
        "message": more.pop("message", ""),
        "findings": [],
        **more,
    }


RECORDS = [
    _record("*", "TN001", "naming", "passed", position=(0, -1, 0)),
    _record("add", "TN102", "naming", "failed", message="bad", position=(0, 0, 1)),
    _record("add", "TN201", "description", "failed", severity="warning", position=(0, 0, 2)),
    _record("add", "TN601", "result", "skipped", not_called=True, message="off; allow it"),
    _record("echo", "TN102", "naming", "failed", baseline="accepted", position=(0, 1, 1)),
    _record("echo", "TN103", "naming", "passed", baseline="fixed", position=(0, 1, 2)),
    _record("*", "TN851", "naming", "skipped", message="no listing"),
]


def test_counted_records_give_the_kept_ones_table_and_counts() -> None:
    kept, counted = Records().extend(RECORDS), Records(keep=False).extend(RECORDS)
    try:
        assert counted.table() == kept.table()
        assert counted.summary() == kept.summary()
        assert counted.not_called() == kept.not_called() == {"off": 1}
        assert counted.unjudged() == kept.unjudged() == {"t": "no listing"}
        assert len(counted) == len(kept) == len(RECORDS)
        assert [r["check"] for r in kept.sorted()][:3] == ["TN601", "TN851", "TN001"]
    finally:
        kept.close()
        counted.close()


def test_counted_records_cannot_be_read_back(tmp_path: Any) -> None:
    counted = Records(keep=False).extend(RECORDS)
    try:
        with pytest.raises(RuntimeError, match="not kept"):
            list(counted.sorted())
        with pytest.raises(RuntimeError, match="not kept"):
            counted.write_report(tmp_path / "report.json")
    finally:
        counted.close()
    assert list(tmp_path.iterdir()) == []


def test_a_targets_own_findings_say_their_status_under_its_counts() -> None:
    """A warning is no failure: TN403 (more tools than OpenAI takes) passes with a
    warning, and the line under the counts said "FAIL" for it."""
    records = Records().extend(
        [
            _record("*", "TN403", "providers", "failed", severity="warning", message="200 tools"),
            _record("*", "TN001", "naming", "failed", message="no import"),
            _record("*", "TN404", "providers", "failed", baseline="accepted", message="taken"),
        ]
    )
    try:
        table = records.table()
    finally:
        records.close()
    assert table[0].endswith(
        "1 passed with a warning, 1 failed, 0 skipped, 1 accepted by the baseline (xfail)"
    ), table
    assert table[1:4] == [
        "  TN403 warn: 200 tools",
        "  TN001 FAIL: no import",
        "  TN404 xfail: taken",
    ]
