"""TN851 and a server the run itself keeps from starting.

``npx -y @modelcontextprotocol/server-memory`` in the kit's sandbox cannot download the
server (no network, an empty HOME for npm's cache); excel-mcp-server (PyPI) opens a log
file in its own installation at import, which the sandbox shows read-only;
``mcp-server-sqlite --db-path /tmp/test.db`` creates its database at start, where the
sandbox lets it create nothing; a server that reads its settings from ``~`` finds the
empty home the sandbox gives it; server-brave-search exits without ``BRAVE_API_KEY``,
which the kit passes only when named (sandbox or not). None starts, and that is the
run's doing, not the server's. The start-up is then not judged, and the reason says
how to run it; a server that fails for any other reason still fails TN851, and so does
one given what it lacked: a writable copy of the folder it writes
(``--toolnexus-writable-copy``), or the variable (``--toolnexus-env``).
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from toolnexus_conformance._model import Finding, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._subject import TargetSubject
from toolnexus_conformance.checks._start_excuses import _ABOUT_ENVIRONMENT as _ABOUT
from toolnexus_conformance.checks.mcp import mcp_server_starts
from toolnexus_conformance.process._sandbox import overlay_refused, probe

from toolnexus_ref._mcp_config import ServerConfig
from toolnexus_ref.mcp._connection import ServerStatus

TARGET = "mcp.json"
WRITES_AT_START = Path(__file__).resolve().parent / "servers" / "writes_at_start.py"
NEEDS_VARIABLE = Path(__file__).resolve().parent / "servers" / "needs_variable.py"
NEEDS_HOME = Path(__file__).resolve().parent / "servers" / "needs_home.py"
NEEDS_NETWORK = Path(__file__).resolve().parent / "servers" / "needs_network.py"
TIMED_OUT = "timed out after 30s during handshake"


def _judge(subject: TargetSubject, options: RunOptions) -> list[Finding]:
    found = mcp_server_starts(subject, options)
    assert isinstance(found, list)
    return found


def _subject(commands: dict[str, tuple[str, ...]], stderr: str = "") -> TargetSubject:
    configs = {n: ServerConfig(n, "stdio", command=c) for n, c in commands.items()}
    connections = {n: SimpleNamespace(config=c) for n, c in configs.items()}
    statuses = {
        n: ServerStatus(n, "failed", reason=TIMED_OUT, stderr_tail=stderr) for n in commands
    }
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


@pytest.mark.parametrize(
    ("stderr", "path"),
    [
        (
            "OSError: [Errno 30] Read-only file system: '/opt/venv/lib/python3.11/server.log'",
            "/opt/venv/lib/python3.11/server.log",
        ),
        (
            "Error: EROFS: read-only file system, open '/srv/app/data/memory.json'",
            "/srv/app/data/memory.json",
        ),
    ],
)
def test_a_write_the_sandbox_refused_at_start_is_not_the_servers_failure(
    stderr: str, path: str
) -> None:
    subject = _subject({"excel": ("/opt/venv/bin/excel-mcp-server", "stdio")}, stderr)
    with pytest.raises(Skip) as skipped:
        _judge(subject, RunOptions(contained=frozenset({TARGET})))
    reason = str(skipped.value)
    assert f"excel did not start: it writes to {path}, which the sandbox keeps read-only" in reason
    assert f"--toolnexus-writable-copy {Path(path).parent}" in reason
    assert "--toolnexus-sandbox off" in reason
    # Outside a sandbox, the write was refused by the machine itself: the server's failure.
    found = _judge(subject, RunOptions())
    assert [f.path for f in found] == ["servers.excel"]
    # In a writable copy the sandbox let it write: what failed is the server's.
    copied = RunOptions(contained=frozenset({TARGET}), writable_copies=(Path(path).parent,))
    assert [f.path for f in _judge(subject, copied)] == ["servers.excel"]


def test_any_other_refusal_at_start_still_fails() -> None:
    stderr = "PermissionError: [Errno 13] Permission denied: '/etc/server.conf'"
    subject = _subject({"own": ("/opt/venv/bin/own-server",)}, stderr)
    found = _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert [f.path for f in found] == ["servers.own"]
    assert "Permission denied" in found[0].message


def _serve(pytester: pytest.Pytester, server: str, *options: str) -> pytest.RunResult:
    """A session on one of ``servers/``, started by this Python (``server``: the script
    and its arguments), that judges its start (TN851) and whatever ``options`` add."""
    return pytester.runpytest_subprocess(
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{sys.executable} {server}",
        "--toolnexus-select",
        "TN851",
        "-p",
        "no:cacheprovider",
        "-rs",
        *options,
    )


@pytest.mark.skipif(not probe().available, reason=probe().why or "no sandbox here")
def test_a_server_the_sandbox_keeps_from_writing_at_start_is_not_judged(
    pytester: pytest.Pytester,
) -> None:
    """Its working directory is read-only in the sandbox: the session says why it was
    not judged and how to judge it (outside the sandbox it starts and serves)."""
    result = _serve(pytester, str(WRITES_AT_START))
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            "SKIPPED * writes_at_start did not start: it writes to writes_at_start.log, which"
            " the sandbox keeps read-only * give it a copy to write with"
            f" --toolnexus-writable-copy {pytester.path}, or judge it with --toolnexus-sandbox off"
        ]
    )
    assert not (pytester.path / "writes_at_start.log").exists()


@pytest.mark.skipif(
    not probe().available or overlay_refused() is not None, reason=str(overlay_refused())
)
def test_a_server_given_a_copy_of_its_folder_starts_and_leaves_the_folder_as_it_was(
    pytester: pytest.Pytester,
) -> None:
    """``--toolnexus-writable-copy .``: the log is written in the server's copy of its
    working directory, so it starts and is judged, and no log is left here."""
    result = _serve(
        pytester,
        str(WRITES_AT_START),
        "--toolnexus-select",
        "TN851,TN502",
        "--toolnexus-writable-copy",
        ".",
    )
    result.assert_outcomes(passed=2)
    assert not (pytester.path / "writes_at_start.log").exists()


@pytest.mark.parametrize("form", ["separate", "joined"])
def test_a_path_to_create_that_the_sandbox_keeps_it_from_creating_is_not_its_failure(
    tmp_path: Path, form: str
) -> None:
    """mcp-server-sqlite, given a database that does not exist yet, creates it at start."""
    database = tmp_path / "test.db"
    arguments = ("--db-path", str(database)) if form == "separate" else (f"--db={database}",)
    stderr = "sqlite3.OperationalError: unable to open database file"
    subject = _subject({"sqlite": ("/opt/venv/bin/mcp-server-sqlite", *arguments)}, stderr)
    with pytest.raises(Skip) as skipped:
        _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert f"its command names {database}, which does not exist" in str(skipped.value)
    assert f"--toolnexus-writable-copy {tmp_path}," in str(skipped.value)
    assert [f.path for f in _judge(subject, RunOptions())] == ["servers.sqlite"]
    copied = RunOptions(contained=frozenset({TARGET}), writable_copies=(tmp_path,))
    assert [f.path for f in _judge(subject, copied)] == ["servers.sqlite"]


def test_a_missing_script_or_folder_is_still_the_commands_failure(tmp_path: Path) -> None:
    script = tmp_path / "servr.py"
    said = f"python: can't open file '{script}': [Errno 2] No such file or directory"
    for command, stderr in (
        (("python", str(script)), said),
        (("node", str(tmp_path / "no-such-folder" / "index.js")), ""),
    ):
        subject = _subject({"own": command}, stderr)
        found = _judge(subject, RunOptions(contained=frozenset({TARGET})))
        assert [f.path for f in found] == ["servers.own"], command


def test_a_variable_set_here_that_the_kit_did_not_pass_is_not_the_servers_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The environment is cut to an allowlist, sandbox or not: a server that needs an
    API key from the user's shell did not get it."""
    stderr = "Error: BRAVE_API_KEY environment variable is required"
    subject = _subject({"brave": ("node", "/opt/brave/dist/index.js")}, stderr)
    assert _ABOUT.search('KeyError: os.environ["BRAVE_API_KEY"]')
    assert _ABOUT.search("const key = process.env.BRAVE_API_KEY;")
    monkeypatch.setenv("BRAVE_API_KEY", "k-1")
    for options in (RunOptions(), RunOptions(contained=frozenset({TARGET}))):
        with pytest.raises(Skip) as skipped:
            _judge(subject, options)
        reason = str(skipped.value)
        assert "brave did not start (" in reason
        assert "it names BRAVE_API_KEY, which is set here but not passed" in reason
        assert "--toolnexus-env BRAVE_API_KEY" in reason
        assert "k-1" not in reason
    # Passed, and still refused: the server's failure.
    named = RunOptions(passed_variables=("BRAVE_API_KEY",))
    assert [f.path for f in _judge(subject, named)] == ["servers.brave"]
    # Not set at all: the server asks for its configuration, which it was not given.
    monkeypatch.delenv("BRAVE_API_KEY")
    with pytest.raises(Skip) as skipped:
        _judge(subject, RunOptions())
    assert "it names BRAVE_API_KEY, which is not set here: it needs it" in str(skipped.value)


@pytest.mark.parametrize(
    "stderr",
    [
        "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' imported from /srv/index.js",
        "ValueError: MAX_RESULTS must be positive",
        'File "/srv/venv/lib/python3.11/site-packages/app.py", line 3: DEFAULT_PORT is taken',
    ],
)
def test_a_name_in_capitals_that_is_no_missing_setting_is_still_the_servers_failure(
    stderr: str,
) -> None:
    """Unset, a name counts only on a line about the environment: an error code or a
    constant in a traceback is the server's own failure."""
    subject = _subject({"own": ("node", "/srv/index.js")}, stderr)
    assert [f.path for f in _judge(subject, RunOptions())] == ["servers.own"]


def test_a_variable_in_the_servers_own_env_block_was_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "k-1")
    subject = _subject({"brave": ("node", "index.js")}, "BRAVE_API_KEY is invalid")
    config = subject.extra["mcp_source"].connections["brave"].config
    subject.extra["mcp_source"].connections["brave"].config = ServerConfig(
        config.name, "stdio", command=config.command, env={"BRAVE_API_KEY": "other"}
    )
    assert [f.path for f in _judge(subject, RunOptions())] == ["servers.brave"]


def test_a_server_that_needs_a_token_from_the_shell_is_told_how_to_get_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, both ways: not passed, the start is not judged and the reason names
    the option; passed with it, the server starts and is judged."""
    monkeypatch.setenv("NEEDS_VARIABLE_TOKEN", "t-1")
    cut = _serve(pytester, str(NEEDS_VARIABLE))
    cut.assert_outcomes(skipped=1)
    cut.stdout.fnmatch_lines(
        ["SKIPPED * it names NEEDS_VARIABLE_TOKEN, * --toolnexus-env NEEDS_VARIABLE_TOKEN, *"]
    )
    given = _serve(
        pytester,
        str(NEEDS_VARIABLE),
        "--toolnexus-select",
        "TN851,TN502",
        "--toolnexus-env",
        "NEEDS_VARIABLE_TOKEN",
    )
    given.assert_outcomes(passed=2)


def test_a_file_not_found_in_the_home_the_sandbox_gave_is_not_the_servers_failure() -> None:
    stderr = (
        "FileNotFoundError: [Errno 2] No such file or directory:"
        " '/tmp/toolnexus-scratch/.home/.config/app/settings.json'"
    )
    subject = _subject({"app": ("/opt/venv/bin/app-server",)}, stderr)
    with pytest.raises(Skip) as skipped:
        _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert "it looks for ~/.config/app/settings.json in its home folder" in str(skipped.value)
    # Outside a sandbox that home was no sandbox's; and a file it read fine is no excuse.
    assert [f.path for f in _judge(subject, RunOptions())] == ["servers.app"]
    read = _subject({"app": ("app",)}, "ValueError: bad value in /tmp/toolnexus-scratch/.home/x")
    assert [f.path for f in _judge(read, RunOptions(contained=frozenset({TARGET})))] == [
        "servers.app"
    ]


@pytest.mark.skipif(not probe().available, reason=probe().why or "no sandbox here")
def test_a_server_that_reads_its_settings_from_home_is_judged_outside_the_sandbox(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = pytester.mkdir("home")
    (home / ".needs_home.toml").write_text("answer = 42\n")
    monkeypatch.setenv("HOME", str(home))
    contained = _serve(pytester, str(NEEDS_HOME))
    contained.assert_outcomes(skipped=1)
    contained.stdout.fnmatch_lines(["SKIPPED * it looks for ~/.needs_home.toml in its home*"])
    _serve(pytester, str(NEEDS_HOME), "--toolnexus-sandbox", "off").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    "stderr",
    [
        "Error: getaddrinfo ENOTFOUND api.search.brave.com",
        'psycopg.OperationalError: connection failed: connect to "localhost" port 5432'
        " failed: Connection refused",
    ],
)
def test_a_start_that_needs_the_network_the_sandbox_has_not_is_not_the_servers_failure(
    stderr: str,
) -> None:
    subject = _subject({"api": ("/opt/venv/bin/api-server",)}, stderr)
    with pytest.raises(Skip) as skipped:
        _judge(subject, RunOptions(contained=frozenset({TARGET})))
    assert "api did not start (" in str(skipped.value)
    assert "it reaches the network as it starts" in str(skipped.value)
    assert "--toolnexus-allow-network" in str(skipped.value)
    # With the network (or no sandbox) the lookup or the service failed by itself.
    assert [f.path for f in _judge(subject, RunOptions())] == ["servers.api"]


@pytest.mark.skipif(not probe().available, reason=probe().why or "no sandbox here")
def test_a_server_that_connects_to_a_service_as_it_starts_is_judged_with_the_network(
    pytester: pytest.Pytester,
) -> None:
    """Inside the sandbox its own loopback has no service: not judged, and told how;
    with the host's network it reaches the test's listener, starts and is judged."""
    with socket.create_server(("127.0.0.1", 0)) as service:
        service.listen(8)
        port = service.getsockname()[1]
        server = f"{NEEDS_NETWORK} {port}"
        contained = _serve(pytester, server)
        contained.assert_outcomes(skipped=1)
        contained.stdout.fnmatch_lines(
            [
                "SKIPPED * it reaches the network as it starts (*Connection refused*--toolnexus-allow-network"
            ]
        )
        networked = _serve(pytester, server, "--toolnexus-allow-network")
        networked.assert_outcomes(passed=1)
