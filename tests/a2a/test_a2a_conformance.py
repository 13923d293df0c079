"""The suites over a2a: targets, through the plugin: a good agent passes, each defect fails its check.

The agents run on loopback ports in this process; the pytest session judging them
is a subprocess, as a user's would be.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from _a2a_agents import DEFECTS, always_fails
from toolnexus_conformance.targets import TargetError, load_target, parse_target

from toolnexus_ref.a2a import LoopbackAgent, serve_loopback

FAST = ("--toolnexus-examples", "5", "-p", "no:cacheprovider")


def _judge(pytester: pytest.Pytester, target: str, *more: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        target,
        "-rA",
        *FAST,
        *more,
    )


def test_a_good_agent_passes_every_check(
    pytester: pytest.Pytester, good_agent: LoopbackAgent
) -> None:
    # A generous grace: the timing checks judge how fast a cancel is honoured, and a
    # loaded machine must not make a good agent look slow.
    result = _judge(pytester, good_agent.target, "--toolnexus-grace", "5")
    out = result.stdout.str()
    assert result.ret == 0, out
    assert "FAILED" not in out
    # The A2A checks did judge (not skip): the card, the skill ids, a success's task.
    for judged in (
        "PASSED *::TN871-a2a-card-valid*",
        "PASSED *helper_agent_echo::TN171-a2a-skill-id-unique*",
        "PASSED *helper_agent_echo::TN671-a2a-failed-task-is-error*",
    ):
        result.stdout.fnmatch_lines([judged])
    # The cancel probe is judged when the cancel lands while the task works (a second);
    # a machine slow enough to finish first leaves it unjudged, never failed.
    ponder = [line for line in result.stdout.lines if "helper_agent_ponder::TN771" in line]
    assert ponder, out
    assert ponder[0].startswith("PASSED") or "not judged" in ponder[0], ponder


def test_each_defective_agent_fails_the_check_that_names_it(pytester: pytest.Pytester) -> None:
    """One session judges every defective agent (one target each), for the checks they break."""
    with contextlib.ExitStack() as stack:
        agents = {
            defect: stack.enter_context(serve_loopback(app=make))
            for defect, (make, _) in DEFECTS.items()
        }
        targets = [arg for agent in agents.values() for arg in ("--toolnexus-target", agent.target)]
        codes = ",".join(sorted({code for _, code in DEFECTS.values()}))
        result = pytester.runpytest_subprocess(
            "--toolnexus-conformance",
            "--toolnexus-only",
            *targets,
            "--toolnexus-select",
            codes,
            "-rA",
            *FAST,
        )
    assert result.ret == 1, result.stdout.str()
    failed = [line for line in result.stdout.lines if line.startswith("FAILED ")]
    for defect, (_, code) in DEFECTS.items():
        url = agents[defect].url
        mine = [line for line in failed if url in line]
        # Its own check fails, and no other check cries wolf on it.
        assert mine, (defect, code, failed)
        assert all(code in line for line in mine), (defect, code, failed)


HIDES_FAILURES = '''
import os

from toolnexus_ref import ToolResult
from toolnexus_ref.a2a import A2ATool, open_agent


class HidesFailures(A2ATool):
    """Reports every finished task as a success, whatever its state."""

    async def execute(self, args, ctx=None):
        result = await super().execute(args, ctx)
        return ToolResult.ok(result.output, result.metadata)


async def tools():
    source = await open_agent(os.environ["FLAKY_AGENT"])
    return [HidesFailures(source.reading, skill) for skill in source.reading.card.skills]
'''


def test_a_tool_that_hides_a_failed_task_fails_tn671(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(hides_failures=HIDES_FAILURES)
    with serve_loopback(app=always_fails) as agent:
        monkeypatch.setenv("FLAKY_AGENT", agent.url)
        result = _judge(
            pytester,
            "hides_failures:tools",
            "--toolnexus-select",
            "TN671",
            # A Python target whose tools reach an agent on loopback, named by a variable.
            "--toolnexus-allow-network",
            "--toolnexus-env",
            "FLAKY_AGENT",
        )
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(["*the agent reports task * failed*"])
    result.stdout.fnmatch_lines(["FAILED *TN671*"])


def test_an_unreachable_agent_is_a_target_error() -> None:
    """What TN001 reports for it: the card cannot be fetched (the other targets still run)."""
    spec = parse_target("a2a:http://127.0.0.1:9/")
    with pytest.raises(TargetError, match=r"cannot fetch the agent card at http://127\.0\.0\.1:9/"):
        asyncio.run(load_target(spec))
