"""``toolnexus-serve module:attr``: serve a project's tools as an MCP server."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["load_tools", "main"]


def load_tools(spec: str) -> list[Any]:
    """Import ``module:attr`` and the tools it holds (``toolnexus_ref.as_tools``'s rule).

    The current folder is importable, as with ``python -m``; any problem ends the
    program with a one-line message.
    """
    from toolnexus_ref._resolve import ImportSpecError, NotToolsError, as_tools, import_object

    try:
        value = import_object(spec, base_dir=os.getcwd())
        tools = as_tools(value, label=spec)
    except (ImportSpecError, NotToolsError) as exc:
        raise SystemExit(f"toolnexus-serve: {exc}") from None
    if not tools:
        raise SystemExit(f"toolnexus-serve: {spec} holds no tools (an empty list?)")
    return tools


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="toolnexus-serve", description="Serve Tools (module:attr) as an MCP server."
    )
    parser.add_argument("target", help="module:attr naming a Tool, a list, a toolkit or a factory")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--path", default="/mcp")
    parser.add_argument("--name", default="toolnexus", help="the server name clients see")
    args = parser.parse_args(argv)
    tools = load_tools(args.target)
    from ._server import run_http, serve_stdio

    if args.transport == "stdio":
        asyncio.run(serve_stdio(tools, name=args.name))
        return 0

    def announce(url: str) -> None:
        sys.stderr.write(f"toolnexus-serve: listening on {url}\n")
        sys.stderr.flush()

    try:
        run_http(
            tools, host=args.host, port=args.port, path=args.path, name=args.name, on_ready=announce
        )
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
