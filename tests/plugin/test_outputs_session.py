"""One real run under GitHub Actions' variables: annotations, the job summary, JUnit, the HTML page.

The run has a Python target and an ``mcp.json`` target, each with a failing tool,
so that the annotations point at both kinds of declaration: the Python class's
file and line, and the line of the server's entry in ``mcp.json``.
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import toolnexus_conformance

import pytest_toolnexus
import toolnexus_ref

TOOLS = """
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


python_tools = [Misnamed()]
served_tools = [Hidden()]
"""


def _kit_path(pytester: pytest.Pytester) -> str:
    """Where the kit and the test's module import from, for the MCP server's process."""
    roots = [Path(m.__file__ or "").parent.parent for m in (toolnexus_ref, toolnexus_conformance)]
    roots.append(Path(pytest_toolnexus.__file__ or "").parent.parent)
    return os.pathsep.join(dict.fromkeys([*map(str, roots), str(pytester.path)]))


def test_github_annotations_summary_junit_properties_and_html(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(kittools=TOOLS)
    pytester.syspathinsert()
    server = {
        "command": sys.executable,
        "args": ["-m", "toolnexus_ref.mcp.serve_cli", "kittools:served_tools"],
        "env": {"PYTHONPATH": _kit_path(pytester)},
    }
    (pytester.path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"served": server}}, indent=2)
    )
    pytester.makeini("[pytest]\ntoolnexus_html = pages/toolnexus.html\n")
    summary = pytester.path / "step-summary.md"
    summary.write_text("## an earlier step\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_WORKSPACE", str(pytester.path))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-execute",
        "none",
        "--toolnexus-select",
        "naming,description",
        "--toolnexus-target",
        "kittools:python_tools",
        "--toolnexus-target",
        "mcp.json",
        "--junitxml",
        "junit.xml",
    )
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    commands = [line for line in result.outlines if line.startswith("::")]
    assert commands == [
        "::error file=kittools.py,line=4,title=TN102 name-charset%3A bad tool::the name 'bad tool'"
        " contains characters outside [a-zA-Z0-9_-]: ' '%0Atarget: kittools:python_tools%0Afix:"
        " Rename the tool, or pass the name through `toolnexus_ref.sanitize`, which replaces"
        " every other character with `_`.",
        "::warning file=mcp.json,line=3,title=TN203 description-control-characters%3A"
        " served_hidden::the description contains 1 control or invisible character(s); the first"
        " is U+200B at offset 15%0Atarget: mcp.json%0Afix: Remove the characters (tab, newline"
        " and carriage return are fine); if they came from a third-party server, treat that"
        " server's tools as untrusted.",
    ], out
    assert "HTML report written to pages/toolnexus.html" in out

    text = summary.read_text()
    assert text.startswith("## an earlier step\n## ❌ toolnexus conformance\n"), text
    assert "**1 failed**, 1 failed with a warning" in text
    assert "The HTML report, `pages/toolnexus.html`, has each failure's details." in text
    assert "| bad tool | ❌ FAIL | ✅ |" in text
    assert "| served\\_hidden | ✅ | ⚠️ warn |" in text
    assert "- ❌ FAIL **TN102** `bad tool` (kittools:python\\_tools):" in text

    cases = list(ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"))
    # The documented properties and nothing else: the kit's own verdict records (once a
    # Python dict's repr per test case) are not JUnit properties.
    names = {p.get("name") for case in cases for p in case.iter("property")}
    assert names == {
        f"toolnexus.{key}" for key in ("target", "tool", "check", "category", "severity")
    }
    properties = [
        {
            p.get("name"): p.get("value")
            for p in case.iter("property")
            if (p.get("name") or "").startswith("toolnexus.")
        }
        for case in cases
    ]
    outcomes = result.parseoutcomes()
    assert len(properties) == outcomes["passed"] + outcomes["failed"]
    assert all(props.get("toolnexus.check") for props in properties), properties
    assert {
        "toolnexus.target": "kittools:python_tools",
        "toolnexus.tool": "bad tool",
        "toolnexus.check": "TN102",
        "toolnexus.category": "naming",
        "toolnexus.severity": "error",
    } in properties

    page = (pytester.path / "pages" / "toolnexus.html").read_text()
    assert page.count('<details class="finding"') == 2
    assert "kittools.py:4" in page  # where the tool is declared, in its screen
