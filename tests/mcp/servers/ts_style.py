"""A 2025-11-25 server in raw JSON-RPC that declares tools as the TypeScript SDK does.

Every schema converted from zod carries ``$schema`` (three of its five tools here),
and ``research`` declares ``execution.taskSupport: "required"``: a plain
``tools/call`` of it is refused, as ``server-everything`` refuses
``simulate-research-query``. Standard library only.
"""

from __future__ import annotations

import json
import sys

DRAFT = "http://json-schema.org/draft-07/schema#"


def _tool(name: str, *, dollar: bool, task: str | None = None) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object", "properties": {"q": {"type": "string"}}}
    if dollar:
        schema["$schema"] = DRAFT
    tool: dict[str, object] = {
        "name": name,
        "description": f"Answer {name} questions.",
        "inputSchema": schema,
        "annotations": {"readOnlyHint": True},
    }
    if task is not None:
        tool["execution"] = {"taskSupport": task}
    return tool


TOOLS = [
    _tool("alpha", dollar=False),
    _tool("beta", dollar=True),
    _tool("gamma", dollar=True),
    _tool("delta", dollar=True),
    _tool("research", dollar=False, task="required"),
]


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id: object, method: object, params: dict[str, object]) -> dict[str, object]:
    if method == "initialize":
        return {
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tsstyle", "version": "1.0"},
            }
        }
    if method == "ping":
        return {"result": {}}
    if method == "tools/list":
        return {"result": {"tools": TOOLS}}
    if method == "tools/call" and params.get("name") == "research":
        return {"error": {"code": -32600, "message": "Tool research requires task augmentation"}}
    if method == "tools/call":
        text = f"{params.get('name')}: ok"
        return {"result": {"content": [{"type": "text", "text": text}], "isError": False}}
    return {"error": {"code": -32601, "message": f"Method not found: {method}"}}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        request_id = message.get("id")
        if request_id is None:
            continue
        params = message.get("params") or {}
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                **answer(request_id, message.get("method"), params),
            }
        )


if __name__ == "__main__":
    main()
