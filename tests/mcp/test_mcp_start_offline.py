"""TN851 and a server a package runner fetches at start, in a sandbox without network.

``npx -y @modelcontextprotocol/server-memory`` in the kit's sandbox cannot download the
server (no network, an empty HOME for npm's cache): it never starts, and that is the
run's doing, not the server's. The start-up is then not judged, and the reason says how
to run it; a server that fails for any other reason still fails TN851.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from toolnexus_conformance._model import Finding, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._subject import TargetSubject
from toolnexus_conformance.checks.mcp import mcp_server_starts

from toolnexus_ref._mcp_config import ServerConfig
from toolnexus_ref.mcp._connection import ServerStatus

TARGET = "mcp.json"
TIMED_OUT = "timed out after 30s during handshake"


def _judge(subject: TargetSubject, options: RunOptions) -> list[Finding]:
    found = mcp_server_starts(subject, options)
    assert isinstance(found, list)
    return found


def _subject(commands: dict[str, tuple[str, ...]]) -> TargetSubject:
    configs = {n: ServerConfig(n, "stdio", command=c) for n, c in commands.items()}
    connections = {n: SimpleNamespace(config=c) for n, c in configs.items()}
    statuses = {n: ServerStatus(n, "failed", reason=TIMED_OUT) for n in commands}
    extra = {"statuses": statuses, "mcp_source": SimpleNamespace(connections=connections)}
    return TargetSubject(TARGET, [], extra)


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        (("npx", "-y", "@modelcontextprotocol/server-memory"), "npx"),
        (("/usr/local/bin/uvx", "mcp-server-time"), "uvx"),
        (("pnpm", "dlx", "some-server"), "pnpm dlx"),
    ],
)
def test_a_runner_that_cannot_fetch_in_the_sandbox_is_not_the_servers_failure(
    command: tuple[str, ...], runner: str
) -> None:
    contained = RunOptions(contained=frozenset({TARGET}))
    with pytest.raises(Skip) as skipped:
        _judge(_subject({"memory": command}), contained)
    reason = str(skipped.value)
    assert f"memory did not start ({TIMED_OUT}): its command, {runner}," in reason
    assert "--toolnexus-allow-network" in reason
    # With network (or no sandbox), the runner could fetch: its failure is judged.
    found = _judge(_subject({"memory": command}), RunOptions())
    assert [f.path for f in found] == ["servers.memory"]


def test_a_server_that_fails_by_itself_still_fails_beside_a_runner() -> None:
    subject = _subject({"memory": ("npx", "-y", "server-memory"), "own": ("node", "index.js")})
    found = _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert [f.path for f in found] == ["servers.own"]
    assert TIMED_OUT in found[0].message
