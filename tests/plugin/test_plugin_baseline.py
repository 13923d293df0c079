"""The baseline's whole cycle through real sessions: write it, accept, a finding fixed, a new one.

One project goes through four runs, as a team adopting the suites would: the first
writes the baseline, the second passes with the accepted findings as xfail, the
third has one accepted finding fixed (its item fails, as ``xfail(strict=True)``
does, without ``--toolnexus-strict``) and one new finding (it fails as it would
without a baseline), the fourth rewrites the file under xdist with part of the
run deselected (what was not judged is kept). Each run has a copy of the project as
the run before left it: what each run left is still there when the test reads it.
"""

from __future__ import annotations

import json
import shutil
import textwrap
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, Session, SessionAfter, early, start_session

from pytest_toolnexus._options import (
    BASELINE,
    CONFORMANCE,
    ONLY,
    REPORT,
    SELECT,
    TARGET,
    UPDATE_BASELINE,
)
from pytest_toolnexus.update_baseline import main as update_baseline

TOOLS = """
from toolnexus_ref import BaseTool

from mydescription import DESCRIPTION

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


class Good(BaseTool):
    name = "good"
    description = "Answer ok."
    input_schema = SCHEMA

    def run(self, args, ctx):
        return "ok"


class Bad(BaseTool):
    name = "bad tool"  # TN102: a space in the name
    description = "Answer ok."
    input_schema = SCHEMA

    def run(self, args, ctx):
        return "ok"


class Terse(BaseTool):
    name = "terse"
    description = DESCRIPTION  # TN201 while empty
    input_schema = SCHEMA

    def run(self, args, ctx):
        return "ok"


class New(BaseTool):
    name = "new tool"
    description = "Answer ok."
    input_schema = SCHEMA

    def run(self, args, ctx):
        return "ok"
"""

LABEL = "mytools:tools"

#: Each run's options: the baseline file and the report, in the project.
RUN = [
    "-p",
    "no:cacheprovider",
    "-rxXf",
    CONFORMANCE,
    ONLY,
    TARGET,
    LABEL,
    SELECT,
    "TN102,TN201",
    "--toolnexus-execute",
    "none",
    "--toolnexus-isolation",
    "none",
    BASELINE,
    "baseline.toml",
    REPORT,
    "report.json",
]


def write_tools(project: Path, *, fixed: bool) -> None:
    """The first runs' tools; ``fixed``: terse has a description, and a new tool is misnamed."""
    listed = "Good(), Bad(), Terse()" + (", New()" if fixed else "")
    (project / "mytools.py").write_text(TOOLS + f"\n\ntools = [{listed}]\n")
    description = "Answer ok." if fixed else ""
    (project / "mydescription.py").write_text(f"DESCRIPTION = {description!r}\n")


def start_run(project: Path, *extra: str) -> RunningSession:
    return start_session(project, *RUN, *extra, timeout=180)


def run_after(
    previous: RunningSession | SessionAfter,
    project: Path,
    change: Callable[[Path], None],
    *extra: str,
) -> SessionAfter:
    """A run in ``project`` once ``previous`` has ended: the project as that run left it
    (its baseline above all), less its report, then changed by ``change``."""

    def start(ended: Session) -> RunningSession:
        leftovers = shutil.ignore_patterns("report.json", "runpytest-*")
        shutil.copytree(ended.path, project, ignore=leftovers)
        change(project)
        return start_run(project, *extra)

    return SessionAfter(previous, start)


def add_a_reason_and_a_foreign_entry(project: Path) -> None:
    """A reason, by hand; and an entry for a target the runs do not have."""
    baseline = project / "baseline.toml"
    text = baseline.read_text()
    baseline.write_text(
        text.replace('TN102 = ""', 'TN102 = "renamed in 2.0"')
        + '\n[accepted.elsewhere.x]\nTN102 = ""\n'
    )


def leave_as_is(project: Path) -> None:
    """The project as the run before left it."""


@early
def cycle(folder: Path) -> list[RunningSession | SessionAfter]:
    """The cycle's four runs, each once the one before has ended, in a copy of the
    project as that one left it: each reads the baseline the one before wrote, and what
    each run left stays for the test to read. Started early: the first needs nothing
    the test sets up."""
    first = folder / "1"
    first.mkdir()
    write_tools(first, fixed=False)
    written = start_run(first, UPDATE_BASELINE)
    accepted = run_after(written, folder / "2", add_a_reason_and_a_foreign_entry)
    fixed = run_after(accepted, folder / "3", partial(write_tools, fixed=True))
    rewritten = run_after(
        fixed, folder / "4", leave_as_is, UPDATE_BASELINE, "-n", "2", "-k", "not bad"
    )
    return [written, accepted, fixed, rewritten]


def ran(step: RunningSession | SessionAfter) -> tuple[pytest.RunResult, dict[str, Any], Path]:
    """A run of the cycle, ended: what it printed, its report (``{}`` without one), and
    its project's baseline."""
    session = step.result()
    report = session.path / "report.json"
    found = json.loads(report.read_text()) if report.exists() else {}
    return session.run_result(), found, session.path / "baseline.toml"


def states(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
    return {(r["tool"], r["check"]): r.get("baseline", "absent") for r in report["results"]}


def entries(path: Path) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = tomllib.loads(path.read_text())["accepted"][LABEL]
    return found


def test_the_baseline_cycle(cycle: list[RunningSession | SessionAfter], tmp_path: Path) -> None:
    # 1. The first run writes the baseline: today's findings accepted, the run passes.
    result, report, baseline = ran(cycle[0])
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=4, xfailed=2)
    assert entries(baseline) == {"bad tool": {"TN102": ""}, "terse": {"TN201": ""}}
    result.stdout.fnmatch_lines(
        [f"baseline written to {baseline}: 2 accepted finding(s) (2 added, 0 removed)"]
    )
    assert report["summary"]["accepted"] == 2

    # A reason, by hand; and an entry for a target this run does not have: written
    # before the second run (``add_a_reason_and_a_foreign_entry``).

    # 2. The same tools: the accepted findings are xfail, with their reason; the run passes.
    result, report, baseline = ran(cycle[1])
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=4, xfailed=2, warnings=1)
    result.stdout.fnmatch_lines(
        [
            f"XFAIL toolnexus:{LABEL}::bad tool::TN102-name-charset -"
            " accepted in baseline.toml: TN102 (renamed in 2.0)",
            f"XFAIL toolnexus:{LABEL}::terse::TN201-* - accepted in baseline.toml: TN201",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(
        [
            "*BaselineWarning: baseline.toml: 1 entry name nothing this run collected*",
            f"*  elsewhere::x TN102: no target 'elsewhere'; the targets are: {LABEL}",
        ]
    )
    assert states(report) == {
        ("good", "TN102"): None,
        ("good", "TN201"): None,
        ("bad tool", "TN102"): "accepted",
        ("bad tool", "TN201"): None,
        ("terse", "TN102"): None,
        ("terse", "TN201"): "accepted",
    }
    accepted = [r for r in report["results"] if r["baseline"] == "accepted"]
    assert {r.get("baseline_reason") for r in accepted} == {"renamed in 2.0", None}
    assert all(r["outcome"] == "failed" for r in accepted)  # the check did fail
    assert report["baseline"] == str(baseline)
    assert (report["summary"]["failed"], report["summary"]["accepted"]) == (0, 2)
    result.stdout.fnmatch_lines(["  bad tool  xfail    ok*", "  terse     ok       xfail*"])

    # 3. One accepted finding fixed, one new finding: both fail, without --toolnexus-strict.
    result, report, baseline = ran(cycle[2])
    assert result.ret == 1
    result.assert_outcomes(passed=5, failed=2, xfailed=1, warnings=1)
    out = result.stdout.str()
    assert "[XPASS(strict)] accepted in baseline.toml, and no longer failing" in out
    assert f'  [accepted."{LABEL}".terse] TN201' in out
    result.stdout.fnmatch_lines(
        [
            f"FAILED toolnexus:{LABEL}::terse::TN201-* - Failed: *",
            f"FAILED toolnexus:{LABEL}::new tool::TN102-name-charset - *",
        ],
        consecutive=False,
    )
    assert "1 no longer fail (XPASS, failing the run)" in out
    found = states(report)
    assert (found[("terse", "TN201")], found[("new tool", "TN102")]) == ("fixed", "new")
    assert found[("bad tool", "TN102")] == "accepted"
    assert (report["summary"]["fixed"], report["summary"]["errors"]) == (1, 1)

    # 3b. The same rewrite from that run's report alone (a CI run's, or its shards'),
    # on a copy of the file: what --toolnexus-update-baseline would have written.
    copy = tmp_path / "copy.toml"
    copy.write_text(baseline.read_text())
    assert update_baseline([str(copy), str(baseline.parent / "report.json")]) == 0
    assert entries(copy) == {"bad tool": {"TN102": "renamed in 2.0"}, "new tool": {"TN102": ""}}
    assert tomllib.loads(copy.read_text())["accepted"]["elsewhere"] == {"x": {"TN102": ""}}

    # 4. Rewritten under xdist, "bad tool" deselected: its entry (and the foreign one) kept.
    result, report, baseline = ran(cycle[3])
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=5, xfailed=1)
    assert entries(baseline) == {"bad tool": {"TN102": "renamed in 2.0"}, "new tool": {"TN102": ""}}
    assert tomllib.loads(baseline.read_text())["accepted"]["elsewhere"] == {"x": {"TN102": ""}}
    result.stdout.fnmatch_lines(
        ["baseline written to *: 3 accepted finding(s) (1 added, 1 removed)"]
    )
    warned = [line.strip() for line in result.stdout.lines if "TN102: no" in line]
    assert set(warned) == {"elsewhere::x TN102: no target 'elsewhere'; the targets are: " + LABEL}


def test_update_needs_a_path_and_a_missing_baseline_stops_the_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(
        textwrap.dedent(
            """
            [pytest]
            toolnexus_targets = mytools:tools
            """
        )
    )
    result = pytester.runpytest_subprocess(CONFORMANCE, ONLY, UPDATE_BASELINE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{UPDATE_BASELINE} writes the file {BASELINE} PATH*"])
    result = pytester.runpytest_subprocess(CONFORMANCE, ONLY, BASELINE, "none.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*none.toml does not exist; write it with*"])


def test_a_baseline_is_rewritten_from_the_reports_of_a_runs_shards(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shard's verdicts, from its report: findings added, passes removed, reasons and
    what no report judged kept; a shard missing is named, a shard twice refused."""
    from toolnexus_conformance._report import REPORT_VERSION

    baseline = tmp_path / "baseline.toml"
    baseline.write_text(
        '[accepted.t.a]\nTN101 = "why"\n[accepted.t.b]\nTN102 = ""\n[accepted.u.c]\nTN103 = "kept"\n'
    )

    def report(name: str, shard: str, *records: tuple[str, str, str, str]) -> str:
        results = [
            dict(zip(("target", "tool", "check", "outcome"), r, strict=True)) for r in records
        ]
        data = {"version": REPORT_VERSION, "complete": True, "shard": shard, "results": results}
        (tmp_path / name).write_text(json.dumps(data))
        return str(tmp_path / name)

    first = report("1.json", "1/3", ("t", "a", "TN101", "failed"), ("t", "b", "TN102", "passed"))
    second = report("2.json", "2/3", ("t", "d", "TN104", "failed"), ("u", "*", "TN851", "failed"))
    assert update_baseline([str(baseline), first, second]) == 0
    assert tomllib.loads(baseline.read_text())["accepted"] == {
        "t": {"a": {"TN101": "why"}, "d": {"TN104": ""}},
        "u": {"*": {"TN851": ""}, "c": {"TN103": "kept"}},
    }
    out = capsys.readouterr().out
    assert "2 added, 1 removed" in out
    assert "shards not given: 3/3: the entries of their tools stay" in out
    again = report("again.json", "1/3")
    assert update_baseline([str(baseline), first, again]) == 2
    assert "are both shard 1/3" in capsys.readouterr().err
    (tmp_path / "old.json").write_text(json.dumps({"version": 0, "results": []}))
    assert update_baseline([str(baseline), str(tmp_path / "old.json")]) == 2
    assert "report version 0" in capsys.readouterr().err
