"""Users' arguments per tool, from a data file and from a conftest hook, through real sessions.

A probe check (registered by the session's conftest, imported by the worker
process too) reports the arguments ``RunOptions.arguments_for`` gives in the
process that explores the tool: so these tests prove the arguments arrive where
tools are called, for a Python target in its worker and in pytest's own process.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest
from _sessions import Session, run_session

from pytest_toolnexus._options import ARGUMENTS, CONFORMANCE, ONLY, REPORT, SELECT, TARGET

TOOLS = '''
from toolnexus_ref import ToolResult


class Lookup:
    """Finds a user by id; only one id exists."""

    name = "get_user"
    description = "Return the user with the given id."
    source = "custom"
    input_schema = {
        "type": "object",
        "properties": {"user_id": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["user_id"],
        "additionalProperties": False,
    }

    def execute(self, args, ctx=None):
        if args.get("user_id") != "magic-42":
            return ToolResult.error("no such user")
        return ToolResult.ok("Ada")


class Ping:
    name = "ping"
    description = "Answer pong."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        return ToolResult.ok("pong")


tools = [Lookup(), Ping()]
'''

PROBE = """
from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._registry import check


@check(
    "TX901",
    "arguments-seen",
    title="Says which user arguments the exploring process has",
    category=Category.ERRORS,
    severity=Severity.WARNING,
    why="a probe",
    fix="none",
    live=True,
    needs=[],
)
def seen(observation, options):
    got = options.arguments_for(observation.subject.target, observation.subject.name)
    values = {k: list(v) for k, v in sorted(got.values.items())}
    return [Finding(f"SEEN examples={[dict(e) for e in got.examples]} values={values}")]
"""

CONFTEST = """
import argprobe  # noqa: F401  (registers the probe check, here and in the worker)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(mytools=TOOLS, argprobe=PROBE)
    pytester.makeconftest(CONFTEST)
    return pytester


def _session_args(*extra: str, select: str = "TX901") -> list[str]:
    return [
        "-p",
        "no:cacheprovider",
        CONFORMANCE,
        ONLY,
        TARGET,
        "mytools:tools",
        SELECT,
        select,
        "--toolnexus-execute",
        "all",
        "--toolnexus-seed",
        "3",
        "--toolnexus-examples",
        "5",
        REPORT,
        "report.json",
        *extra,
    ]


def run(
    pytester: pytest.Pytester, *extra: str, select: str = "TX901"
) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess(*_session_args(*extra, select=select), timeout=120)
    path = pytester.path / "report.json"
    report = json.loads(path.read_text()) if path.exists() else {"results": []}
    return result, report


@pytest.fixture(scope="module")
def unchanged(tmp_path_factory: pytest.TempPathFactory) -> Session:
    """One session with no arguments file and no hook, the probe and TN605 selected."""
    project = tmp_path_factory.mktemp("unchanged")
    (project / "mytools.py").write_text(TOOLS)
    (project / "argprobe.py").write_text(PROBE)
    (project / "conftest.py").write_text(CONFTEST)
    return run_session(project, *_session_args(select="TX901,TN605"), timeout=120)


def seen(report: dict[str, Any], tool: str, check: str = "TX901") -> dict[str, str]:
    return {
        r["outcome"]: r["message"]
        for r in report["results"]
        if (r["tool"], r["check"]) == (tool, check)
    }


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_file_arguments_reach_the_process_that_explores_the_tool(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, isolation: str
) -> None:
    monkeypatch.setenv("USER_ID", "magic-42")
    project.path.joinpath("args.toml").write_text(
        textwrap.dedent(
            """
            [tools.get_user]
            examples = [{ user_id = "${USER_ID}", limit = 2 }]

            [tools.get_user.values]
            user_id = ["{rootdir}/u", "$${literal}"]

            [tools."mytools:tools::get_*".values]
            limit = [7]
            """
        )
    )
    result, report = run(project, ARGUMENTS, "args.toml", "--toolnexus-isolation", isolation)
    root = str(project.path)
    user = seen(report, "get_user")
    assert user == {
        "failed": "SEEN examples=[{'user_id': 'magic-42', 'limit': 2}]"
        f" values={{'limit': [7], 'user_id': ['{root}/u', '${{literal}}']}}"
    }, result.stdout.str()
    # A tool no key names gets nothing, and keys that match something are no error.
    assert seen(report, "ping") == {"failed": "SEEN examples=[] values={}"}
    assert "toolnexus-arguments" not in result.stdout.str()


def test_ini_key_is_relative_to_rootdir_and_accepts_yaml(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ntoolnexus_arguments = conf/args.yaml\n")
    (project.path / "conf").mkdir()
    (project.path / "conf" / "args.yaml").write_text(
        "tools:\n  get_user:\n    examples:\n      - {user_id: magic-42}\n"
    )
    _, report = run(project)
    assert seen(report, "get_user") == {
        "failed": "SEEN examples=[{'user_id': 'magic-42'}] values={}"
    }


HOOK = """
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st

import argprobe  # noqa: F401

IDS = pytest.StashKey[str]()


def pytest_configure(config):
    # State a hook needs is made once, before collection, and removed at the end.
    folder = tempfile.TemporaryDirectory(prefix="ids-")
    config.add_cleanup(folder.cleanup)
    made = Path(folder.name) / "user-id"  # as a fixture would make a database row
    made.write_text("magic-42")
    config.stash[IDS] = str(made)


def pytest_toolnexus_arguments(config, target, tool):
    if tool != "get_user":
        return None
    return {
        "examples": [{"user_id": Path(config.stash[IDS]).read_text()}],
        "values": {"limit": st.integers(1, 3), "user_id": ["x"]},
    }
"""


def test_hook_gives_examples_and_draws_strategies(project: pytest.Pytester) -> None:
    project.makeconftest(HOOK)
    project.path.joinpath("args.json").write_text(
        '{"tools": {"get_user": {"values": {"user_id": ["from-file"]}}}}'
    )
    _, report = run(project, ARGUMENTS, "args.json")
    message = seen(report, "get_user")["failed"]
    assert message.startswith("SEEN examples=[{'user_id': 'magic-42'}] values={'limit': ["), message
    drawn = message.split("'limit': [", 1)[1].split("]", 1)[0]
    numbers = [int(n) for n in drawn.split(", ")]
    assert numbers
    assert len(numbers) == len(set(numbers))
    assert set(numbers) <= {1, 2, 3}
    assert "'user_id': ['from-file', 'x']" in message  # the file's first, then the hook's
    assert seen(report, "ping") == {"failed": "SEEN examples=[] values={}"}


def test_hook_that_raises_fails_one_item_and_the_checks_still_run(project: pytest.Pytester) -> None:
    project.makeconftest(
        "import argprobe\n\n"
        "def pytest_toolnexus_arguments(config, target, tool):\n"
        "    if tool == 'ping':\n"
        "        raise RuntimeError('no database')\n"
        "    return {'examples': {'user_id': 'x'}}\n"
    )
    result, report = run(project)
    out = result.stdout.str()
    assert "FAILED toolnexus-arguments" in out
    assert (
        "pytest_toolnexus_arguments(target='mytools:tools', tool='ping') raised RuntimeError: no database"
        in out
    )
    assert "'examples' must be a list of argument objects" in out
    assert {r["tool"] for r in report["results"] if r["check"] == "TX901"} == {"get_user", "ping"}


def test_a_bad_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """In-process: the error is raised at configure, before any target is loaded."""
    pytester.path.joinpath("args.toml").write_text("[tools.get_user\nexamples = []\n")
    result = pytester.runpytest_inprocess(
        "-p", "no:cacheprovider", CONFORMANCE, ONLY, TARGET, "mytools:tools", ARGUMENTS, "args.toml"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert (
        f"{ARGUMENTS} (ini toolnexus_arguments): {pytester.path / 'args.toml'}: not valid TOML"
        in err
    )


def test_a_key_matching_no_tool_fails_one_item_listing_the_tools(project: pytest.Pytester) -> None:
    project.path.joinpath("args.toml").write_text(
        '[tools.get_usr]\nexamples = [{ user_id = "x" }]\n'
        '[tools."other::get_user"]\nexamples = [{ user_id = "x" }]\n'
        "[tools.ping]\nexamples = [{}]\n"
    )
    result, report = run(project, ARGUMENTS, "args.toml")
    out = result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "FAILED toolnexus-arguments" in out
    assert "2 key(s) match no tool of any target: 'get_usr', 'other::get_user'" in out
    assert report["complete"] is True, report["not_judged"]
    assert "mytools:tools::get_user" in out
    assert "mytools:tools::ping" in out
    # The run went on: every tool was judged, the matching key given to its tool.
    assert seen(report, "ping") == {"failed": "SEEN examples=[{}] values={}"}
    assert seen(report, "get_user") == {"failed": "SEEN examples=[] values={}"}


def test_a_tool_needing_a_real_id_succeeds_only_with_it(
    project: pytest.Pytester, unchanged: Session
) -> None:
    without = unchanged.report()
    assert seen(without, "get_user", "TN605").keys() == {"failed"}, unchanged.text()
    project.path.joinpath("args.toml").write_text(
        '[tools.get_user]\nexamples = [{ user_id = "magic-42" }]\n'
    )
    with_file, report = run(project, ARGUMENTS, "args.toml", select="TN605")
    assert seen(report, "get_user", "TN605").keys() == {"passed"}, with_file.stdout.str()


def test_unchanged_without_arguments(unchanged: Session) -> None:
    """No file, no hook: no arguments item, and the probe sees nothing."""
    assert "toolnexus-arguments" not in unchanged.text()
    assert seen(unchanged.report(), "get_user") == {"failed": "SEEN examples=[] values={}"}
