"""Users' arguments per tool, from a data file and from a conftest hook, through real sessions.

A probe check (registered by the session's conftest, imported by the worker
process too) reports the arguments ``RunOptions.arguments_for`` gives in the
process that explores the tool: so these tests prove the arguments arrive where
tools are called, for a Python target in its worker and in pytest's own process.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, SessionsByKey, early, start_session

from pytest_toolnexus._options import ARGUMENTS, CONFORMANCE, ONLY, REPORT, SELECT, TARGET

TOOLS = '''
from toolnexus_ref import ToolResult

#: What a database would hold: no value the kit reads from the tool's code.
USERS = ["magic-42"]


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
        if args.get("user_id") not in USERS:
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


def _start(
    folder: Path,
    *extra: str,
    select: str = "TX901",
    files: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> RunningSession:
    """A session in ``folder`` on the tools with the probe's conftest, ``files`` (name to
    text, a conftest of their own included) written over them."""
    folder.mkdir(exist_ok=True)
    sources = {"mytools.py": TOOLS, "argprobe.py": PROBE, "conftest.py": CONFTEST}
    for name, text in {**sources, **(files or {})}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return start_session(folder, *_session_args(*extra, select=select), env=env, timeout=120)


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


def ran(running: RunningSession) -> tuple[pytest.RunResult, dict[str, Any], Path]:
    """The finished session as pytester gives it, its report (none: no results), its folder."""
    session = running.result()
    path = session.path / "report.json"
    report = json.loads(path.read_text()) if path.exists() else {"results": []}
    return session.run_result(), report, session.path


@early
def unchanged(folder: Path) -> RunningSession:
    """One session with no arguments file and no hook, the probe and TN605 selected."""
    return _start(folder, select="TX901,TN605")


def seen(report: dict[str, Any], tool: str, check: str = "TX901") -> dict[str, str]:
    return {
        r["outcome"]: r["message"]
        for r in report["results"]
        if (r["tool"], r["check"]) == (tool, check)
    }


FILE_ARGUMENTS = textwrap.dedent(
    """
    [tools.get_user]
    examples = [{ user_id = "${USER_ID}", limit = 2 }]

    [tools.get_user.values]
    user_id = ["{rootdir}/u", "$${literal}"]

    [tools."mytools:tools::get_*".values]
    limit = [7]
    """
)


def _start_file_arguments(folder: Path, isolation: str) -> RunningSession:
    return _start(
        folder,
        ARGUMENTS,
        "args.toml",
        "--toolnexus-isolation",
        isolation,
        files={"args.toml": FILE_ARGUMENTS},
        env={"USER_ID": "magic-42"},
    )


@early
def file_arguments_runs(folder: Path) -> SessionsByKey[str]:
    """A session with the arguments file, by ``--toolnexus-isolation``."""
    return SessionsByKey(folder, _start_file_arguments, ahead=["process", "none"])


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_file_arguments_reach_the_process_that_explores_the_tool(
    file_arguments_runs: SessionsByKey[str], isolation: str
) -> None:
    result, report, path = ran(file_arguments_runs.start(isolation))
    root = str(path)
    user = seen(report, "get_user")
    assert user == {
        "failed": "SEEN examples=[{'user_id': 'magic-42', 'limit': 2}]"
        f" values={{'limit': [7], 'user_id': ['{root}/u', '${{literal}}']}}"
    }, result.stdout.str()
    # A tool no key names gets nothing, and keys that match something are no error.
    assert seen(report, "ping") == {"failed": "SEEN examples=[] values={}"}
    assert "toolnexus-arguments" not in result.stdout.str()


@early
def ini_run(folder: Path) -> RunningSession:
    """A session whose ini file names a YAML arguments file below the rootdir."""
    return _start(
        folder,
        files={
            "tox.ini": "[pytest]\ntoolnexus_arguments = conf/args.yaml\n",
            "conf/args.yaml": "tools:\n  get_user:\n    examples:\n      - {user_id: magic-42}\n",
        },
    )


def test_ini_key_is_relative_to_rootdir_and_accepts_yaml(ini_run: RunningSession) -> None:
    _, report, _ = ran(ini_run)
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


@early
def hook_run(folder: Path) -> RunningSession:
    """A session with the arguments hook and a file, both for ``get_user``."""
    return _start(
        folder,
        ARGUMENTS,
        "args.json",
        files={
            "conftest.py": HOOK,
            "args.json": '{"tools": {"get_user": {"values": {"user_id": ["from-file"]}}}}',
        },
    )


def test_hook_gives_examples_and_draws_strategies(hook_run: RunningSession) -> None:
    _, report, _ = ran(hook_run)
    message = seen(report, "get_user")["failed"]
    assert message.startswith("SEEN examples=[{'user_id': 'magic-42'}] values={'limit': ["), message
    drawn = message.split("'limit': [", 1)[1].split("]", 1)[0]
    numbers = [int(n) for n in drawn.split(", ")]
    assert numbers
    assert len(numbers) == len(set(numbers))
    assert set(numbers) <= {1, 2, 3}
    assert "'user_id': ['from-file', 'x']" in message  # the file's first, then the hook's
    assert seen(report, "ping") == {"failed": "SEEN examples=[] values={}"}


@early
def raising_hook_run(folder: Path) -> RunningSession:
    """A session whose hook raises for one tool and gives another a malformed answer."""
    return _start(
        folder,
        files={
            "conftest.py": "import argprobe\n\n"
            "def pytest_toolnexus_arguments(config, target, tool):\n"
            "    if tool == 'ping':\n"
            "        raise RuntimeError('no database')\n"
            "    return {'examples': {'user_id': 'x'}}\n"
        },
    )


def test_hook_that_raises_fails_one_item_and_the_checks_still_run(
    raising_hook_run: RunningSession,
) -> None:
    result, report, _ = ran(raising_hook_run)
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


@early
def unmatched_keys_run(folder: Path) -> RunningSession:
    """A session whose arguments file has two keys that match no tool, and one that does."""
    return _start(
        folder,
        ARGUMENTS,
        "args.toml",
        files={
            "args.toml": '[tools.get_usr]\nexamples = [{ user_id = "x" }]\n'
            '[tools."other::get_user"]\nexamples = [{ user_id = "x" }]\n'
            "[tools.ping]\nexamples = [{}]\n"
        },
    )


def test_a_key_matching_no_tool_fails_one_item_listing_the_tools(
    unmatched_keys_run: RunningSession,
) -> None:
    result, report, _ = ran(unmatched_keys_run)
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


@early
def real_id_run(folder: Path) -> RunningSession:
    """A TN605 session whose arguments file gives ``get_user`` the one id that exists."""
    return _start(
        folder,
        ARGUMENTS,
        "args.toml",
        select="TN605",
        files={"args.toml": '[tools.get_user]\nexamples = [{ user_id = "magic-42" }]\n'},
    )


def test_a_tool_needing_a_real_id_succeeds_only_with_it(
    real_id_run: RunningSession, unchanged: RunningSession
) -> None:
    without_session = unchanged.result()
    without = without_session.report()
    assert seen(without, "get_user", "TN605").keys() == {"failed"}, without_session.text()
    with_file, report, _ = ran(real_id_run)
    assert seen(report, "get_user", "TN605").keys() == {"passed"}, with_file.stdout.str()


def test_unchanged_without_arguments(unchanged: RunningSession) -> None:
    """No file, no hook: no arguments item, and the probe sees nothing."""
    session = unchanged.result()
    assert "toolnexus-arguments" not in session.text()
    assert seen(session.report(), "get_user") == {"failed": "SEEN examples=[] values={}"}
