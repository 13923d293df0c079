"""TN851 and a server a package runner fetches at start, in a sandbox without network.

``npx -y @modelcontextprotocol/server-memory`` in the kit's sandbox cannot download the
server (no network, an empty HOME for npm's cache): it never starts, and that is the
run's doing, not the server's. The start-up is then not judged, and the reason says how
to run it; a server that fails for any other reason still fails TN851.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from toolnexus_conformance._model import Finding, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._subject import TargetSubject
from toolnexus_conformance.checks.mcp import mcp_server_starts

from toolnexus_ref.mcp._config import ServerConfig
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


#: How node says the script it was given is not there (the sandbox showed /tmp empty).
NO_MODULE = "Error: Cannot find module '{script}'\n    at Module._resolveFilename (node:internal)"


def _hidden_subject(script: Path, stderr: str) -> TargetSubject:
    command = ("node", str(script))
    config = ServerConfig("memory", "stdio", command=command)
    status = ServerStatus(
        "memory", "failed", reason="MCP error -32000: Connection closed", stderr_tail=stderr
    )
    extra = {
        "statuses": {"memory": status},
        "mcp_source": SimpleNamespace(connections={"memory": SimpleNamespace(config=config)}),
    }
    return TargetSubject(TARGET, [], extra)


@pytest.fixture
def script_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A server script under /tmp, run from a folder outside it (as a project would be)."""
    assert tmp_path.is_relative_to("/tmp"), "pytest's tmp_path is under /tmp here"
    monkeypatch.chdir(Path(__file__).parent)
    script = tmp_path / "node_modules" / "server-memory" / "dist" / "index.js"
    script.parent.mkdir(parents=True)
    script.write_text("// a server\n")
    return script


def test_a_server_under_a_folder_the_sandbox_hides_is_not_the_servers_failure(
    script_in_tmp: Path,
) -> None:
    subject = _hidden_subject(script_in_tmp, NO_MODULE.format(script=script_in_tmp))
    with pytest.raises(Skip) as skipped:
        _judge(subject, RunOptions(contained=frozenset({TARGET})))
    reason = str(skipped.value)
    assert f"its command needs {script_in_tmp}, which the sandbox does not show" in reason
    assert "--toolnexus-sandbox off" in reason
    # Without the sandbox the file is there: a failure to start is the server's.
    found = _judge(subject, RunOptions())
    assert [f.path for f in found] == ["servers.memory"]


def test_a_server_under_a_hidden_folder_that_fails_otherwise_still_fails(
    script_in_tmp: Path,
) -> None:
    subject = _hidden_subject(script_in_tmp, "SyntaxError: Unexpected token '}'")
    found = _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert [f.path for f in found] == ["servers.memory"]


def test_a_missing_file_outside_the_hidden_folders_is_the_servers_failure() -> None:
    script = Path(__file__)  # the project is shown inside the sandbox
    subject = _hidden_subject(script, NO_MODULE.format(script="./lib/missing.js"))
    found = _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert [f.path for f in found] == ["servers.memory"]
