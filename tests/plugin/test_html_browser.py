"""The HTML report as a person sees it, in a real headless Chromium (Debian's, driven by Playwright).

Two pages: the bundled example toolkit (everything passes), and a defective MCP
corpus server (``conformance/corpus/servers/seeded_bugs.py``) beside a Python
target with a misnamed tool and an invisible character in a description, so the
page has errors, a warning and several categories and targets to filter by. The
second is rendered from its JSON report by ``python -m pytest_toolnexus.html``,
after one finding is marked accepted as a baseline would mark it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _installed import skip_unless_installed
from _sessions import RunningSession, early, start_session

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        f"Debian's chromium is not installed at {CHROMIUM} (apt-get install -y chromium;"
        " .ci/run installs it where it runs as root with apt)",
        allow_module_level=True,
    )
PLAYWRIGHT_MISSING = "playwright (a test dependency) is not installed"
skip_unless_installed("playwright", reason=PLAYWRIGHT_MISSING)

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "conformance" / "corpus" / "servers" / "seeded_bugs.py"
#: Only Playwright's launch of a browser it did not download; no sandbox inside a container.
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: A Python target with a naming error and a description warning.
PYTHON_TOOLS = """
from toolnexus_ref import BaseTool


class Misnamed(BaseTool):
    name = "bad tool"
    description = "Return the text unchanged."
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def run(self, args, ctx):
        return "ok"


class Hidden(BaseTool):
    name = "hidden"
    description = "Return the text\\u200b unchanged."
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def run(self, args, ctx):
        return "ok"


tools = [Misnamed(), Hidden()]
"""
#: Three tools of the seeded server: two with a bug, one clean (the whole server takes minutes).
SEEDED = "seed_emoji or seed_nul or clean_text or kittools"


def _pytest(folder: Path, *args: str) -> RunningSession:
    """A session of the plugin in ``folder``, started (``result()`` waits for its end)."""
    return start_session(
        folder,
        "-p",
        "no:cacheprovider",
        "-q",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-seed",
        "1",
        *args,
        timeout=900,
    )


@early
def page_sessions(folder: Path) -> dict[str, RunningSession]:
    """The two sessions whose pages the tests open, each in a folder of its own.

    They share nothing and only their ends are read: started early, side by side, they
    run while other tests do (the defective server's session mostly waits on it).
    """
    example, defective = folder / "example", folder / "defective"
    example.mkdir()
    defective.mkdir()
    (defective / "kittools.py").write_text(PYTHON_TOOLS)
    return {
        "example": _pytest(
            example,
            "--toolnexus-target",
            "toolnexus_ref.examples:toolkit",
            "--toolnexus-html",
            "example.html",
        ),
        "defective": _pytest(
            defective,
            "--toolnexus-target",
            f"stdio:{sys.executable} {SERVER}",
            "--toolnexus-target",
            "kittools:tools",
            "-k",
            SEEDED,
            "--toolnexus-report",
            "defective.json",
        ),
    }


@pytest.fixture(scope="module")
def pages(page_sessions: dict[str, RunningSession]) -> dict[str, Path]:
    """The two pages: the example toolkit's as its session wrote it, the defective run's
    rendered from its report after one finding is marked accepted."""
    defective = page_sessions["defective"].result()
    example = page_sessions["example"].result()
    folder = defective.path
    assert example.ret == 0, example.text()
    assert defective.ret == 1, defective.text()
    report = json.loads((folder / "defective.json").read_text())
    # Both targets judged: a target that did not load is an item -k deselects, and
    # the page would show the other alone (the session's output says why).
    judged = {record["target"] for record in report["results"]}
    assert len(judged) == 2, f"judged {judged}\n{defective.text()[-9000:]}"
    for record in report["results"]:  # as a baseline would: one finding accepted, with a reason
        if record["tool"] == "seeded_seed_nul" and record["check"] == "TN651":
            record["baseline"] = "accepted"
            record["baseline_reason"] = "known: the NUL bug, fixed upstream next release"
    (folder / "defective.json").write_text(json.dumps(report))
    from pytest_toolnexus import html

    assert html.main([str(folder / "defective.json"), str(folder / "defective.html")]) == 0
    return {"example": example.path / "example.html", "defective": folder / "defective.html"}


class Watched:
    """A page with every console error, uncaught exception and non-file request it made."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("request", self._request)

    def _request(self, request: Any) -> None:
        if not request.url.startswith("file://"):
            self.requests.append(request.url)


@pytest.fixture(scope="module")
def sync_api() -> ModuleType:
    """Playwright's sync API, imported when a test here first runs rather than at collection."""
    return pytest.importorskip("playwright.sync_api", reason=PLAYWRIGHT_MISSING)


@pytest.fixture(scope="module")
def browser(sync_api: ModuleType) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    watched: list[Watched] = []

    def opener(path: Path) -> Watched:
        page = Watched(context.new_page())
        page.page.goto(path.as_uri())
        watched.append(page)
        return page

    yield opener
    context.close()
    for page in watched:
        assert page.errors == [], "the page logged console errors"
        assert page.requests == [], "the page asked the network for something"


def test_the_example_toolkit_page_is_a_green_grid(
    pages: dict[str, Path], open_page: Any, tmp_path: Path, sync_api: ModuleType
) -> None:
    watched = open_page(pages["example"])
    page = watched.page
    expect = sync_api.expect
    expect(page.locator("h1")).to_have_text("toolnexus conformance")
    rows = page.locator("#grid table.grid tbody tr")
    expect(rows).to_have_count(4)
    for tool in ("get_weather", "convert_units", "search_fares", "count_days"):
        expect(page.locator(f'#grid tr[data-tool="{tool}"] td')).to_have_count(9)
    expect(page.locator("#grid td.s-ok")).to_have_count(36)
    expect(page.locator("#grid td.s-FAIL")).to_have_count(0)
    expect(page.get_by_text("Every judged check passed.")).to_be_visible()
    expect(page.get_by_text("No check failed.")).to_be_visible()
    page.screenshot(path=str(tmp_path / "example.png"))


def test_the_defective_server_page_shows_failures_on_click_and_filters(
    pages: dict[str, Path], open_page: Any, tmp_path: Path, sync_api: ModuleType
) -> None:
    page = open_page(pages["defective"]).page
    expect = sync_api.expect
    grid = page.locator("#grid")
    expect(grid.locator(".target")).to_have_count(2)
    emoji = grid.locator('tr[data-tool="seeded_seed_emoji"] td[data-category="errors"]')
    expect(emoji).to_have_text("FAIL")
    expect(grid.locator('tr[data-tool="bad tool"] td[data-category="naming"]')).to_have_text("FAIL")
    expect(grid.locator('tr[data-tool="hidden"] td[data-category="description"]')).to_have_text(
        "warn"
    )
    nul = grid.locator('tr[data-tool="seeded_seed_nul"] td[data-category="errors"]')
    expect(nul).to_have_text("accepted")
    expect(grid.locator('tr[data-tool="seeded_clean_text"] td.s-FAIL')).to_have_count(0)
    page.screenshot(path=str(tmp_path / "defective-grid.png"))

    # A failure's screen is closed until a person clicks its cell in the grid.
    failures = page.locator("#failures details.finding")
    # One naming error, three provider warnings (the name again) and the invisible
    # character on kittools; one crash on the server (the NUL one is accepted).
    expect(failures).to_have_count(6)
    screen = page.locator("#failures details.finding", has_text="seeded_seed_emoji").locator(
        ".screen"
    )
    expect(screen).to_be_hidden()
    emoji.locator("a").click()
    expect(screen).to_be_visible()
    expect(screen).to_contain_text("TN651 mcp-error-result [errors, error]")
    expect(screen.locator(".evidence", has_text="sent")).to_contain_text('{"text": "')
    expect(screen.locator(".evidence", has_text="got")).to_contain_text("MCP error -32603")
    expect(screen.locator("dd.fix")).to_contain_text("Catch exceptions in the tool handler")
    page.screenshot(path=str(tmp_path / "defective-failure.png"))
    # ...or its line in the list.
    naming = page.locator("#failures details.finding", has_text="TN102")
    naming.locator("summary").click()
    expect(naming.locator(".screen")).to_contain_text("kittools.py:5")

    # The filters: by severity, by category (the grid keeps that column), by target.
    count = page.locator("#shown-count")
    expect(count).to_have_text("(6 of 6 shown)")
    page.select_option("#filter-severity", "warning")
    expect(count).to_have_text("(4 of 6 shown)")
    expect(failures.filter(visible=True).filter(has_text="TN203")).to_contain_text("hidden")
    expect(failures.filter(visible=True).filter(has_text="TN102")).to_have_count(0)
    page.select_option("#filter-severity", "")
    page.select_option("#filter-category", "errors")
    expect(count).to_have_text("(1 of 6 shown)")
    expect(failures.filter(visible=True)).to_contain_text("seeded_seed_emoji")
    expect(grid.locator('th[data-category="naming"]').first).to_be_hidden()
    expect(grid.locator('th[data-category="errors"]').first).to_be_visible()
    page.click("#filter-clear")
    page.select_option("#filter-target", "kittools:tools")
    expect(count).to_have_text("(5 of 6 shown)")
    expect(grid.locator(".target").filter(visible=True)).to_have_count(1)

    # The baseline's accepted finding is apart, with its reason, and fails nothing.
    accepted = page.locator("#accepted details.finding")
    page.click("#filter-clear")
    expect(accepted).to_have_count(1)
    accepted.locator("summary").click()
    expect(accepted).to_contain_text("known: the NUL bug, fixed upstream next release")
    expect(page.locator("#failures")).not_to_contain_text("seeded_seed_nul")
