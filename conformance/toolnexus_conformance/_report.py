"""The JSON report and the terminal table, built from verdict records alone.

Records are plain dicts (``Verdict.as_record()``) so that they cross process
boundaries under pytest-xdist and a serial run and a distributed one give the same
report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._model import Category, Outcome, Severity

__all__ = ["REPORT_VERSION", "build_report", "cell_status", "render_table"]

REPORT_VERSION = 1

_ORDER = {"failed": 0, "warn": 1, "skipped": 2, "passed": 3}


def build_report(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    outcomes = Counter(r["outcome"] for r in records)
    failed_errors = sum(
        1 for r in records if r["outcome"] == Outcome.FAILED and r["severity"] == Severity.ERROR
    )
    return {
        "version": REPORT_VERSION,
        "results": [dict(r) for r in records],
        "summary": {
            "targets": len({r["target"] for r in records}),
            "tools": len({(r["target"], r["tool"]) for r in records if r["tool"] != "*"}),
            "checks": len(records),
            "passed": outcomes.get(Outcome.PASSED, 0),
            "failed": outcomes.get(Outcome.FAILED, 0),
            "skipped": outcomes.get(Outcome.SKIPPED, 0),
            "errors": failed_errors,
            "warnings": outcomes.get(Outcome.FAILED, 0) - failed_errors,
        },
    }


def cell_status(records: Iterable[Mapping[str, Any]]) -> str:
    """One table cell: the worst outcome among the records of a tool and a category."""
    worst = "-"
    for r in records:
        if r["outcome"] == Outcome.FAILED:
            status = "FAIL" if r["severity"] == Severity.ERROR else "warn"
        elif r["outcome"] == Outcome.SKIPPED:
            status = "skip"
        else:
            status = "ok"
        if worst == "-" or _rank(status) < _rank(worst):
            worst = status
    return worst


def _rank(status: str) -> int:
    return {"FAIL": 0, "warn": 1, "ok": 2, "skip": 3, "-": 4}[status]


def render_table(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """A compact table per target: tools down, the nine categories across."""
    lines: list[str] = []
    categories = [c.value for c in Category]
    headers = [
        "naming",
        "descr",
        "schema",
        "provid",
        "result",
        "errors",
        "cancel",
        "timeout",
        "concur",
    ]
    targets: dict[str, dict[str, list[Mapping[str, Any]]]] = {}
    for r in records:
        targets.setdefault(r["target"], {}).setdefault(r["tool"], []).append(r)
    for target, tools in targets.items():
        names = [t for t in tools if t != "*"]
        width = max([len("tool"), *(len(t) for t in names)])
        width = min(width, 40)
        counts = Counter(cell_status([r]) for rs in tools.values() for r in rs)
        lines.append(
            f"{target}: {len(names)} tools, {counts.get('ok', 0)} passed,"
            f" {counts.get('FAIL', 0)} failed, {counts.get('warn', 0)} warnings,"
            f" {counts.get('skip', 0)} skipped"
        )
        target_level = tools.get("*", [])
        load_failures = [r for r in target_level if r["outcome"] == Outcome.FAILED]
        for r in load_failures:
            lines.append(f"  {r['check']} FAIL: {r['message']}")
        if not names:
            lines.append("")
            continue
        lines.append("  " + "tool".ljust(width) + "  " + "  ".join(h.ljust(7) for h in headers))
        for name in names:
            row = [cell_status(r for r in tools[name] if r["category"] == c) for c in categories]
            shown = name if len(name) <= width else name[: width - 1] + "…"
            lines.append("  " + shown.ljust(width) + "  " + "  ".join(s.ljust(7) for s in row))
        lines.append("")
    return lines
