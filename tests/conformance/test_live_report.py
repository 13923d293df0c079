"""The report written as the run goes: valid JSON after every record, incomplete until the end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolnexus_conformance._report import UNFINISHED, LiveReport, Records


def _record(n: int) -> dict[str, Any]:
    return {
        "target": "t",
        "tool": f"tool{n}",
        "check": "TN101",
        "category": "naming",
        "severity": "error",
        "outcome": "failed" if n % 2 else "passed",
        "message": "é" * n,
        "position": [0, 5 - n, 0],
    }


def test_the_file_is_a_valid_incomplete_report_after_every_record(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    live, records = LiveReport(path), Records()
    try:
        empty = json.loads(path.read_text())
        assert empty["complete"] is False
        assert empty["interrupted"] == UNFINISHED
        assert empty["results"] == []
        for n in range(5):
            records.add(_record(n))
            live.add(_record(n), records.summary())
            report = json.loads(path.read_text())  # as a run killed now would leave it
            assert report["complete"] is False
            assert [r["tool"] for r in report["results"]] == [f"tool{i}" for i in range(n + 1)]
            assert "position" not in report["results"][0]
            assert report["summary"]["checks"] == n + 1
            assert report["summary"]["failed"] == (n + 1) // 2
        live.close()
        records.write_report(path)
        final = json.loads(path.read_text())
        assert final["complete"] is True
        assert [r["tool"] for r in final["results"]] == [f"tool{i}" for i in range(4, -1, -1)]
        assert not list(tmp_path.glob(".report.json.*"))
    finally:
        live.close()
        records.close()


def test_a_target_whose_start_was_skipped_is_named_as_not_judged() -> None:
    records = Records()
    npx = "memory did not start: its command, npx, fetches the server; install it"

    def record(target: str, check: str, outcome: str, message: str = "") -> dict[str, Any]:
        return _record(1) | {
            "target": target,
            "tool": "*",
            "check": check,
            "outcome": outcome,
            "message": message,
        }

    records.add(record("mcp.json", "TN851", "skipped", npx))
    records.add(record("tools:kit", "TN001", "passed"))
    records.add(record("tools:kit", "TN102", "skipped"))
    assert records.unjudged() == {"mcp.json": npx}


def test_records_added_after_a_read_are_appended_not_written_over() -> None:
    """Records are appended with no seek per record; a read in between must not matter."""
    records = Records()
    try:
        for n in range(3):
            records.add(_record(n))
        assert [r["tool"] for r in records.sorted()] == ["tool2", "tool1", "tool0"]
        records.add(_record(4))
        records.add(_record(3))
        assert [r["tool"] for r in records.sorted()] == [f"tool{n}" for n in (4, 3, 2, 1, 0)]
        assert (
            next(r["message"] for r in records.sorted()) == "é" * 4
        )  # multi-byte: offsets in bytes
    finally:
        records.close()


def test_the_final_report_holds_each_record_as_given_in_position_order(tmp_path: Path) -> None:
    """Positions of any length, as lists or tuples; equal ones keep their arrival order."""
    given = [
        _record(1) | {"position": (0, 2), "findings": ["a", "ü"], "calls": 3},
        _record(2) | {"position": [0, 1, 7]},
        _record(3) | {"position": (0, 2)},
        {k: v for k, v in _record(4).items() if k != "position"},
    ]
    records = Records()
    try:
        records.extend(given)
        path = tmp_path / "report.json"
        records.write_report(path)
        results = json.loads(path.read_text(encoding="utf-8"))["results"]
    finally:
        records.close()
    shown = [{k: v for k, v in r.items() if k != "position"} for r in given]
    assert results == [shown[3], shown[1], shown[0], shown[2]]
    assert [r["tool"] for r in results] == ["tool4", "tool2", "tool1", "tool3"]
