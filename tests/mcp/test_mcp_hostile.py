"""Hostile MCP servers, each beside a healthy neighbour in one ``mcp.json``.

Every hostile server gets a verdict or a clear status within the stated bounds
(docs/mcp.md, "Bounds"), its neighbour is still judged, and after ``close()`` no
process of either is left. The time each costs is printed (``-s`` shows it), never
asserted: the bounds are the kit's, the machine's speed is not.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from _mcp_testing import PYTHON, server_command
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.live._loop import BackgroundLoop

from toolnexus_ref.mcp import McpSource, open_mcp_json
from toolnexus_ref.mcp._connection import MAX_PAGES, MAX_TOOLS

#: Long enough for a loaded machine; the hostile servers are bounded by the kit, not this.
TIMEOUT = 30


def _entry(*args: str) -> dict[str, object]:
    command = server_command("hostile.py", *args)
    return {"command": command[0], "args": command[1:], "timeout": TIMEOUT}


def write_config(folder: Path, hostile: dict[str, object]) -> Path:
    path = folder / "mcp.json"
    servers = {"hostile": hostile, "healthy": _entry("healthy")}
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


class Opened:
    """A source opened from a config, with what it cost and the process groups it started."""

    def __init__(self, loop: BackgroundLoop, config: Path) -> None:
        self.loop = loop
        started = time.monotonic()
        self.source: McpSource = loop.run(open_mcp_json(config), timeout=4 * TIMEOUT)
        self.open_seconds = time.monotonic() - started
        self.groups = [
            c.process.pid
            for c in self.source.connections.values()
            if c.process is not None and c.process.pid is not None
        ]

    def judge(self, select: list[str]) -> list[Verdict]:
        source = self.source
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        return check_subjects(
            subjects, "t", select=select, loop=self.loop, target_extra=source.conformance_extra()
        )

    def close(self, label: str) -> None:
        started = time.monotonic()
        self.loop.run(self.source.close(), timeout=60)
        closed = time.monotonic() - started
        print(f"\n{label}: opened in {self.open_seconds:.2f}s, closed in {closed:.2f}s")
        left = [pid for pid in self.groups if _group_alive(pid)]
        assert not left, f"process groups still alive after close: {left}"


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs: zombies waiting for their reaper (a slow
    init reaps the sandbox's) are dead for our purposes, as the close counts them."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def target_verdict(verdicts: list[Verdict], code: str) -> Verdict:
    [verdict] = [v for v in verdicts if v.check.code == code]
    return verdict


def assert_neighbour_judged(opened: Opened, verdicts: list[Verdict]) -> None:
    status = opened.source.statuses["healthy"]
    assert status.state == "connected", status.describe()
    assert status.problems == ()
    mine = [v for v in verdicts if v.tool == "healthy_echo"]
    assert mine, "the healthy neighbour got no verdict"
    assert all(v.outcome is Outcome.PASSED for v in mine), [(v.check.code, v.message) for v in mine]
    echo = next(t for t in opened.source.tools if t.name == "healthy_echo")
    result = opened.loop.run(echo.execute({}), timeout=TIMEOUT)
    assert (result.is_error, result.output) == (False, "echo")


NEIGHBOUR_CHECKS = ["TN851", "TN852", "TN651", "TN552"]


@pytest.mark.parametrize(
    ("mode", "needle"),
    [
        ("endless-line", "without ending it; a JSON-RPC message over stdio is one line"),
        ("flood", "stdout flooded: the server wrote 1001 lines"),
        ("malformed-list", "the server's answer is malformed: tools.0.inputSchema is missing"),
    ],
)
def test_a_server_that_breaks_the_protocol_while_listing_fails_alone(
    loop: BackgroundLoop, tmp_path: Path, mode: str, needle: str
) -> None:
    """TN851 names the hostile server and why (for a broken framing: the bound it passed)."""
    opened = Opened(loop, write_config(tmp_path, _entry(mode)))
    try:
        status = opened.source.statuses["hostile"]
        assert (status.state, status.phase) == ("failed", "listing")
        assert needle in status.reason
        verdicts = opened.judge(NEIGHBOUR_CHECKS)
        starts = target_verdict(verdicts, "TN851")
        assert starts.outcome is Outcome.FAILED
        assert "hostile: failed: " in starts.message
        assert needle in starts.message
        assert len(starts.message) < 4000
        assert_neighbour_judged(opened, verdicts)
    finally:
        opened.close(mode)


def test_malformed_call_results_are_malformed_result_errors(
    loop: BackgroundLoop, tmp_path: Path
) -> None:
    opened = Opened(loop, write_config(tmp_path, _entry("malformed")))
    try:
        assert opened.source.statuses["hostile"].ok
        tools = {t.original_name: t for t in opened.source.tools if t.server_name == "hostile"}
        expected = {
            "string_content": "content: Input should be a valid list (got str 'a string')",
            "no_content": "content is missing",
            "unknown_block": "content.0: unknown type 'video' (the protocol defines 'text',",
        }
        for name, problem in expected.items():
            result = loop.run(tools[name].execute({}), timeout=TIMEOUT)
            assert result.is_error, name
            assert result.metadata["error_type"] == "MalformedResult"
            assert problem in result.metadata["problem"]
            assert result.output.startswith("the server's tools/call result is malformed: ")
        echo = loop.run(tools["echo"].execute({}), timeout=TIMEOUT)
        assert (echo.is_error, echo.output) == (False, "echo")
        assert_neighbour_judged(opened, opened.judge(NEIGHBOUR_CHECKS))
    finally:
        opened.close("malformed")


def test_output_on_stdout_that_is_not_json_rpc_fails_tn852(
    loop: BackgroundLoop, tmp_path: Path
) -> None:
    opened = Opened(loop, write_config(tmp_path, _entry("garbage")))
    try:
        status = opened.source.statuses["hostile"]
        assert status.ok, status.describe()
        verdicts = opened.judge(NEIGHBOUR_CHECKS)
        assert target_verdict(verdicts, "TN851").outcome is Outcome.PASSED
        keeps = target_verdict(verdicts, "TN852")
        assert keeps.outcome is Outcome.FAILED
        assert "hostile: the server wrote 2 lines" in keeps.message
        assert "'Hostile MCP server v1.0 starting up...'" in keeps.message
        assert "healthy" not in keeps.message
        assert_neighbour_judged(opened, verdicts)
    finally:
        opened.close("garbage")


@pytest.mark.parametrize(
    ("args", "tools", "needle"),
    [
        (("endless-paging",), MAX_PAGES, f"still paging after {MAX_PAGES:,} pages"),
        (("many-tools", "20000"), MAX_TOOLS, f"gave more than {MAX_TOOLS:,} tools (20,001"),
        (("paging-loop",), 2, "paging loops: page 2 gave a cursor already seen ('again')"),
    ],
    ids=["endless-paging", "many-tools", "paging-loop"],
)
def test_a_listing_that_does_not_end_is_cut_and_fails_tn852(
    loop: BackgroundLoop, tmp_path: Path, args: tuple[str, ...], tools: int, needle: str
) -> None:
    opened = Opened(loop, write_config(tmp_path, _entry(*args)))
    try:
        status = opened.source.statuses["hostile"]
        assert status.ok, status.describe()
        assert status.tool_count == tools
        assert needle in status.problems[0]
        if args[0] == "paging-loop":
            assert "listed 2 tools under a name it had already listed" in status.problems[1]
        else:
            assert len(status.problems) == 1
        verdicts = opened.judge(["TN851", "TN852", "TN151"])
        keeps = target_verdict(verdicts, "TN852")
        assert keeps.outcome is Outcome.FAILED
        assert needle in keeps.message
        assert_neighbour_judged(opened, verdicts)
    finally:
        opened.close(args[0])


def test_a_50_mb_listing_and_a_20_mb_result_are_read_whole(
    loop: BackgroundLoop, tmp_path: Path
) -> None:
    """Linear reading: neither the listing nor the call runs into its phase bound."""
    opened = Opened(loop, write_config(tmp_path, _entry("big-list", "50")))
    try:
        status = opened.source.statuses["hostile"]
        assert status.ok, status.describe()
        assert status.tool_count == 51
        assert_neighbour_judged(opened, opened.judge(["TN851", "TN852", "TN151"]))
    finally:
        opened.close("big-list 50 MB")
    opened = Opened(loop, write_config(tmp_path, _entry("big-result", "20")))
    try:
        big = next(t for t in opened.source.tools if t.name == "hostile_big")
        started = time.monotonic()
        result = loop.run(big.execute({}), timeout=TIMEOUT)
        print(f"\na 20 MB call result: {time.monotonic() - started:.2f}s")
        assert not result.is_error
        assert len(result.output) == 20_000_000
        probe = loop.run(big.connection.probe(TIMEOUT), timeout=TIMEOUT)
        assert probe is None
    finally:
        opened.close("big-result 20 MB")


def test_an_unset_variable_fails_that_server_alone(
    loop: BackgroundLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLNEXUS_TEST_UNSET", raising=False)
    entry = {**_entry("healthy"), "env": {"TOKEN": "${TOOLNEXUS_TEST_UNSET}"}}
    opened = Opened(loop, write_config(tmp_path, entry))
    try:
        status = opened.source.statuses["hostile"]
        assert (status.state, status.phase) == ("failed", "config")
        assert "uses ${TOOLNEXUS_TEST_UNSET}" in status.reason
        assert "mcp.json:1: server 'hostile', key 'env'" in status.reason
        verdicts = opened.judge(NEIGHBOUR_CHECKS)
        starts = target_verdict(verdicts, "TN851")
        assert starts.outcome is Outcome.FAILED
        assert "TOOLNEXUS_TEST_UNSET is not set" in starts.message
        assert_neighbour_judged(opened, verdicts)
    finally:
        opened.close("unset variable")


def test_a_crash_carries_its_own_stderr_not_an_earlier_traceback(
    loop: BackgroundLoop, tmp_path: Path
) -> None:
    opened = Opened(loop, write_config(tmp_path, _entry("crash")))
    try:
        tools = {t.original_name: t for t in opened.source.tools if t.server_name == "hostile"}
        noisy = loop.run(tools["noisy"].execute({}), timeout=TIMEOUT)
        assert noisy.is_error
        crashed = loop.run(tools["crash"].execute({}), timeout=TIMEOUT)
        assert crashed.is_error
        assert crashed.metadata["error_type"] == "ServerUnavailable"
        status = opened.source.statuses["hostile"]
        assert status.reason == "server exited (code 3)"
        assert status.stderr_tail == "fatal: out of memory (simulated)"
        assert "fatal: out of memory (simulated)" in crashed.output
        assert "earlier, handled failure" not in crashed.output
        assert opened.source.statuses["healthy"].ok
    finally:
        opened.close("crash")


@pytest.mark.parametrize(
    ("mode", "needle"),
    [
        ("notification-flood", "notifications flooded: more than 10,000"),
        ("stderr-flood", "stderr flooded: more than 64 MiB written"),
    ],
)
def test_a_server_that_floods_after_the_handshake_is_stopped(
    loop: BackgroundLoop, tmp_path: Path, mode: str, needle: str
) -> None:
    """Bounded in memory and disk, not only in time: only a 64 KiB stderr tail is kept."""
    opened = Opened(loop, write_config(tmp_path, _entry(mode)))
    try:
        connection = opened.source.connections["hostile"]
        started = time.monotonic()
        while connection.status.ok and time.monotonic() - started < 4 * TIMEOUT:
            time.sleep(0.05)
        print(f"\n{mode}: stopped {time.monotonic() - started:.2f}s after the handshake")
        status = connection.status
        assert status.state == "failed"
        assert needle in status.reason
        assert len(status.stderr_tail) < 30_000
        verdicts = opened.judge(NEIGHBOUR_CHECKS)
        starts = target_verdict(verdicts, "TN851")
        assert starts.outcome is Outcome.FAILED
        assert needle in starts.message
        assert_neighbour_judged(opened, verdicts)
    finally:
        opened.close(mode)


def test_a_notification_flood_is_stopped_by_a_reader_slower_than_the_windows_pace(
    loop: BackgroundLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a machine slow enough that the kit reads fewer notifications a second than the
    limit allows in a window, a flood is still a flood: the server stays ahead of it.

    Here the kit reads at most 500 a second (2 ms a message) and the window rule allows
    1,000 a second: the window alone never fires. A run of 500 notifications each read
    while the server was ahead does.
    """
    from toolnexus_ref.mcp import _framing, _stdio

    parse = _stdio._parse

    def slow_parse(line: bytes) -> object:
        time.sleep(0.002)
        return parse(line)

    monkeypatch.setattr(_stdio, "_parse", slow_parse)
    monkeypatch.setattr(
        _stdio, "NotificationRate", lambda: _framing.NotificationRate(limit=500, window=0.5)
    )
    opened = Opened(loop, write_config(tmp_path, _entry("notification-flood")))
    try:
        connection = opened.source.connections["hostile"]
        started = time.monotonic()
        while connection.status.ok and time.monotonic() - started < TIMEOUT:
            time.sleep(0.05)
        print(f"\nslow reader: stopped {time.monotonic() - started:.2f}s after the handshake")
        status = connection.status
        assert status.state == "failed", status.describe()
        assert "notifications flooded: more than 500 in a row" in status.reason
        assert opened.source.statuses["healthy"].state == "connected"
    finally:
        opened.close("slow reader")


def _processes_running(needle: str) -> list[str]:
    """Command lines of live processes that mention ``needle`` (Linux ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        command = raw.replace(b"\0", b" ").decode(errors="replace")
        if needle in command and state != "Z":
            found.append(command)
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_hostile_servers_through_the_plugin(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """One mcp.json of hostile servers and a healthy one: a verdict for each, none left running."""
    script = tmp_path / "hostile_copy.py"
    script.write_text((Path(__file__).parent / "servers" / "hostile.py").read_text())

    def entry(mode: str) -> dict[str, object]:
        return {"command": PYTHON, "args": [str(script), mode], "timeout": TIMEOUT}

    servers = {
        "garbage": entry("garbage"),
        "endless": entry("endless-line"),
        "flood": entry("flood"),
        "malformed": entry("malformed"),
        "unset": {**entry("healthy"), "env": {"T": "${TOOLNEXUS_TEST_UNSET}"}},
        "healthy": entry("healthy"),
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    report = tmp_path / "report.json"
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-target",
        str(config),
        "--toolnexus-select",
        "TN851,TN852,TN552",
        "--toolnexus-report",
        str(report),
    )
    print(f"\nsix servers through the plugin: {time.monotonic() - started:.2f}s")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    rows = json.loads(report.read_text())["results"]
    by_check = {r["check"]: r for r in rows if r["tool"] == "*"}
    assert by_check["TN851"]["outcome"] == by_check["TN852"]["outcome"] == "failed"
    assert (
        "endless: failed: the server sent a line of more than 64 MiB"
        in (by_check["TN851"]["message"])
    )
    assert "garbage: the server wrote " in by_check["TN852"]["message"]
    shown = "\n".join(result.outlines)  # the failure shows every finding; the record the first
    assert "flood: failed: stdout flooded" in shown
    assert "unset: failed: " in shown
    assert "TOOLNEXUS_TEST_UNSET is not set" in shown
    judged = {(r["tool"], r["outcome"]) for r in rows if r["check"] == "TN552"}
    assert ("healthy_echo", "passed") in judged
    assert ("garbage_echo", "passed") in judged
    assert {t for t, _ in judged} >= {"malformed_string_content", "malformed_unknown_block"}
    assert _processes_running(str(script)) == []
