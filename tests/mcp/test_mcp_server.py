"""Our tools served as an MCP server: in memory, over stdio (toolnexus-serve) and HTTP."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _mcp_testing import PYTHON, SERVERS, START
from _sessions import RunningSession, early
from mcp import MCPError

from toolnexus_ref import ToolContext
from toolnexus_ref.mcp import build_server, mcp_client, open_http, open_in_memory, open_stdio

sys.path.insert(0, str(SERVERS))
from served_tools import TOOLS, Spin

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_list_gives_names_and_schemas_verbatim(mode: str) -> None:
    async with mcp_client(TOOLS, mode=mode) as client:
        listed = (await client.list_tools()).tools
        assert [t.name for t in listed] == [t.name for t in TOOLS]
        for declared, tool in zip(listed, TOOLS, strict=True):
            assert declared.input_schema == tool.input_schema
            assert declared.description == tool.description
        greet = listed[0]
        assert greet.annotations is not None
        assert greet.annotations.read_only_hint is True


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_calls_errors_and_unknown_tools(mode: str) -> None:
    async with mcp_client(TOOLS, mode=mode) as client:
        ok = await client.call_tool("greet", {"who": "ada"})
        assert (ok.content[0].text, ok.is_error) == ("hello ada", False)  # type: ignore[union-attr]
        invalid = await client.call_tool("greet", {})
        assert invalid.is_error
        assert "who" in invalid.content[0].text
        broken = await client.call_tool("broken", {})
        assert broken.is_error
        assert broken.content[0].text == "RuntimeError: bug in the tool"  # type: ignore[union-attr]
        with pytest.raises(MCPError) as info:
            await client.call_tool("nope", {})
        assert info.value.code == -32602
        assert "Unknown tool" in info.value.message
        assert (await client.call_tool("greet", {"who": "bo"})).is_error is False


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_cancelled_request_cancels_the_tool_context(mode: str) -> None:
    Spin.seen.clear()
    async with mcp_client(TOOLS, mode=mode) as client:
        call = asyncio.ensure_future(client.call_tool("spin", {"seconds": 10}))
        await asyncio.sleep(0.2)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        for _ in range(200):
            if Spin.seen:
                break
            await asyncio.sleep(0.01)
        assert Spin.seen == ["cancelled by the MCP client"]
        assert (await client.call_tool("greet", {"who": "again"})).is_error is False


async def test_round_trip_through_mcp_tools_with_cancellation_and_paging() -> None:
    source = await open_in_memory(build_server(TOOLS, page_size=1), name="ours", timeout=START)
    try:
        assert [t.name for t in source.tools] == [
            "ours_greet",
            "ours_nap",
            "ours_spin",
            "ours_broken",
        ]
        greet, nap = source.tools[0], source.tools[1]
        assert (await greet.execute({"who": "x"})).output == "hello x"
        ctx = ToolContext()
        asyncio.get_running_loop().call_later(0.1, ctx.cancel)
        started = time.monotonic()
        result = await nap.execute({"seconds": 10}, ctx)
        assert result.is_error
        assert result.metadata["cancelled"]
        assert time.monotonic() - started < 2
        assert (await greet.execute({"who": "y"})).output == "hello y"
    finally:
        await source.close()


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="two tools are named 'greet'"):
        build_server([TOOLS[0], TOOLS[0]])


async def test_toolnexus_serve_over_stdio() -> None:
    command = [PYTHON, "-m", "toolnexus_ref.mcp.serve_cli", "served_tools:TOOLS"]
    async with await open_stdio(command, name="served", cwd=SERVERS, timeout=START) as source:
        assert source.statuses["served"].state == "connected", source.statuses["served"]
        greet = next(t for t in source.tools if t.original_name == "greet")
        assert (await greet.execute({"who": "stdio"})).output == "hello stdio"
        broken = next(t for t in source.tools if t.original_name == "broken")
        assert (await broken.execute({})).is_error


@pytest.fixture
def http_server() -> Iterator[str]:
    """``toolnexus-serve --transport http --port 0`` on loopback; yields its URL."""
    process = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "toolnexus_ref.mcp.serve_cli",
            "served_tools:TOOLS",
            "--transport",
            "http",
            "--port",
            "0",
        ],
        cwd=SERVERS,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        line = ""
        deadline = time.monotonic() + START
        while time.monotonic() < deadline and "listening on" not in line:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
        assert "listening on" in line, f"server did not start: {line!r}"
        yield line.split("listening on", 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        if process.stderr is not None:
            process.stderr.close()


async def test_streamable_http_round_trip(http_server: str) -> None:
    assert http_server.startswith("http://127.0.0.1:")
    async with await open_http(
        http_server, headers={"X-Token": "abc-secret"}, timeout=START
    ) as source:
        # named by its serverInfo, never by its host
        assert list(source.statuses) == ["toolnexus"]
        status = source.statuses["toolnexus"]
        assert status.state == "connected", status.describe()
        assert all(t.name.startswith("toolnexus_") for t in source.tools)
        greet = next(t for t in source.tools if t.original_name == "greet")
        assert (await greet.execute({"who": "http"})).output == "hello http"
        nap = next(t for t in source.tools if t.original_name == "nap")
        ctx = ToolContext()
        asyncio.get_running_loop().call_later(0.2, ctx.cancel)
        assert (await nap.execute({"seconds": 10}, ctx)).metadata["cancelled"]
        assert (await greet.execute({"who": "after"})).output == "hello after"
        assert "abc-secret" not in repr(source.connections["toolnexus"].config)


async def test_an_unreachable_http_server_fails_with_a_status() -> None:
    async with await open_http("http://127.0.0.1:9/mcp", timeout=5) as source:
        status = source.statuses["server"]
        assert status.state == "failed"
        assert status.reason
        assert source.tools == []


@early
def bad_target_serve(folder: Path) -> RunningSession:
    """``toolnexus-serve`` on a module that does not exist, in an empty folder: started
    early, as its command is fixed and it mostly imports before it fails."""
    command = [PYTHON, "-m", "toolnexus_ref.mcp.serve_cli", "no_such_module:TOOLS"]
    return RunningSession(command, folder, timeout=30)


def test_serve_cli_rejects_a_bad_target(bad_target_serve: RunningSession) -> None:
    done = bad_target_serve.result()
    assert done.ret != 0
    assert "cannot import 'no_such_module'" in done.stderr


def test_importing_without_the_sdk_says_what_to_install(tmp_path: Path) -> None:
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('mcp', 'mcp_types'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    done = subprocess.run(
        [PYTHON, "-c", "import toolnexus_ref; import toolnexus_ref.mcp"],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 1
    assert 'pip install "pytest-toolnexus[mcp]"' in done.stderr
