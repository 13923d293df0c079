"""A raw JSON-RPC server that misbehaves in the way ``argv[1]`` names; standard library only.

The SDK refuses to send a malformed result or a line without its newline, so this
server writes the wire itself (pre-2026 ``initialize`` handshake, as 1.x and
TypeScript servers speak). Every mode keeps one healthy read-only tool, ``echo``,
so a test can tell "the server is hostile" from "the client broke".

Modes:

- ``malformed``: ``string_content`` answers ``{"content": "a string"}``, ``no_content``
  answers ``{}``, ``unknown_block`` answers a block of type ``video``.
- ``endless-line``: ``tools/list`` starts an answer and never ends the line.
- ``flood``: after the handshake, writes log lines on stdout without pause.
- ``garbage``: a banner and log lines on stdout around honest answers.
- ``big-list``: ``tools/list`` is one line of about ``argv[2]`` MB (default 50).
- ``many-tools``: ``tools/list`` gives ``argv[2]`` tools (default 100,000) in one page.
- ``big-result``: ``big`` answers about ``argv[2]`` MB of text (default 20).
- ``endless-paging``: every ``tools/list`` page carries a fresh ``nextCursor``.
- ``malformed-list``: ``tools/list`` gives a tool without ``inputSchema``.
- ``paging-loop``: every ``tools/list`` page is the same, with the same ``nextCursor``.
- ``echo-secret``: ``whoami`` echoes the environment variable ``SECRET`` in an error text.
- ``notification-flood``: after the handshake, ``notifications/message`` without pause.
- ``stderr-flood``: after the handshake, writes to stderr without pause.
- ``crash``: ``noisy`` logs a traceback on stderr and answers an error; ``crash`` writes
  one line on stderr and exits with code 3.
- ``healthy``: nothing wrong; the neighbour the others are judged beside.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "garbage"
SIZE = int(sys.argv[2]) if len(sys.argv) > 2 else 0
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}
EMPTY = {"type": "object", "properties": {}, "additionalProperties": False}


def tool(name: str, description: str = "A tool of the hostile server.") -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "inputSchema": EMPTY,
        "annotations": READ_ONLY,
    }


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


LOCK = threading.Lock()


def write(data: str) -> None:
    with LOCK:
        sys.stdout.write(data)
        sys.stdout.flush()


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message) + "\n")


def tools_page(cursor: str | None) -> dict[str, Any]:
    if MODE == "malformed":
        names = ["string_content", "no_content", "unknown_block"]
        return {"tools": [tool("echo"), *(tool(n) for n in names)]}
    if MODE == "big-list":
        megabytes = SIZE or 50
        padding = "x" * 1_000_000
        listed = [tool(f"t{i}", padding) for i in range(megabytes)]
        return {"tools": [tool("echo"), *listed]}
    if MODE == "many-tools":
        return {"tools": [tool("echo"), *(tool(f"t{i}") for i in range(SIZE or 100_000))]}
    if MODE == "big-result":
        return {"tools": [tool("echo"), tool("big")]}
    if MODE == "endless-paging":
        page = int(cursor or 0)
        return {
            "tools": [tool("echo" if page == 0 else f"page{page}")],
            "nextCursor": str(page + 1),
        }
    if MODE == "malformed-list":
        return {"tools": [{"name": "shapeless", "description": "No schema."}]}
    if MODE == "paging-loop":
        return {"tools": [tool("echo"), tool("again")], "nextCursor": "again"}
    if MODE == "crash":
        return {"tools": [tool("echo"), tool("noisy"), tool("crash")]}
    if MODE == "echo-secret":
        return {"tools": [tool("echo"), tool("whoami", "Say which secret the server was given.")]}
    return {"tools": [tool("echo")]}


def call(name: str) -> dict[str, Any]:
    if name == "string_content":
        return {"content": "a string"}
    if name == "no_content":
        return {}
    if name == "unknown_block":
        return {"content": [{"type": "video", "url": "https://example.invalid/v.mp4"}]}
    if name == "big":
        return text("y" * ((SIZE or 20) * 1_000_000))
    if name == "noisy":
        sys.stderr.write('Traceback (most recent call last):\n  File "x.py", line 1\n')
        sys.stderr.write("ValueError: an earlier, handled failure\n")
        sys.stderr.flush()
        return {"content": [{"type": "text", "text": "failed, handled"}], "isError": True}
    if name == "crash":
        sys.stderr.write("fatal: out of memory (simulated)\n")
        sys.stderr.flush()
        os._exit(3)
    if name == "whoami":
        # Reads as an error, so TN552 fails and quotes it: the value reaches every report.
        return text(f"Error: the upstream refused the token {os.environ.get('SECRET', '')}")
    return text("echo")


def flood_notifications() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/message"}
    line = json.dumps({**note, "params": {"level": "info", "data": "still here"}}) + "\n"
    while True:
        write(line * 50)


def flood_stderr() -> None:
    block = "debug: " + "z" * 1017 + "\n"
    while True:
        sys.stderr.write(block * 64)


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if request_id is None:  # a notification
        return
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1.0"},
        }
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
        if MODE == "flood":
            while True:
                write("log: still working on nothing in particular\n" * 100)
        if MODE == "notification-flood":
            threading.Thread(target=flood_notifications, daemon=True).start()
        if MODE == "stderr-flood":
            threading.Thread(target=flood_stderr, daemon=True).start()
    elif method == "tools/list":
        if MODE == "endless-line":
            write(json.dumps({"jsonrpc": "2.0", "id": request_id})[:-1] + ', "result": {"tools": [')
            while True:
                write(" " * 65536)
        if MODE == "garbage":
            write("listing tools now\n")
        send({"jsonrpc": "2.0", "id": request_id, "result": tools_page(params.get("cursor"))})
    elif method == "tools/call":
        if MODE == "garbage":
            write("DEBUG call received\n")
        send({"jsonrpc": "2.0", "id": request_id, "result": call(str(params.get("name")))})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})


def main() -> None:
    if MODE == "garbage":
        write("Hostile MCP server v1.0 starting up...\n")
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
