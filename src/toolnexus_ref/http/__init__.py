"""HTTP tools: an endpoint per tool, declared in Python (``http_tool``) or in a file.

Uses httpx, imported only when a tool is called.
"""

from __future__ import annotations

from ._file import HttpConfigError, load_http_tools, parse_http_tools
from ._tool import MASK, HttpTool, http_tool

__all__ = [
    "MASK",
    "HttpConfigError",
    "HttpTool",
    "http_tool",
    "load_http_tools",
    "parse_http_tools",
]
