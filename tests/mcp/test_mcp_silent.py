"""A server that one tool leaves answering nothing, not even a ping (a handler that
blocks its event loop), is stopped and handled as an exit: the tool is named, its
neighbours are judged on a restarted server, and no process of it is left behind.

Before, every tool's calls waited out their bounds on the blocked server: each tool
failed TN751 and warned TN803, and every other live check of every tool skipped.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from _mcp_testing import run_server_checks, server_command
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance.live import _probes
from toolnexus_conformance.live._loop import BackgroundLoop


def test_a_tool_that_leaves_its_server_answering_nothing_is_named_alone(
    loop: BackgroundLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``block`` sleeps in ``async def``: the call times out, a probe after it gets no
    answer, the server is stopped, the call replayed alone leaves a fresh server so
    too, and TN803 says so; ``fine`` and ``echo`` pass every check.

    The probe after a call waits 8 s here, as it does on a loaded machine (2 s stretched
    by the load): longer than what is left of the searches' budgets, which end the
    explorations meanwhile. The batch still sees the server stopped (once, under
    ``-n 4``, every tool kept its TN803 instead)."""
    monkeypatch.setattr(_probes, "SILENT_PROBE", 8.0)
    # An argument the server ignores, to tell its processes from any other run's.
    command = server_command("blocks_loop.py", str(tmp_path))
    options = RunOptions(call_timeout=2.0, depth=0)
    verdicts = run_server_checks(loop, command, ["TN601", "TN606", "TN751", "TN803"], options)
    by_tool = {(v.tool, v.check.code): v for v in verdicts}
    for tool in ("fine", "echo"):
        for code in ("TN601", "TN606", "TN803"):
            verdict = by_tool[f"blocks_loop_{tool}", code]
            assert verdict.outcome is Outcome.PASSED, (tool, code, verdict.message)
        cancel = by_tool[f"blocks_loop_{tool}", "TN751"]
        assert cancel.outcome in (Outcome.PASSED, Outcome.SKIPPED), cancel.message
    # A call that never answers is TN803's finding (a warning), here with what it did to
    # the whole server; TN606 (the call ends the process) skips, naming it.
    block = by_tool["blocks_loop_block", "TN803"]
    assert block.outcome is Outcome.FAILED, block.message
    assert block.message.startswith(
        "calling 'block' with {} left the server 'blocks_loop' answering nothing, not even a"
        " ping (a handler that blocks its event loop blocks every tool of it; it was"
        " stopped); replayed alone on a fresh server, it leaves it so again"
    ), block.message
    for code in ("TN601", "TN606"):
        skipped = by_tool["blocks_loop_block", code]
        assert skipped.outcome is Outcome.SKIPPED, skipped.message
        assert skipped.message == (
            "not judged: calling it with {} leaves its server answering nothing, not even a"
            " ping (TN803)"
        ), skipped.message
    assert _running(str(tmp_path)) == []


def _running(marker: str) -> list[str]:
    """Command lines of live processes whose command line holds ``marker`` (Linux
    /proc), once none is left or 5 s on: a killed process may take a moment to be
    reaped."""
    deadline = time.monotonic() + 5.0
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                command = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
                if (
                    marker.encode() in command
                    and "\nState:\tZ" not in (entry / "status").read_text()
                ):
                    found.append(command.decode(errors="replace"))
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)
