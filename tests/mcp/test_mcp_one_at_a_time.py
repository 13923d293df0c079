"""A server whose exits no replay shows has its tools explored one at a time.

``race_crash.py`` exits only when two calls overlap (``strike`` while ``hold`` is in
flight): no call replayed alone, nor the calls replayed in the order sent, ends a
fresh server, and nothing shows that it exits on its own. After its second such exit
each tool is explored on a server of its own, and each is judged.
"""

from __future__ import annotations

from _mcp_testing import run_server_checks, server_command
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance.live._loop import BackgroundLoop


def test_a_server_whose_exits_no_replay_shows_has_its_tools_explored_one_at_a_time(
    loop: BackgroundLoop,
) -> None:
    """Explored alone, none of its tools ends the server: all three are judged, none is
    blamed for an exit it needed another tool's call in flight for."""
    # A short call bound: a fresh server left alone is then not watched up to the
    # age the first one exited at (seconds), which would say nothing here.
    options = RunOptions(call_timeout=2.0, depth=0)
    verdicts = run_server_checks(loop, server_command("race_crash.py"), ["TN601", "TN606"], options)
    assert {v.tool for v in verdicts} == {f"race_crash_{t}" for t in ("fine", "hold", "strike")}
    for verdict in verdicts:
        assert verdict.outcome is Outcome.PASSED, (verdict.tool, verdict.message)
