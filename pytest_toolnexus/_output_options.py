"""The options of the reports people read: the HTML page and the GitHub Actions output.

Imports only pytest: the entry point adds these options on every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["GITHUB", "GITHUB_MODES", "HTML", "OutputSettings", "add_output_options", "read_outputs"]

HTML = "--toolnexus-html"
GITHUB = "--toolnexus-github"
GITHUB_MODES = ("auto", "on", "off")


def add_output_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolnexus")
    group.addoption(
        HTML,
        default=None,
        dest="toolnexus_html",
        metavar="PATH",
        help="write a self-contained HTML report: the verdict grid, each failure's details,"
        " filters (also: python -m pytest_toolnexus.html report.json out.html).",
    )
    group.addoption(
        GITHUB,
        default=None,
        choices=GITHUB_MODES,
        dest="toolnexus_github",
        help="GitHub Actions annotations per failed check and a job summary: auto (default)"
        " when GITHUB_ACTIONS=true, on, or off.",
    )
    parser.addini("toolnexus_html", "path of the HTML report", default="")
    parser.addini("toolnexus_github", "auto | on | off: GitHub Actions output", default="")


@dataclass(frozen=True)
class OutputSettings:
    #: Where the HTML page goes, resolved against the directory pytest was run from.
    html: Path | None
    github: str


def read_outputs(config: pytest.Config) -> OutputSettings:
    raw = config.getoption("toolnexus_html") or str(config.getini("toolnexus_html")).strip()
    html = Path(str(config.invocation_params.dir)) / raw if raw else None
    github = (
        config.getoption("toolnexus_github")
        or str(config.getini("toolnexus_github")).strip()
        or "auto"
    )
    if github not in GITHUB_MODES:
        raise pytest.UsageError(
            f"ini key toolnexus_github must be one of {', '.join(GITHUB_MODES)}, got {github!r}"
        )
    return OutputSettings(html=html, github=github)
