"""Servers that end themselves in ways no call in flight shows: right after answering,
after the client cancelled a call, or through what earlier calls left in them.

desktop-commander's ``kill_process`` given 0 answers, then its process group's SIGTERM
ends the server; arxiv-mcp-server (mcp SDK 1.x) exits seconds after a cancelled read
of a paper another tool downloaded. Each test server here does one of these on
purpose; the session names the tool, and where the exit needs earlier calls, names
them too. (An exit that needs calls in flight together, which no replay shows:
``test_mcp_one_at_a_time.py``.)
"""

from __future__ import annotations

from _mcp_testing import run_server_checks, server_command
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance.live._loop import BackgroundLoop


def test_a_tool_that_ends_its_server_just_after_answering_is_its_culprit(
    loop: BackgroundLoop,
) -> None:
    """No call is in flight when the server exits: the call it had just answered is
    replayed, ends a fresh server once a probe follows it, and is named; the healthy
    tool is judged on the restarted server."""
    command = server_command("exits_after_answering.py")
    verdicts = run_server_checks(loop, command, ["TN606", "TN601"])
    by_tool = {(v.tool, v.check.code): v for v in verdicts}
    culprit = by_tool["exits_after_answering_shutdown", "TN606"]
    assert culprit.outcome is Outcome.FAILED, culprit.message
    assert (
        "calling 'shutdown' with {} ended the server 'exits_after_answering' (exit status 4)"
        in culprit.message
    )
    fine = [v for v in verdicts if v.tool == "exits_after_answering_fine"]
    assert {v.outcome for v in fine} == {Outcome.PASSED}, [v.message for v in fine]


def test_a_tool_whose_cancel_ends_its_server_is_its_culprit(loop: BackgroundLoop) -> None:
    """The server exits a moment after a call of ``stubborn`` is cancelled, with no call
    in flight and none just answered: the cancelled call is replayed with its cancel,
    ends a fresh server, and is named; the healthy tool is judged on the restarted one."""
    command = server_command("cancel_ends_server.py")
    options = RunOptions(call_timeout=5.0)
    verdicts = run_server_checks(loop, command, ["TN606", "TN601", "TN702"], options)
    by_tool = {(v.tool, v.check.code): v for v in verdicts}
    culprit = by_tool["cancel_ends_server_stubborn", "TN606"]
    assert culprit.outcome is Outcome.FAILED, culprit.message
    assert "calling 'stubborn' with {} and cancelling it " in culprit.message
    assert "ended the server 'cancel_ends_server' (exit status 5) after the cancel" in (
        culprit.message
    )
    fine = [v for v in verdicts if v.tool == "cancel_ends_server_fine"]
    assert all(v.outcome is not Outcome.FAILED for v in fine), [v.message for v in fine]
    assert any(v.outcome is Outcome.PASSED for v in fine), [v.message for v in fine]


def test_an_exit_that_needs_earlier_calls_names_them_in_order(loop: BackgroundLoop) -> None:
    """Its exits depend on what earlier calls left in it (``fire`` after ``arm``, the
    tenth ``count``): no call replayed alone ends a fresh server, the calls it was sent,
    replayed in order, do. Each culprit is named with the fewest calls before it that
    still end a fresh server; the tool whose calls set the state up, and the healthy
    tool, are judged."""
    # A short call bound: a fresh server left alone is then not watched up to the
    # age the first one exited at (seconds), which would say nothing here.
    options = RunOptions(call_timeout=2.0, depth=0)
    verdicts = run_server_checks(
        loop, server_command("state_crash.py"), ["TN601", "TN606"], options
    )
    by_tool = {(v.tool, v.check.code): v for v in verdicts}
    for tool in ("fine", "arm"):
        for code in ("TN601", "TN606"):
            verdict = by_tool[f"state_crash_{tool}", code]
            assert verdict.outcome is Outcome.PASSED, (tool, code, verdict.message)
    fire = by_tool["state_crash_fire", "TN606"]
    assert fire.outcome is Outcome.FAILED, fire.message
    assert fire.message.startswith(
        "calling 'fire' with {}, after 'arm' with {}, ended the server"
    ), fire.message
    assert (
        "(exit status 7); replayed in that order on a fresh server, these calls end it again, and with a call of"
        in fire.message
    )
    count = by_tool["state_crash_count", "TN606"]
    assert count.outcome is Outcome.FAILED, count.message
    assert count.message.startswith(
        "calling 'count' with {}, after 'count' with {} 9 times, ended the server"
    ), count.message
    for tool in ("fire", "count"):
        skipped = by_tool[f"state_crash_{tool}", "TN601"]
        assert skipped.outcome is Outcome.SKIPPED, skipped.message
