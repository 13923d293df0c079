"""A pre-2026 server in raw JSON-RPC, as 1.x Python and TypeScript SDK servers behave.

It knows only the ``initialize`` handshake (protocol 2025-06-18 or 2025-11-25,
whichever the client asks for), answers ``server/discover`` with "method not
found", and honours ``notifications/cancelled``. Standard library only, so no
2.x SDK code is involved on the server side.
"""

from __future__ import annotations

import json
import sys
import threading
import time

VERSIONS = ("2025-11-25", "2025-06-18")
TOOLS = [
    {
        "name": "shout",
        "description": "Upper-case the text.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "nap",
        "description": "Sleep, honouring cancellation.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
        "annotations": {"readOnlyHint": True},
    },
]
lock = threading.Lock()
cancelled: set[object] = set()


def send(message: dict[str, object]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def nap(request_id: object, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if request_id in cancelled:
            sys.stderr.write(f"legacy: request {request_id} cancelled\n")
            sys.stderr.flush()
            return  # a cancelled request gets no answer
        time.sleep(0.01)
    send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"content": [{"type": "text", "text": "rested"}], "isError": False},
        }
    )


def handle(message: dict[str, object]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    assert isinstance(params, dict)
    if method == "notifications/cancelled":
        cancelled.add(params.get("requestId"))
        return
    if request_id is None:
        return
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in VERSIONS else VERSIONS[0]
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy", "version": "1.0"},
                },
            }
        )
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call" and params.get("name") == "shout":
        text = str((params.get("arguments") or {}).get("text", ""))
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"content": [{"type": "text", "text": text.upper()}]},
            }
        )
    elif method == "tools/call" and params.get("name") == "nap":
        seconds = float((params.get("arguments") or {}).get("seconds", 1))
        threading.Thread(target=nap, args=(request_id, seconds), daemon=True).start()
    else:
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32601, "message": f"Method not found: {method}"},
            }
        )


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
