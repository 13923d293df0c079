"""Rewrite a baseline from JSON reports, as ``--toolnexus-update-baseline`` rewrites it from a run.

Run:  python -m pytest_toolnexus.update_baseline toolnexus-baseline.toml report.json ...

A run split over CI shards updates a baseline only with its own shard's verdicts:
each shard would write a different file. The shards' reports (or the report they
were merged into) hold every verdict, so the file is rewritten from them instead,
by the same rule: every finding is added, every listed check that passed is
removed, reasons already written are kept, and entries the reports do not judge
stay. Also for a report kept from a CI run: accept its findings without running the
suites again. Reports of another format version, and a shard given twice, are
refused; shards missing from a set are named (their tools' entries stay as they
were).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._baseline import Baseline, BaselineError
from .merge_reports import MergeError, shards_given

__all__ = ["main", "update"]


def _read(path: Path) -> dict[str, Any]:
    """The report's well-formed records (``load_report``), of this kit's format version."""
    from toolnexus_conformance._report import REPORT_VERSION

    from ._report_view import ReportError, load_report

    try:
        data = load_report(path)
    except ReportError as exc:
        raise BaselineError(str(exc)) from None
    if data.get("version") != REPORT_VERSION:
        raise BaselineError(
            f"{path}: report version {data.get('version')!r}; this kit reads version"
            f" {REPORT_VERSION}: update from reports of the same kit version"
        )
    return data


def _missing_shards(reports: Sequence[tuple[Path, dict[str, Any]]]) -> list[str]:
    """The shards of the reports' run that were not given (``K/N``); a shard twice is an error."""
    try:
        given = shards_given(reports)
    except MergeError as exc:
        raise BaselineError(str(exc)) from None
    totals = sorted({int(shard.split("/")[1]) for shard in given})
    return [f"{k}/{n}" for n in totals for k in range(1, n + 1) if f"{k}/{n}" not in given]


def update(baseline: Path, reports: Sequence[Path]) -> tuple[Baseline, list[str]]:
    """Rewrite ``baseline`` from ``reports``; the baseline written, and what to say of it."""
    if not reports:
        raise BaselineError("no report to update the baseline from")
    read = [(path, _read(path)) for path in reports]
    notes = [
        f"{path}: incomplete ({r.get('interrupted')})" for path, r in read if not r.get("complete")
    ]
    missing = _missing_shards(read)
    if missing:
        notes.append(f"shards not given: {', '.join(missing)}: the entries of their tools stay")
    accepted = Baseline.read(baseline, updating=True)
    for _, report in read:
        for record in report["results"]:
            accepted.observe(record)
    accepted.write()
    return accepted, notes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_toolnexus.update_baseline",
        description="Rewrite a baseline from the JSON reports of a conformance run.",
    )
    parser.add_argument("baseline", type=Path, help="the baseline file (created if missing)")
    parser.add_argument("reports", type=Path, nargs="+", help="the run's reports (its shards')")
    args = parser.parse_args(argv)
    try:
        accepted, notes = update(args.baseline, args.reports)
    except BaselineError as exc:
        print(f"update_baseline: {exc}", file=sys.stderr)
        return 2
    for line in [*accepted.summary_lines(), *notes]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
