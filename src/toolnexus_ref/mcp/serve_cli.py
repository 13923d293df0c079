"""``toolnexus-serve module:attr``: serve a project's tools as an MCP server."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["load_tools", "main"]


def load_tools(spec: str) -> Any:
    """Import ``module:attr``: a Tool, a list of Tools, a toolkit, or a (sync/async) factory."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise SystemExit(f"toolnexus-serve: expected module:attr, got {spec!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")  # like `python -m`: the current folder is importable
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise SystemExit(f"toolnexus-serve: cannot import {module_name!r}: {exc}") from None
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise SystemExit(
                f"toolnexus-serve: {module_name!r} has no attribute {attr!r}"
            ) from None
    if callable(value) and not (hasattr(value, "execute") and hasattr(value, "name")):
        value = value()
        if inspect.isawaitable(value):
            value = asyncio.run(_await(value))
    return value


async def _await(value: Any) -> Any:
    return await value


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
