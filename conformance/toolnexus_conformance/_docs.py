"""The catalog as a markdown page: docs/checks.md is generated here, never written by hand.

Regenerate with ``python -m toolnexus_conformance._docs > docs/checks.md``; a test
fails when the committed page differs from what the live catalog renders.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from ._model import Category, CheckInfo
from ._registry import load_catalog

__all__ = ["REGENERATE", "render_catalog"]

REGENERATE = ".venv/bin/python -m toolnexus_conformance._docs > docs/checks.md"

_CATEGORY_BLURB = {
    Category.NAMING: "The name a model calls a tool by, and the source it declares.",
    Category.DESCRIPTION: "The text a model reads to choose a tool.",
    Category.SCHEMA: "The input schema: plain, bounded, valid JSON Schema for an object.",
    Category.PROVIDER: "Would each provider accept the declaration as it is? "
    "Warnings: a tool may target one provider only.",
    Category.RESULT: "The shape of what `execute` returns.",
    Category.ERRORS: "Failures come back as error results, never as exceptions.",
    Category.CANCELLATION: "A cancelled call ends promptly.",
    Category.TIMEOUT: "A deadline is honoured.",
    Category.CONCURRENCY: "Concurrent calls are kept apart.",
}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _entry(info: CheckInfo) -> list[str]:
    kind = "live (calls the tool)" if info.live else "static (reads the declaration)"
    facts = [
        f"**{info.severity.value}**",
        kind,
        f"scope: {info.scope.value}",
    ]
    if info.sources:
        facts.append("sources: " + ", ".join(sorted(info.sources)))
    lines = [
        f"### {info.code} `{info.slug}`",
        "",
        f"**{_cell(info.title)}**: " + " · ".join(facts),
        "",
        f"- Why: {_cell(info.why)}",
        f"- Fix: {_cell(info.fix)}",
    ]
    if info.reference:
        lines.append(f"- Reference: {_cell(info.reference)}")
    lines.append("")
    return lines


def render_catalog(infos: Iterable[CheckInfo] | None = None) -> str:
    """Markdown for every check, grouped by category in catalog order, sorted by code."""
    entries = list(load_catalog().infos() if infos is None else infos)
    out = [
        "# Conformance checks",
        "",
        "<!-- Generated from the catalog: do not edit. Regenerate with:",
        f"     {REGENERATE} -->",
        "",
        "Every check has a stable code. Select or ignore checks by code prefix (`TN3` is every "
        "schema check), category or slug. Errors fail the run; warnings fail it only in "
        "strict mode.",
        "",
        "| Code | Slug | Category | Severity | Title |",
        "| --- | --- | --- | --- | --- |",
    ]
    ordered = sorted(entries, key=lambda i: (list(Category).index(i.category), i.code))
    out += [
        f"| [{i.code}](#{i.code.lower()}-{i.slug}) | `{i.slug}` | {i.category.value} | "
        f"{i.severity.value} | {_cell(i.title)} |"
        for i in ordered
    ]
    out.append("")
    for category in Category:
        members = [i for i in ordered if i.category is category]
        if not members:
            continue
        out += [f"## {category.value}", "", _CATEGORY_BLURB[category], ""]
        for info in members:
            out += _entry(info)
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> None:
    sys.stdout.write(render_catalog())


if __name__ == "__main__":
    main()
