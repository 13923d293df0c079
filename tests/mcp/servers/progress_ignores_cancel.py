"""A raw JSON-RPC server that keeps sending progress after its request was cancelled.

``crunch`` reports progress every 50 ms for 3 s and reads ``notifications/cancelled``
only to log it: the progress goes on (the defect TN752 flags) and the answer is
still sent at the end. Standard library only, so no SDK drops the late progress
for us; pre-2026 ``initialize`` handshake, as 1.x and TypeScript servers speak.
"""

from __future__ import annotations

import json
import sys
import threading
import time

VERSIONS = ("2025-11-25", "2025-06-18")
TOOLS = [
    {
        "name": "crunch",
        "description": "Crunch numbers, reporting progress.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True, "destructiveHint": False},
    }
]
STEPS = 60
STEP = 0.05
lock = threading.Lock()


def send(message: dict[str, object]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def crunch(request_id: object, token: object) -> None:
    for step in range(STEPS):
        if token is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": step, "total": STEPS},
                }
            )
        time.sleep(STEP)
    result = {"content": [{"type": "text", "text": "crunched"}], "isError": False}
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def handle(message: dict[str, object]) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    assert isinstance(params, dict)
    if method == "notifications/cancelled":
        sys.stderr.write(f"ignoring the cancellation of {params.get('requestId')}\n")
        sys.stderr.flush()
        return
    if request_id is None:
        return
    if method == "initialize":
        asked = params.get("protocolVersion")
        result: dict[str, object] = {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "progress", "version": "1.0"},
        }
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call" and params.get("name") == "crunch":
        meta = params.get("_meta") or {}
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        threading.Thread(target=crunch, args=(request_id, token), daemon=True).start()
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        send({"jsonrpc": "2.0", "id": request_id, "error": error})


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            handle(json.loads(line))


if __name__ == "__main__":
    main()
