"""What hostile MCP servers cost: the stdio line reader and each phase bound, measured.

Run from the repository root:

    .venv/bin/python benchmarks/bench_mcp_hostile.py

Part one splits one long line (5 MB and 50 MB, in the 64 KiB chunks a pipe gives)
with ``LineReader`` and with the splitter it replaced (``buffer += chunk`` then
``buffer.split``), measured in the same run: the ratio between sizes shows linear
(about 10x for 10x the bytes) against quadratic (about 100x). Part two opens each
hostile server of ``tests/mcp/servers/hostile.py`` beside a healthy one and prints
how long opening, one call (for the floods that start after the handshake: until the
server was stopped) and closing took, and what the status says.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toolnexus_ref.mcp import open_mcp_json
from toolnexus_ref.mcp._framing import LineReader

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "mcp" / "servers" / "hostile.py"
CHUNK = 65536


def old_split(chunks: list[bytes]) -> int:
    buffer = b""
    count = 0
    for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        count += len(lines)
    return count


def new_split(chunks: list[bytes]) -> int:
    reader = LineReader(limit=1 << 30)
    return sum(len(reader.feed(chunk)) for chunk in chunks)


def seconds(split: Callable[[list[bytes]], int], size: int) -> float:
    line = b"x" * size + b"\n"
    chunks = [line[i : i + CHUNK] for i in range(0, len(line), CHUNK)]
    started = time.perf_counter()
    assert split(chunks) == 1
    return time.perf_counter() - started


def reader_table() -> None:
    print("one line, split from 64 KiB chunks")
    print(f"  {'splitter':<28}{'5 MB':>10}{'50 MB':>10}{'ratio':>8}")
    for label, split in (("LineReader", new_split), ("buffer += chunk; split", old_split)):
        small, large = seconds(split, 5_000_000), seconds(split, 50_000_000)
        print(f"  {label:<28}{small:>9.3f}s{large:>9.3f}s{large / small:>7.0f}x")


MODES = [
    ("malformed",),
    ("endless-line",),
    ("flood",),
    ("garbage",),
    ("big-list", "50"),
    ("big-result", "20"),
    ("many-tools", "100000"),
    ("endless-paging",),
    ("paging-loop",),
    ("malformed-list",),
    ("notification-flood",),
    ("stderr-flood",),
]


async def one(mode: tuple[str, ...], folder: Path) -> None:
    def entry(*args: str) -> dict[str, object]:
        return {"command": sys.executable, "args": [str(HOSTILE), *args]}

    config = folder / "mcp.json"
    servers = {"hostile": entry(*mode), "healthy": entry("healthy")}
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    started = time.monotonic()
    source = await open_mcp_json(config)
    opened = time.monotonic() - started
    called = 0.0
    tools = [t for t in source.tools if t.server_name == "hostile"]
    if tools:
        target = next((t for t in tools if t.original_name in ("big", "string_content")), tools[0])
        started = time.monotonic()
        await target.execute({})
        called = time.monotonic() - started
    if "flood" in mode[0]:  # these start after the handshake: wait until they are stopped
        connection = source.connections["hostile"]
        while connection.status.ok and time.monotonic() - started < 30:
            await asyncio.sleep(0.05)
        called = time.monotonic() - started
    status = source.statuses["hostile"]
    healthy = source.statuses["healthy"].state
    started = time.monotonic()
    await source.close()
    closed = time.monotonic() - started
    said = status.reason or "; ".join(status.problems) or "-"
    print(
        f"  {' '.join(mode):<22}{opened:>7.2f}s{called:>7.2f}s{closed:>7.2f}s"
        f"  {status.state:<10}{status.tool_count:>6}  {healthy:<10} {said[:70]}"
    )


async def servers_table() -> None:
    print("\nhostile servers beside a healthy one (open, one call, close)")
    print(f"  {'mode':<22}{'open':>8}{'call':>8}{'close':>8}  {'state':<10}{'tools':>6}  neighbour")
    with tempfile.TemporaryDirectory() as folder:
        for mode in MODES:
            await one(mode, Path(folder))


if __name__ == "__main__":
    reader_table()
    asyncio.run(servers_table())
