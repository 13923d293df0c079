"""A local Python MCP server's tools: the values their source compares with are called (``_server_literals``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance.live._server_literals import _script, _tools_of, server_literals

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, SELECT, TARGET

SERVER = '''
import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
KINDS = ("draft", "final")
OWNERS = ["ada"]  # data, as a database would hold it: not read


def _check(kind: str) -> bool:
    return kind == "archived"


def unregistered(text: str) -> bool:
    return text == "never-a-tool"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_note(name: str, kind: str = "draft", owner: str = "") -> str:
    """Read a note by name; only one exists."""
    if owner in OWNERS:
        pass
    if kind in KINDS or _check(kind):
        pass
    if name != "n-1001":
        raise ValueError(f"no note {name!r}")
    return "the note"


@server.tool(name="list_notes")
async def listing(prefix: str) -> str:
    """List notes."""
    match prefix:
        case "all":
            return "everything"
    return "some" if prefix.startswith("n-") else "none"


if __name__ == "__main__":
    server.run()
'''


def test_each_registered_tool_gets_what_its_function_compares_with(tmp_path: Path) -> None:
    script = tmp_path / "notes_server.py"
    script.write_text(SERVER)
    assert _tools_of(script) == {
        "read_note": ("draft", "final", "n-1001", "archived"),
        "list_notes": ("all", "n-"),
    }


def test_only_a_python_script_or_module_of_the_project_is_read(tmp_path: Path) -> None:
    (tmp_path / "notes_server.py").write_text(SERVER)
    python = sys.executable
    assert _script((python, "notes_server.py"), tmp_path) == tmp_path / "notes_server.py"
    assert _script((python, "-X", "dev", "-u", "-m", "notes_server"), tmp_path) == (
        tmp_path / "notes_server.py"
    )
    assert _script(("node", "notes_server.py"), tmp_path) is None
    assert _script((python, "-m", "mcp_server_time"), tmp_path) is None  # installed
    assert _script((python, "-m", "pkg.server"), tmp_path) is None
    assert _script((python, "missing.py"), tmp_path) is None
    assert _script((python,), tmp_path) is None
    assert server_literals(object()) == ()


def _tn605(folder: Path, pytester: pytest.Pytester) -> dict[str, Any]:
    result = pytester.runpytest_subprocess(
        CONFORMANCE, ONLY, TARGET, f"stdio:{sys.executable} notes_server.py",
        SELECT, "TN605", REPORT, "report.json", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    report = json.loads((folder / "report.json").read_text())
    return {r["tool"]: r for r in report["results"] if r["check"] == "TN605"}


def test_a_tool_that_succeeds_for_one_literal_reaches_its_success_path(
    pytester: pytest.Pytester,
) -> None:
    """``read_note`` refuses every name but the one its source names: without reading
    the source, no valid call succeeds and TN605 warns (a depth-0 run, as every
    session our tests start)."""
    pytester.makepyfile(notes_server=SERVER)
    verdicts = _tn605(pytester.path, pytester)
    assert verdicts["notes_read_note"]["outcome"] == "passed", verdicts["notes_read_note"]
