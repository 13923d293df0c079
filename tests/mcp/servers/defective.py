"""A server with one defect per tool, for the MCP conformance checks to find.

- ``search.files``: a name MCP allows (a dot) but OpenAI and Anthropic refuse.
- ``explode``: raises, so the SDK answers with a JSON-RPC error, not an error result.
- ``stall``: blocks the whole server (``time.sleep`` in async code), ignoring cancellation.
- ``count_items``: declares an output schema and returns content that breaks it.
- ``diagnose``: sends a Python traceback with ``isError`` false.
- ``wipe``: destructive; it writes the marker file named by ``--marker``, which a
  test asserts never appears.

A tool name past 64 characters once prefixed is included too.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

parser = argparse.ArgumentParser()
parser.add_argument("--marker", default=None)
options = parser.parse_args()

READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False)
OBJECT = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
LONG = "fetch_the_complete_quarterly_financial_report_for_region"
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/srv/app/diagnose.py", line 12, in run\n'
    "    return probe()\n"
    "KeyError: 'sensor'"
)
TOOLS = [
    types.Tool(
        name="search.files",
        description="Search file names.",
        input_schema=OBJECT,
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="explode",
        description="Look something up (always raises).",
        input_schema=OBJECT,
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="stall",
        description="Think for a long time, blocking the server.",
        # Closed: every call blocks the server, and each invented key would be one call.
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="count_items",
        description="Count the items.",
        input_schema={"type": "object", "properties": {}},
        annotations=READ_ONLY,
        output_schema={
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
    ),
    types.Tool(
        name="diagnose",
        description="Run the diagnostics.",
        input_schema={"type": "object", "properties": {}},
        annotations=READ_ONLY,
    ),
    types.Tool(
        name=LONG,
        description="Fetch a report.",
        input_schema={"type": "object"},
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="wipe",
        description="Delete every file in the workspace.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(read_only_hint=False, destructive_hint=True),
    ),
]


def text(value: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=error)


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "search.files":
        if not isinstance(args.get("query"), str):
            return text("query must be a string", error=True)
        return text(f"no files match {args['query']!r}")
    if name == "explode":
        raise RuntimeError("the lookup service is down")
    if name == "stall":
        # Blocks the event loop: no cancellation, no other request, nothing. A call that
        # asks for progress may be the kit's cancel probe (it watches the server after
        # its cancel): 5 s, so the server is still blocked when the kit asks after the
        # cancel, however late a busy machine makes both (2.5 s was outlasted once, at
        # a load of 4 per core). Any other call blocks it half a second: long enough
        # to hold up a neighbour's call, short enough not to hold up the test.
        watched = (params.meta or {}).get("progress_token") is not None
        time.sleep(5.0 if watched else 0.5)
        return text("done thinking")
    if name == "count_items":
        return types.CallToolResult(
            content=[types.TextContent(text='{"count": "many"}')],
            structured_content={"count": "many"},
        )
    if name == "diagnose":
        return text(TRACEBACK)
    if name == LONG:
        return text("report")
    if name == "wipe":
        if options.marker:
            Path(options.marker).write_text("wipe was called")
        return text("wiped")
    raise ValueError(f"unknown tool {name}")


server = Server("defective", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
