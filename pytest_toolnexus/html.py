"""Render a JSON report as the HTML page: ``python -m pytest_toolnexus.html report.json out.html``.

For a report the run did not render itself: one merged from shards, or one kept
from an earlier run. The page is the one ``--toolnexus-html`` writes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "write_html"]


def write_html(report: Path, out: Path) -> None:
    """Read ``report`` (a toolnexus JSON report) and write its page to ``out``."""
    from ._html import render_html
    from ._report_view import load_report

    page = render_html(load_report(report))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.tmp")
    partial.write_text(page, encoding="utf-8")
    partial.replace(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_toolnexus.html",
        description="Render a toolnexus JSON report (--toolnexus-report) as a self-contained"
        " HTML page.",
    )
    parser.add_argument("report", type=Path, help="the JSON report")
    parser.add_argument("out", type=Path, help="the HTML file to write")
    args = parser.parse_args(argv)
    from ._report_view import ReportError

    try:
        write_html(args.report, args.out)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"HTML report written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
