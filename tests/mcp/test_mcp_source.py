"""The MCP source against real servers started as subprocesses over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _mcp_testing import PYTHON, SERVERS, START, server_command
from _processes import alive

from toolnexus_ref import Tool, ToolContext
from toolnexus_ref._mcp_config import ServerConfig
from toolnexus_ref.mcp import McpSource, McpTool, open_mcp_json, open_servers, open_stdio
from toolnexus_ref.mcp._stdio import _group_lives

pytestmark = pytest.mark.anyio


def by_original(source: McpSource, name: str) -> McpTool:
    return next(t for t in source.tools if t.original_name == name)


async def test_highlevel_server_tools_meet_the_contract() -> None:
    async with await open_stdio(server_command("highlevel.py"), timeout=START) as source:
        assert source.statuses["highlevel"].state == "connected"
        assert source.statuses["highlevel"].protocol_version == "2026-07-28"
        assert {t.name for t in source.tools} == {
            "highlevel_echo",
            "highlevel_add",
            "highlevel_wait",
            "highlevel_picture",
        }
        add = by_original(source, "add")
        assert isinstance(add, Tool)
        assert add.source == "mcp"
        assert add.server_name == "highlevel"
        assert add.input_schema["required"] == ["a", "b"]
        assert add.output_schema is not None
        assert add.annotations.read_only is True
        assert add.annotations.destructive is False
        assert add.annotations.open_world is False
        result = await add.execute({"a": 2, "b": 40})
        assert (result.output, result.is_error) == ('{"result":42}', False)
        bad = await add.execute({"a": "two", "b": 1})
        assert bad.is_error
        assert "valid integer" in bad.output
        picture = await by_original(source, "picture").execute({})
        assert picture.output == "a picture\n[image: image/png, 16 bytes]"
        assert picture.metadata["content"][0]["mimeType"] == "image/png"


async def test_lowlevel_server_is_paged_through_and_hints_are_kept() -> None:
    async with await open_stdio(server_command("lowlevel.py"), timeout=START) as source:
        names = [t.original_name for t in source.tools]
        assert names == ["item0", "item1", "item2", "item3", "item4", "store"]
        store = by_original(source, "store")
        assert store.annotations.read_only is False
        assert store.annotations.destructive is False
        assert (await by_original(source, "item4").execute({})).output == "item4"


async def test_a_legacy_server_gets_the_initialize_handshake() -> None:
    async with await open_stdio(server_command("legacy.py"), timeout=START) as source:
        status = source.statuses["legacy"]
        assert status.state == "connected"
        assert status.protocol_version in ("2025-11-25", "2025-06-18")
        shout = by_original(source, "shout")
        assert (await shout.execute({"text": "hi"})).output == "HI"


async def test_cancel_reaches_a_legacy_server_and_the_session_survives() -> None:
    async with await open_stdio(server_command("legacy.py"), timeout=START) as source:
        ctx = ToolContext()
        asyncio.get_running_loop().call_later(0.2, ctx.cancel)
        started = time.monotonic()
        result = await by_original(source, "nap").execute({"seconds": 60}, ctx)
        assert result.is_error
        assert result.metadata["cancelled"] is True
        assert time.monotonic() - started < 15  # the cancel, not the nap's 60 s
        assert (await by_original(source, "shout").execute({"text": "on"})).output == "ON"
        # The server heard notifications/cancelled: it logs the request id it dropped.
        connection = source.connections["legacy"]
        assert connection._process is not None
        for _ in range(100):
            if "cancelled" in connection._process.stderr_tail():
                break
            await asyncio.sleep(0.02)
        assert "legacy: request" in connection._process.stderr_tail()


async def test_a_deadline_bounds_the_request() -> None:
    async with await open_stdio(server_command("highlevel.py"), timeout=START) as source:
        wait = by_original(source, "wait")
        started = time.monotonic()
        result = await wait.execute({"seconds": 60}, ToolContext(timeout=0.3))
        assert result.is_error
        assert result.retryable
        assert time.monotonic() - started < 15  # the deadline, not the wait's 60 s
        assert (await by_original(source, "echo").execute({"text": "x"})).output == '{"result":"x"}'


async def test_cancelling_the_awaiting_task_propagates() -> None:
    async with await open_stdio(server_command("highlevel.py"), timeout=START) as source:
        call = asyncio.ensure_future(by_original(source, "wait").execute({"seconds": 20}))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (await by_original(source, "echo").execute({"text": "y"})).output == '{"result":"y"}'


async def test_a_crash_mid_call_is_an_error_result_with_exit_code_and_stderr() -> None:
    async with await open_stdio(server_command("crashy.py"), timeout=START) as source:
        result = await by_original(source, "crash").execute({})
        assert result.is_error
        assert "server exited (code 3)" in result.output
        assert "segfault imminent" in result.output
        status = source.statuses["crashy"]
        assert (status.state, status.exit_code) == ("failed", 3)
        later = await by_original(source, "fine").execute({})
        assert later.is_error
        assert "server exited (code 3)" in later.output


async def test_hung_start_and_slow_listing_fail_in_bounded_time_without_harming_others() -> None:
    configs = [
        ServerConfig("hang", "stdio", command=tuple(server_command("hang_start.py")), timeout=1.0),
        # A standard-library server: its handshake meets 3 s on any machine, its listing never.
        ServerConfig(
            "slow", "stdio", command=tuple(server_command("slow_list.py", "60")), timeout=3
        ),
        ServerConfig("ok", "stdio", command=tuple(server_command("legacy.py")), timeout=START),
        ServerConfig("off", "stdio", command=("never-run",), enabled=False),
        ServerConfig("absent", "stdio", command=("/nonexistent/mcp-server",), timeout=START),
    ]
    started = time.monotonic()
    source = await open_servers(configs)
    try:
        elapsed = time.monotonic() - started
        statuses = source.statuses
        # Bounded by the servers' own timeouts (START at most), never the 60 s listing;
        # starting the healthy server takes seconds on a loaded machine.
        assert elapsed < 50
        hang = statuses["hang"]
        assert hang.state == "failed"
        assert "timed out after 1s" in hang.reason
        assert "loading a very large model" in hang.stderr_tail
        slow = statuses["slow"]
        assert slow.state == "failed"
        assert "during listing" in slow.reason
        assert statuses["ok"].state == "connected"
        assert statuses["off"].state == "disabled"
        absent = statuses["absent"]
        assert absent.state == "failed"
        assert absent.phase == "start"
        assert "FileNotFoundError" in absent.reason
        assert [t.server_name for t in source.tools] == ["ok", "ok"]
    finally:
        await source.close()


async def test_a_slow_listing_within_the_timeout_connects() -> None:
    async with await open_stdio(server_command("slow_list.py", "1.5"), timeout=START) as source:
        assert source.statuses["slow_list"].state == "connected"
        assert [t.name for t in source.tools] == ["slow_list_late"]


async def test_close_ends_the_whole_process_tree(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    source = await open_stdio(server_command("spawner.py", str(pid_file)), timeout=START)
    assert source.statuses["spawner"].state == "connected"
    grandchild = int(pid_file.read_text())
    server_pid = source.connections["spawner"]._process.pid  # type: ignore[union-attr]
    assert alive(grandchild)
    assert server_pid is not None
    started = time.monotonic()
    await source.close()
    assert time.monotonic() - started < 15
    for _ in range(200):
        if not alive(grandchild):
            break
        await asyncio.sleep(0.01)
    assert not alive(grandchild)
    assert not alive(server_pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_group_of_zombies_is_over() -> None:
    """Only a zombie left (reparented to an init that is slow to reap it): nothing runs."""
    done = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    running = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    try:
        for _ in range(1000):
            if _zombie(done.pid):
                break
            time.sleep(0.01)
        os.killpg(done.pid, 0)  # the group is still there for killpg
        assert not _group_lives(done.pid)
        assert _group_lives(running.pid)
    finally:
        running.kill()
        running.wait()
        done.wait()
    assert not _group_lives(done.pid)


def _zombie(pid: int) -> bool:
    with open(f"/proc/{pid}/stat", "rb") as handle:
        return handle.read().rsplit(b")", 1)[1].split()[0] == b"Z"


async def test_mcp_json_end_to_end_with_env_and_disabled(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "legacy": {"command": PYTHON, "args": [str(SERVERS / "legacy.py")], "timeout": START},
            "later": {"command": PYTHON, "args": ["nothing.py"], "disabled": True},
        }
    }
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    async with await open_mcp_json(tmp_path / "mcp.json") as source:
        assert {n: s.state for n, s in source.statuses.items()} == {
            "legacy": "connected",
            "later": "disabled",
        }
        assert [t.name for t in source.tools] == ["legacy_shout", "legacy_nap"]


async def test_server_env_reaches_the_server_and_stays_out_of_statuses(tmp_path: Path) -> None:
    script = tmp_path / "leaky.py"
    script.write_text(
        "import os, sys\nsys.stderr.write('token=' + os.environ['API_KEY'] + '\\n')\n"
        "sys.stderr.flush()\nsys.exit(2)\n"
    )
    source = await open_stdio(
        [PYTHON, str(script)], env={"API_KEY": "hunter2-secret"}, timeout=START
    )
    try:
        status = source.statuses["leaky"]
        assert status.state == "failed"
        assert "token=***" in status.stderr_tail
        assert "hunter2" not in status.describe()
        assert "hunter2" not in repr(source)
    finally:
        await source.close()


async def test_the_exposed_name_is_sanitized_and_prefixed() -> None:
    async with await open_stdio(
        server_command("defective.py"), name="my.server", timeout=START
    ) as source:
        names = {t.original_name: t.name for t in source.tools}
        assert names["search.files"] == "my_server_search_files"
        assert all(len(n) > 0 for n in names.values())


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["node", "/opt/mcp/server-everything/dist/index.js"], "server-everything"),
        (["node", "/srv/weather/build/src/main.js", "--port", "1"], "weather"),
        (["python", "-m", "weather_mcp.server"], "weather_mcp"),
        (["python", "tools/calendar_server.py"], "calendar_server"),
        (["npx", "-y", "@acme/mcp-notes@1.2.0"], "mcp-notes"),
        (["/usr/local/bin/mcp-server-time"], "mcp-server-time"),
    ],
)
def test_a_stand_in_name_from_the_command_says_which_server(command: list[str], name: str) -> None:
    from toolnexus_ref.mcp._source import _name_for

    assert _name_for(command) == name


async def test_a_stdio_server_is_named_by_its_server_info() -> None:
    """``progress_ignores_cancel.py`` calls itself ``progress``: that is its name here."""
    async with await open_stdio(
        server_command("progress_ignores_cancel.py"), timeout=START
    ) as source:
        assert list(source.statuses) == ["progress"]
        assert [t.name for t in source.tools] == ["progress_crunch"]
    async with await open_stdio(
        server_command("progress_ignores_cancel.py"), name="mine", timeout=START
    ) as source:
        assert [t.name for t in source.tools] == ["mine_crunch"]


async def test_two_servers_that_give_the_same_server_info_name_are_kept_apart() -> None:
    command = tuple(server_command("hostile.py", "healthy"))
    configs = [
        ServerConfig("a", "stdio", command=command, named_by_server=True, timeout=START),
        ServerConfig("b", "stdio", command=command, named_by_server=True, timeout=START),
    ]
    async with await open_servers(configs) as source:
        assert sorted(source.statuses) == ["hostile", "hostile_2"]
        assert sorted(t.name for t in source.tools) == ["hostile_2_echo", "hostile_echo"]
