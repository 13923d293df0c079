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
from ._resolve import (
    TOOL_FORMS,
    ImportSpecError,
    NotToolsError,
    as_tools,
    as_tools_async,
    import_object,
    is_tool,
)
from ._result import ToolResult, coerce_result
from ._tool import BaseTool, Tool, ToolAnnotations, annotations_of
from .native import Param, dynamic_tool, infer_schema, tool, tools_of
from .toolkit import Decision, DuplicateToolError, ToolCall, Toolkit

__all__ = [
    "DEADLINE_EXCEEDED",
    "MAX_NAME_LENGTH",
    "NAME_PATTERN",
    "SOURCES",
    "TOOL_FORMS",
    "BaseTool",
    "Decision",
    "DuplicateToolError",
    "ImportSpecError",
    "NotToolsError",
    "Param",
    "Source",
    "Tool",
    "ToolAnnotations",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "Toolkit",
    "annotations_of",
    "as_tools",
    "as_tools_async",
    "call_tool",
    "coerce_result",
    "dynamic_tool",
    "execute_raw",
    "import_object",
    "infer_schema",
    "is_tool",
    "is_valid_name",
    "run_in_daemon_thread",
    "sanitize",
    "to_jsonable",
    "to_output",
    "tool",
    "tools_of",
]

__version__ = "0.1.0"
