"""The report readers' parts on their own: escaping, annotations, the summary, the page's HTML."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_toolnexus import html as html_cli
from pytest_toolnexus._declared_at import mcp_json_line
from pytest_toolnexus._github import (
    annotation,
    annotation_lines,
    escape_data,
    escape_property,
    summary_markdown,
)
from pytest_toolnexus._html import render_html
from pytest_toolnexus._output_options import OutputSettings, read_outputs
from pytest_toolnexus._outputs import ReportOutputs, reads_report
from pytest_toolnexus._report_view import Grid, ReportError, load_report, status_of

HOSTILE = "<script>alert('x')</script> & \"quoted\""


def record(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "target": "pkg.tools:kit",
        "tool": "lookup",
        "check": "TN102",
        "category": "naming",
        "severity": "error",
        "outcome": "failed",
        "message": "the name 'lookup x' contains characters outside [a-zA-Z0-9_-]: ' '",
        "findings": ["the name 'lookup x' contains characters outside [a-zA-Z0-9_-]: ' '"],
    }
    return base | overrides


def report_of(*records: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "complete": True, "interrupted": None, "results": list(records)}


def test_workflow_command_escaping_follows_the_runner() -> None:
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    line = annotation("error", "line one\nline: two, 100%", file="src/a,b.py", line=3, title="T: x")
    assert line == "::error file=src/a%2Cb.py,line=3,title=T%3A x::line one%0Aline: two, 100%25"
    assert annotation("warning", "m", file=None, line=None) == "::warning::m"


def test_annotations_point_at_the_declaration_inside_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    records = [
        record(declared_at={"file": "src/pkg/tools.py", "line": 12}),
        record(tool="other", severity="warning", check="TN401", category="provider"),
        record(tool="far", declared_at={"file": "/elsewhere/site-packages/x.py", "line": 5}),
        record(tool="fine", outcome="passed"),
        record(tool="old", baseline="accepted"),
        record(tool="*", check="TN001", category="errors", kit_failure=True, outcome="skipped"),
    ]
    lines = annotation_lines(records, rootdir=workspace, workspace=workspace)
    assert len(lines) == 4, lines  # neither the pass nor the accepted finding
    assert lines[0].startswith(
        "::error file=src/pkg/tools.py,line=12,title=TN102 name-charset%3A lookup::"
    )
    assert "%0Afix: Rename the tool" in lines[0]
    assert lines[1].startswith("::warning title=TN401 openai-name%3A other::")
    assert lines[2].startswith("::error title=TN102 name-charset%3A far::")  # outside: no file
    assert lines[3].startswith("::error title=TN001 target-loads%3A the target::the kit could not")
    fixed = record(tool="mended", baseline="fixed", outcome="passed")
    assert annotation_lines([fixed], rootdir=workspace, workspace=workspace) == [
        "::notice title=TN102%3A mended is fixed::the baseline accepts TN102 for mended"
        " (pkg.tools:kit), which no longer fails: remove it from the baseline"
    ]
    strict = annotation_lines(records[1:2], rootdir=workspace, workspace=None, strict=True)
    assert strict[0].startswith("::error ")


def test_summary_has_counts_grid_failures_and_accepted_apart() -> None:
    report = report_of(
        record(),
        record(tool="lookup", check="TN201", category="description", outcome="passed"),
        record(tool="a|b", check="TN301", category="schema", severity="warning"),
        record(tool="legacy", baseline="accepted", baseline_reason="known, ticket 12"),
        record(tool="fixed", baseline="fixed", outcome="passed"),
    )
    text = summary_markdown(report, html="reports/page.html")
    assert text.startswith("## ❌ toolnexus conformance\n")
    assert "**1 failed**, 1 failed with a warning, 0 not judged, 2 accepted by the baseline" in text
    assert "`reports/page.html`" in text
    assert "| lookup | ❌ FAIL | ✅ |" in text
    assert "| a\\|b |" in text  # a pipe in a name does not break the table
    failures, accepted = text.split("### Failures", 1)[1].split("<details>", 1)
    assert "`lookup`" in failures
    assert "`legacy`" not in failures
    assert "☑️ accepted **TN102** `legacy`" in accepted
    assert "no longer fails **TN102** `fixed`" in accepted


def test_cells_rank_the_worst_status_first() -> None:
    grid = Grid.of(
        [
            record(outcome="passed"),
            record(check="TN101", baseline="accepted"),
            record(check="TN103", severity="warning"),
        ]
    )
    assert grid.cells["pkg.tools:kit"]["lookup"]["naming"] == "warn"
    assert status_of(record(baseline="accepted")) == "accepted"
    assert status_of(record(baseline="fixed", outcome="passed")) == "ok"
    assert status_of(record(outcome="skipped", kit_failure=True)) == "kit"


def test_the_page_escapes_every_value_and_needs_no_network() -> None:
    page = render_html(
        report_of(
            record(tool=HOSTILE, message=HOSTILE, findings=[HOSTILE], target=HOSTILE),
            record(
                tool="sent",
                check="TN651",
                category="errors",
                evidence=[{"sent": '{"q": "</pre><b>"}', "got": HOSTILE}],
                findings=["valid arguments got a JSON-RPC error"],
            ),
        )
    )
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;/pre&gt;&lt;b&gt;" in page
    assert page.count("<script>") == 1  # the page's own, inline
    # Nothing is loaded from anywhere (a reference's URL is text, not a link).
    for remote in ('href="http', 'href="//', "src=", "@import", "url("):
        assert remote not in page, remote
    assert "Catch exceptions in the tool handler" in page  # the catalog's fix for TN651


def test_the_page_shows_accepted_findings_apart_and_works_without_the_key() -> None:
    plain = render_html(report_of(record()))
    assert "No finding is accepted by a baseline" in plain
    page = render_html(
        report_of(record(), record(tool="legacy", baseline="accepted", baseline_reason="ticket 7"))
    )
    failures, accepted = page.split('<section id="accepted">', 1)
    assert 'id="r0"' in failures
    assert 'id="r1"' not in failures
    assert 'id="r1"' in accepted
    assert "ticket 7" in accepted


def test_an_incomplete_run_says_so() -> None:
    report = report_of(record(outcome="passed")) | {
        "complete": False,
        "interrupted": "SIGTERM",
        "not_judged": ["a", "b"],
    }
    assert "Incomplete run: SIGTERM; 2 item(s) not judged" in render_html(report)


def test_mcp_json_line_is_the_server_entry() -> None:
    one = '{\n  "mcpServers": {\n    "files": {"command": "x"}\n  }\n}\n'
    assert mcp_json_line(one, "read_file") == 3
    two = '{"servers": {\n"git": {},\n"git_lab": {}\n}}'
    assert mcp_json_line(two, "git_lab_issue") == 3
    assert mcp_json_line(two, "git_log") == 2
    assert mcp_json_line(two, "other") == 1
    assert mcp_json_line("not json", "x") == 1


def test_the_command_renders_a_report_and_refuses_what_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "report.json"
    source.write_text(json.dumps(report_of(record(), {"not": "a record"})))
    out = tmp_path / "deep" / "page.html"
    assert html_cli.main([str(source), str(out)]) == 0
    assert "TN102" in out.read_text()
    assert len(load_report(source)["results"]) == 1
    (tmp_path / "bad.json").write_text('{"results": 3}')
    assert html_cli.main([str(tmp_path / "bad.json"), str(out)]) == 2
    assert html_cli.main([str(tmp_path / "missing.json"), str(out)]) == 2
    err = capsys.readouterr().err
    assert "is not a toolnexus report (it has no 'results' list)" in err
    assert "cannot read" in err
    (tmp_path / "text.json").write_text("{")
    with pytest.raises(ReportError, match="is not JSON"):
        load_report(tmp_path / "text.json")


def test_output_settings_from_the_ini_and_the_command_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only this plugin: the others installed here take seconds to load, three times.
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    only = ("-p", "pytest_toolnexus.plugin")
    pytester.makeini("[pytest]\ntoolnexus_html = pages/page.html\ntoolnexus_github = off\n")
    config = pytester.parseconfig(*only)
    settings = read_outputs(config)
    assert settings == OutputSettings(html=pytester.path / "pages" / "page.html", github="off")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    owner = SimpleNamespace(config=SimpleNamespace(rootpath=pytester.path))
    assert not ReportOutputs(owner, settings)._github()  # type: ignore[arg-type]
    given = read_outputs(pytester.parseconfig(*only, "--toolnexus-github", "auto"))
    assert ReportOutputs(owner, given)._github()  # type: ignore[arg-type]
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    assert not ReportOutputs(owner, given)._github()  # type: ignore[arg-type]
    pytester.makeini("[pytest]\ntoolnexus_github = sometimes\n")
    with pytest.raises(pytest.UsageError, match="toolnexus_github must be one of auto, on, off"):
        read_outputs(pytester.parseconfig(*only))


def test_the_report_is_read_for_the_page_or_the_github_output_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whether the run keeps its records: a reader this misses would find none.
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    assert reads_report(OutputSettings(html=tmp_path / "page.html", github="off"))
    assert reads_report(OutputSettings(html=None, github="on"))
    assert not reads_report(OutputSettings(html=None, github="auto"))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert reads_report(OutputSettings(html=None, github="auto"))
    assert not reads_report(OutputSettings(html=None, github="off"))


def test_a_records_evidence_is_short_text_even_of_a_value_that_cannot_be_shown() -> None:
    from toolnexus_conformance._model import Finding, Outcome, Verdict
    from toolnexus_conformance._registry import load_catalog

    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    info = load_catalog()["TN651"].info
    findings = (
        Finding("crashed", sent={"q": "x" * 1000}, got=Hostile()),
        Finding("no evidence"),
    )
    record = Verdict("t", "tool", info, Outcome.FAILED, "crashed", findings).as_record()
    sent = record["evidence"][0]["sent"]
    assert sent.startswith('{"q": "xxx')
    assert sent.endswith("(1,009 characters)")
    assert record["evidence"] == [
        {"sent": sent, "got": "<Hostile that cannot be shown>"},
        {},
    ]
    plain = Verdict("t", "tool", info, Outcome.FAILED, "m", (Finding("m"),)).as_record()
    assert "evidence" not in plain
