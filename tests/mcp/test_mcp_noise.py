"""Findings said once where they are one: ``$schema`` per server, task-only tools not called."""

from __future__ import annotations

from _mcp_testing import START, server_command
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.live._loop import BackgroundLoop

from toolnexus_ref.mcp import open_stdio


def _verdicts(loop: BackgroundLoop, select: list[str]) -> list[Verdict]:
    source = loop.run(open_stdio(server_command("ts_style.py"), timeout=START), timeout=60)
    try:
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        return check_subjects(
            subjects, "t", select=select, loop=loop, target_extra=source.conformance_extra()
        )
    finally:
        loop.run(source.close(), timeout=30)


def test_dollar_schema_is_said_once_per_server_with_the_count(loop: BackgroundLoop) -> None:
    verdicts = {v.tool: v for v in _verdicts(loop, ["TN432"])}
    first = verdicts["tsstyle_beta"]
    assert first.outcome is Outcome.FAILED
    assert "3 of 5 tools of the server 'tsstyle' declare it" in first.message
    for other in ("tsstyle_gamma", "tsstyle_delta"):
        assert verdicts[other].outcome is Outcome.SKIPPED
        assert "reported once for the server on tsstyle_beta (TN432)" in verdicts[other].message
    assert verdicts["tsstyle_alpha"].outcome is Outcome.PASSED
    assert verdicts["tsstyle_research"].outcome is Outcome.PASSED


def test_a_tool_that_requires_a_task_is_not_called(loop: BackgroundLoop) -> None:
    verdicts = _verdicts(loop, ["TN605", "TN651"])
    research = [v for v in verdicts if v.tool == "tsstyle_research"]
    assert research
    for verdict in research:
        assert verdict.outcome is Outcome.SKIPPED, verdict.message
        assert 'taskSupport "required"' in verdict.message
    # The other tools are called as usual.
    alpha = [v for v in verdicts if v.tool == "tsstyle_alpha"]
    assert alpha
    assert all(v.outcome is Outcome.PASSED for v in alpha), [v.message for v in alpha]
