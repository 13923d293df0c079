"""Settings per tool through real sessions, where the tools are explored.

One session per place tools are called (a worker process, pytest's own process)
proves every setting at once: a check ignored for one tool only, a call forbidden
and one allowed against ``--toolnexus-execute auto``, a call timeout of a tool's own
(a tool slower than the run's timeout answers within its own; its twin without the
setting does not), and arguments. A probe check reports what the exploring process
was given. Another session proves that settings naming no tool or no check stop
the run before any tool is called, listing the names there are.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from _sessions import RunningSession, early, start_session

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, SELECT, TARGET

TOOLS = """
import os
import time

from toolnexus_ref import ToolAnnotations, ToolResult

SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


class Plain:
    source = "custom"
    input_schema = SCHEMA
    description = "Answer ok."

    def execute(self, args, ctx=None):
        calls = os.environ.get("TOOLNEXUS_TEST_CALLS")
        if calls:
            with open(calls, "a") as handle:
                handle.write(self.name + "\\n")
        return ToolResult.ok("ok")


class GetUser(Plain):
    name = "get_user"


class Wipe(Plain):
    name = "wipe"
    description = "Delete every record."
    annotations = ToolAnnotations(destructive=True)  # auto never calls it


class Ping(Plain):
    name = "ping"


class Slow(Plain):
    name = "slow"
    description = "Answer after a while."

    def execute(self, args, ctx=None):
        time.sleep(4)
        return ToolResult.ok("late")


class SlowToo(Slow):
    name = "slow_too"


class TerseA(Plain):
    name = "terse_a"
    description = ""


class TerseB(Plain):
    name = "terse_b"
    description = ""


tools = [GetUser(), Wipe(), Ping(), Slow(), SlowToo(), TerseA(), TerseB()]
"""

PROBE = """
from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._registry import check


@check(
    "TX902",
    "settings-seen",
    title="Says which settings the exploring process has",
    category=Category.ERRORS,
    severity=Severity.WARNING,
    why="a probe",
    fix="none",
    live=True,
    needs=[],
)
def seen(observation, options):
    subject = observation.subject
    got = options.arguments_for(subject.target, subject.name)
    return [
        Finding(
            f"SEEN timeout={options.call_timeout:g} observed={observation.call_timeout:g}"
            f" examples={[dict(e) for e in got.examples]}"
        )
    ]
"""

SETTINGS = """
[tool.toolnexus.tools.get_user]
call_timeout = 42
examples = [{ user_id = "magic-42" }]

[tool.toolnexus.tools.wipe]
call = true

[tool.toolnexus.tools."mytools:tools::ping"]
call = false

[tool.toolnexus.tools."mytools:tools::slo?"]
call_timeout = 60

[tool.toolnexus.tools.terse_a]
ignore = ["description"]
"""


CONFTEST = "import settingsprobe  # noqa: F401  (here and in the worker)\n"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(mytools=TOOLS, settingsprobe=PROBE)
    pytester.makeconftest(CONFTEST)
    return pytester


@early
def explored_with_settings(folder: Path) -> dict[str, RunningSession]:
    """The settings' session for each place tools are explored, by ``--toolnexus-isolation``.

    Both mostly wait for the slow tools: started early, side by side, they run beside
    other tests.
    """
    started: dict[str, RunningSession] = {}
    for isolation in ("process", "none"):
        path = folder / f"settings-{isolation}"
        path.mkdir()
        path.joinpath("mytools.py").write_text(TOOLS)
        path.joinpath("settingsprobe.py").write_text(PROBE)
        path.joinpath("conftest.py").write_text(CONFTEST)
        path.joinpath("pyproject.toml").write_text(SETTINGS)
        started[isolation] = start_session(
            path,
            "-p",
            "no:cacheprovider",
            "-rs",
            CONFORMANCE,
            ONLY,
            TARGET,
            "mytools:tools",
            "--toolnexus-sandbox",
            "off",  # not contained: auto decides by hints alone
            "--toolnexus-call-timeout",
            "2",
            "--toolnexus-examples",
            "3",
            "--toolnexus-seed",
            "1",
            REPORT,
            "report.json",
            SELECT,
            "TX902,TN803,TN201",
            "--toolnexus-isolation",
            isolation,
            timeout=240,
        )
    return started


@pytest.mark.parametrize("isolation", ["process", "none"])
def test_settings_per_tool_reach_where_tools_are_explored(
    explored_with_settings: dict[str, RunningSession], isolation: str
) -> None:
    result = explored_with_settings[isolation].result()
    report = json.loads((result.path / "report.json").read_text())
    verdicts = {(r["tool"], r["check"]): (r["outcome"], r["message"]) for r in report["results"]}
    # Arguments and a call timeout of its own, in the process that explores the tool.
    assert verdicts[("get_user", "TX902")] == (
        "failed",
        "SEEN timeout=42 observed=42 examples=[{'user_id': 'magic-42'}]",
    )
    # Allowed although auto would not call it (destructive); the others keep the run's.
    assert verdicts[("wipe", "TX902")] == ("failed", "SEEN timeout=2 observed=2 examples=[]")
    assert verdicts[("wipe", "TN803")][0] == "passed"
    # Forbidden although auto would call it.
    forbidden = "not called: its per-tool settings say call = false"
    assert verdicts[("ping", "TX902")] == ("skipped", forbidden)
    assert verdicts[("ping", "TN803")] == ("skipped", forbidden)
    result.stdout.fnmatch_lines([f"SKIPPED * toolnexus:mytools:tools::ping::TN803-*: {forbidden}"])
    # A tool slower than the run's timeout answers within its own; its twin does not.
    assert verdicts[("slow", "TN803")][0] == "passed"
    assert verdicts[("slow", "TX902")][1].startswith("SEEN timeout=60 observed=60")
    assert verdicts[("slow_too", "TN803")] == (
        "failed",
        "the call did not return within 2s, for arguments {}",
    )
    # A check ignored for one tool only.
    assert ("terse_a", "TN201") not in verdicts
    assert verdicts[("terse_b", "TN201")][0] == "failed"
    assert verdicts[("get_user", "TN201")][0] == "passed"
    assert result.ret == 1  # terse_b's TN201


@pytest.mark.parametrize("dist", ["0", "2"])
def test_settings_naming_no_tool_or_check_stop_the_run_listing_names(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: str
) -> None:
    calls = project.path / "calls.txt"
    monkeypatch.setenv("TOOLNEXUS_TEST_CALLS", str(calls))
    project.makeini(
        textwrap.dedent(
            """
            [pytest]
            toolnexus_settings = tools.yaml
            toolnexus_targets = mytools:tools
            toolnexus_execute = all
            toolnexus_isolation = none
            """
        )
    )
    project.path.joinpath("tools.yaml").write_text(
        textwrap.dedent(
            """
            tools:
              get_usr: {call_timeout: 5}
              ping: {ignore: [TN999, schema]}
            """
        )
    )
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", CONFORMANCE, ONLY, "-n", dist, timeout=180
    )
    out = result.stdout.str()
    assert "INTERNALERROR" not in out + result.stderr.str()
    assert result.ret == (pytest.ExitCode.INTERRUPTED if dist == "0" else 1), out
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting toolnexus-settings*",
            "*tools.yaml: 1 key(s) match no tool of any target: 'get_usr'. A key is a tool name*",
            "  mytools:tools::get_user",
            "  mytools:tools::ping",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*tools.yaml: 1 ignore(s) name no check: tools.ping.ignore: 'TN999'.*",
            "  categories: naming, description, schema, *",
            "  codes: TN001 target-loads, *",
        ]
    )
    assert " passed" not in out.splitlines()[-1]
    assert not calls.exists()  # no tool was called with settings that are wrong
