"""The reference implementation of the Tool contract.

A tool is a name, a description, a JSON-Schema for its arguments, and a call that
returns text or an error: ``Tool``, ``ToolResult``, ``ToolContext``. The core
imports nothing heavy; each source pulls its own dependency only when used.
"""

from __future__ import annotations

from ._calling import call_tool, execute_raw, run_in_daemon_thread
from ._context import DEADLINE_EXCEEDED, ToolContext
from ._naming import MAX_NAME_LENGTH, NAME_PATTERN, SOURCES, Source, is_valid_name, sanitize
from ._output import to_jsonable, to_output
from ._result import ToolResult, coerce_result
from ._tool import BaseTool, Tool, ToolAnnotations, annotations_of

__all__ = [
    "DEADLINE_EXCEEDED",
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "SOURCES",
    "BaseTool",
    "Source",
    "Tool",
    "ToolAnnotations",
    "ToolContext",
    "ToolResult",
    "annotations_of",
    "call_tool",
    "coerce_result",
    "execute_raw",
    "is_valid_name",
    "run_in_daemon_thread",
    "sanitize",
    "to_jsonable",
    "to_output",
]

__version__ = "0.1.0"
