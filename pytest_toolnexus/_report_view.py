"""The JSON report as its readers see it: cell statuses, failures, accepted findings.

The HTML page and the GitHub summary read the report's data only (a file, or the
dict the run builds), so a report merged from shards renders as a run's own does.
A record the baseline lists carries ``baseline``: ``accepted`` (it still fails) or
``fixed`` (it passes now), and its ``baseline_reason``; a report without that key
has nothing accepted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolnexus_conformance._model import Category

__all__ = [
    "CATEGORIES",
    "CheckText",
    "Grid",
    "ReportError",
    "check_text",
    "is_accepted",
    "is_problem",
    "load_report",
    "status_of",
    "worst",
]

#: The nine categories, in the terminal table's order (the catalog's own).
CATEGORIES = tuple(category.value for category in Category)
#: Worst first: a cell shows the worst status of its records.
_RANK = {"FAIL": 0, "warn": 1, "kit": 2, "accepted": 3, "ok": 4, "skip": 5, "-": 6}


class ReportError(Exception):
    """A file that is not a toolnexus JSON report; the message says what is wrong."""


def load_report(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReportError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ReportError(f"{path} is not a toolnexus report (it has no 'results' list)")
    data["results"] = [r for r in data["results"] if _is_record(r)]
    return data


def _is_record(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(k), str) for k in ("target", "tool", "check", "outcome")
    )


def is_accepted(record: Mapping[str, Any]) -> bool:
    """Whether the baseline lists the record's finding (still failing, or fixed)."""
    return record.get("baseline") in ("accepted", "fixed")


def status_of(record: Mapping[str, Any]) -> str:
    """A record's status in a cell: ``FAIL``, ``warn``, ``kit``, ``accepted``, ``ok``, ``skip``."""
    outcome = record.get("outcome")
    if record.get("kit_failure"):
        return "kit"
    if is_accepted(record) and outcome != "passed":
        return "accepted"
    if outcome == "failed":
        return "FAIL" if record.get("severity") == "error" else "warn"
    if outcome == "passed":
        return "ok"
    return "skip"


def is_problem(record: Mapping[str, Any]) -> bool:
    """Failed (error or warning) or not judged by the kit, and not accepted."""
    return status_of(record) in ("FAIL", "warn", "kit")


def worst(statuses: Iterable[str]) -> str:
    found = "-"
    for status in statuses:
        if _RANK.get(status, 5) < _RANK.get(found, 6):
            found = status
    return found


@dataclass
class Grid:
    """Target -> tool -> category -> worst status; target-wide records apart (tool ``*``)."""

    cells: dict[str, dict[str, dict[str, str]]]

    @classmethod
    def of(cls, records: Iterable[Mapping[str, Any]]) -> Grid:
        cells: dict[str, dict[str, dict[str, str]]] = {}
        for record in records:
            tools = cells.setdefault(str(record["target"]), {})
            row = tools.setdefault(str(record["tool"]), {})
            category = str(record.get("category", ""))
            row[category] = worst((row.get(category, "-"), status_of(record)))
        return cls(cells)


@dataclass(frozen=True)
class CheckText:
    """A check's catalog text; empty strings for a code this kit does not know."""

    slug: str = ""
    title: str = ""
    why: str = ""
    fix: str = ""
    reference: str = ""


def check_text(code: str) -> CheckText:
    """The catalog's words for a check (a report from another version may name others)."""
    from toolnexus_conformance._registry import load_catalog

    catalog = load_catalog()
    if code not in catalog:
        return CheckText()
    info = catalog[code].info
    return CheckText(info.slug, info.title, info.why, info.fix, info.reference or "")
