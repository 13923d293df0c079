"""A verdict record lives until its readers have read it, not in every report pytest keeps.

pytest keeps every test report until the run ends; the records they carried were most
of what a run of many tools held at its end. Once an item's teardown is reported, the
table, the JSON report and the baseline have taken what they need.
"""

from __future__ import annotations

import json

import pytest

TOOLS = """
from toolnexus_ref import BaseTool


def make(i):
    class Echo(BaseTool):
        name = f"tool_{i}"
        description = f"Returns its text unchanged (tool number {i})."
        input_schema = {"type": "object", "properties": {"text": {"type": "string"}}}

        def run(self, args, ctx):
            return args.get("text", "")

    return Echo()


tools = [make(i) for i in range(6)]
"""

#: At the session's very end, the records still alive (pytest's reports all are).
PROBE = """
import gc

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    alive = [
        o for o in gc.get_objects()
        if isinstance(o, dict) and o.get("target") == "recordtools:tools" and "outcome" in o
    ]
    print(f"records alive at the end: {len(alive)}")
"""


def test_reports_kept_to_the_end_hold_no_records_and_the_outputs_have_them_all(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(recordtools=TOOLS, conftest=PROBE)
    pytester.syspathinsert()
    args = ["-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-only", "-s"]
    args += ["--toolnexus-execute", "none", "--toolnexus-target", "recordtools:tools"]
    args += ["--toolnexus-select", "naming,description", "--toolnexus-report", "report.json"]
    result = pytester.runpytest(*args)
    out = result.stdout.str()
    assert result.ret == 0, out
    records = json.loads((pytester.path / "report.json").read_text())["results"]
    tools = {record["tool"] for record in records if record["tool"] != "*"}
    assert tools == {f"tool_{i}" for i in range(6)}
    assert len(records) > 12
    result.stdout.fnmatch_lines(["  tool_0  *ok*"])  # the table read them too
    assert "records alive at the end: 0" in out, out
