"""The seeded-bug corpus (``corpus/seeded/bugs.py``) as an MCP stdio server.

A low-level SDK server whose handler lets a tool's exception escape, as many
hand-written servers do: the SDK answers the call with a JSON-RPC error instead of
an ``isError`` result, which TN651 reports. Arguments the schema refuses get an
``isError`` result, as they should. Run: ``python seeded_bugs.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def _load_bugs() -> Any:
    path = Path(__file__).resolve().parents[1] / "seeded" / "bugs.py"
    spec = importlib.util.spec_from_file_location("toolnexus_seeded_bugs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BUGS = _load_bugs()
SEEDS = {seed.name: seed for seed in (*BUGS.BUGGY, *BUGS.CLEAN)}
READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=seed.name,
                description=f"A seeded corpus tool ({seed.bug or 'clean'}).",
                input_schema=dict(seed.schema),
                annotations=READ_ONLY,
            )
            for seed in SEEDS.values()
        ]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    seed = SEEDS.get(params.name)
    if seed is None:
        raise ValueError(f"no tool {params.name}")
    result = BUGS.run(seed, params.arguments or {})  # a seeded bug raises here
    text = result.output if isinstance(result.output, str) else str(result.output)
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=result.is_error)


server = Server("seeded", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
