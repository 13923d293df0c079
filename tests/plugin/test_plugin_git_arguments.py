"""A real MCP server whose tools need a real repository: ``mcp-server-git``, over stdio.

Without arguments every valid call names a path that is no repository, so the
read-only git tools are judged on their error path alone (TN605 fails: every call
returned an error). With the conftest ``docs/conformance.md`` shows (a hook giving a
repository made in ``pytest_configure``), they reach their success path.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, Session, SessionsByKey, early, start_session

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, SELECT, TARGET

pytestmark = [
    pytest.mark.skipif(
        importlib.util.find_spec("mcp_server_git") is None,
        reason="mcp-server-git is not installed: pip install -e '.[mcp,test]'",
    ),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not on PATH"),
]

#: The tools mcp-server-git marks read-only, which --toolnexus-execute auto calls.
READ_ONLY = (
    "git_status",
    "git_diff_unstaged",
    "git_diff_staged",
    "git_diff",
    "git_log",
    "git_show",
    "git_branch",
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def _docs_conftest() -> str:
    """The conftest the docs show for this example: the test runs what the reader copies."""
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(# conftest\.py\n.*?)^```", text, re.DOTALL | re.MULTILINE)
    found = [b for b in blocks if "def pytest_toolnexus_arguments" in b and "mcp-git" in b]
    assert len(found) == 1, "docs/conformance.md shows the mcp-server-git conftest once"
    return str(found[0])


ARGS = (
    "-p",
    "no:cacheprovider",
    CONFORMANCE,
    ONLY,
    TARGET,
    f"stdio:{sys.executable} -m mcp_server_git",
    SELECT,
    "TN605",
    "--toolnexus-seed",
    "1",
    "--toolnexus-examples",
    "3",
    REPORT,
    "report.json",
)


def _git_session(folder: Path, project: str) -> RunningSession:
    """The run in a project without a conftest (``bare``) or with the docs' (``hooked``)."""
    if project == "hooked":
        (folder / "conftest.py").write_text(_docs_conftest())
    return start_session(folder, *ARGS, timeout=180)


@early
def sessions(folder: Path) -> SessionsByKey[str]:
    """The two projects' runs, started early, side by side (neither reads anything of the
    other's)."""
    return SessionsByKey(folder, _git_session, ahead=("bare", "hooked"))


def _run(running: RunningSession) -> tuple[Session, dict[str, dict[str, Any]]]:
    session = running.result()
    report = session.report()
    verdicts = {r["tool"].split("_", 1)[1]: r for r in report["results"] if r["check"] == "TN605"}
    return session, verdicts


def test_without_arguments_git_tools_are_judged_on_their_error_path(
    sessions: SessionsByKey[str],
) -> None:
    result, verdicts = _run(sessions.start("bare"))
    for tool in READ_ONLY:
        assert verdicts[tool]["outcome"] == "failed", result.text()
        assert "returned an error" in verdicts[tool]["message"]


def test_with_a_repository_from_the_hook_git_tools_succeed(
    sessions: SessionsByKey[str],
) -> None:
    result, verdicts = _run(sessions.start("hooked"))
    for tool in READ_ONLY:
        assert verdicts[tool]["outcome"] == "passed", (tool, result.text())
    assert "toolnexus-arguments" not in result.stdout.str()
