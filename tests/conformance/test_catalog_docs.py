"""docs/checks.md is generated from the live catalog; this fails when it is stale.

Regenerate with: .venv/bin/python -m toolnexus_conformance._docs > docs/checks.md
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolnexus_conformance._docs import REGENERATE, render_catalog
from toolnexus_conformance._registry import load_catalog

PAGE = Path(__file__).resolve().parents[2] / "docs" / "checks.md"


def test_checks_page_is_up_to_date() -> None:
    assert PAGE.exists(), f"docs/checks.md is missing; run: {REGENERATE}"
    assert PAGE.read_text(encoding="utf-8") == render_catalog(), (
        f"docs/checks.md is stale (a check was added or changed); run: {REGENERATE}"
    )


def test_every_check_is_on_the_page() -> None:
    page = render_catalog()
    for info in load_catalog().infos():
        assert f"### {info.code} `{info.slug}`" in page
        assert f"](#{info.code.lower()}-{info.slug})" in page
        if info.reference:
            assert info.reference.split()[0] in page


def test_render_groups_by_category_in_order() -> None:
    page = render_catalog()
    headings = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    order = [
        "naming",
        "description",
        "schema",
        "provider",
        "result",
        "errors",
        "cancellation",
        "timeout",
        "concurrency",
    ]
    assert headings == [c for c in order if c in headings]


def test_module_entry_point_prints_the_page() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "toolnexus_conformance._docs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert out == render_catalog()
