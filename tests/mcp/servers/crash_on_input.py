"""A server whose ``convert`` tool ends the whole process on some inputs, beside healthy tools.

``convert`` exits with status 1 (after one line on stderr) whenever the unit is
``"kelvin"`` or the value is negative, as a converter with an unguarded native call
might (``"kelvin"`` comes first, so the simplest arguments, tried first, end it
however few examples a loaded machine leaves time for); ``greet``, ``count_words``
and ``upper`` never fail. Each healthy tool also writes a line on stderr per call,
so a crash that quotes its neighbours' stderr is easy to tell apart.
"""

from __future__ import annotations

import os
import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("crash_on_input")
#: Read-only, so the default ``--toolnexus-execute auto`` calls every tool.
READ_ONLY = ToolAnnotations(read_only_hint=True)
SAID = "crash_on_input: fatal: cannot convert"


def _log(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


@server.tool(annotations=READ_ONLY)
def convert(value: float, unit: Literal["kelvin", "celsius", "fahrenheit"]) -> str:
    """Convert a temperature to celsius."""
    if unit == "kelvin" or value < 0:
        _log(f"{SAID} {value} {unit} (simulated abort)")
        os._exit(1)
    return f"{value if unit == 'celsius' else (value - 32) * 5 / 9:.2f} celsius"


@server.tool(annotations=READ_ONLY)
def greet(name: str) -> str:
    """Greet someone by name."""
    _log("greet: called")
    return f"hello {name}"


@server.tool(annotations=READ_ONLY)
def count_words(text: str) -> int:
    """Count the words of a text."""
    _log("count_words: called")
    return len(text.split())


@server.tool(annotations=READ_ONLY)
def upper(text: str) -> str:
    """Upper-case a text."""
    _log("upper: called")
    return text.upper()


if __name__ == "__main__":
    server.run()
