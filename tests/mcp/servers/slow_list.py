"""A server that answers the handshake at once but takes ``argv[1]`` seconds to list tools.

Raw JSON-RPC on the standard library only: it starts in tens of milliseconds even on
a busy machine, so a test can give it a timeout of a few seconds that its handshake
always meets and its listing never does. Everything but the listing is answered
while the listing waits.
"""

from __future__ import annotations

import json
import sys
import threading

DELAY = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
VERSIONS = ("2025-11-25", "2025-06-18")
TOOLS = [{"name": "late", "description": "Listed late.", "inputSchema": {"type": "object"}}]
lock = threading.Lock()


def send(request_id: object, result: dict[str, object]) -> None:
    with lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
        sys.stdout.flush()


def handle(message: dict[str, object]) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") or {}
    assert isinstance(params, dict)
    if request_id is None:  # notifications
        return
    if method == "initialize":
        asked = params.get("protocolVersion")
        send(
            request_id,
            {
                "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "slow_list", "version": "1.0"},
            },
        )
    elif method == "ping":
        send(request_id, {})
    elif method == "tools/list":
        timer = threading.Timer(DELAY, send, (request_id, {"tools": TOOLS}))
        timer.daemon = True
        timer.start()
    elif method == "tools/call":
        send(request_id, {"content": [{"type": "text", "text": "late"}]})
    else:
        with lock:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))
            sys.stdout.write("\n")
            sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
