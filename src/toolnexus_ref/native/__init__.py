"""Native tools: Python functions, methods and run-time handlers as Tools.

``@tool`` infers the input schema from type hints and the description from the
docstring; ``tools_of(obj)`` collects an instance's ``@tool`` methods;
``dynamic_tool(...)`` builds a tool from a schema and a handler given at run time.
"""

from __future__ import annotations

from ._decorator import NativeTool, tool, tools_of
from ._dynamic import DynamicTool, dynamic_tool
from ._param import Param
from ._schema import InferredSchema, infer_schema

__all__ = [
    "DynamicTool",
    "InferredSchema",
    "NativeTool",
    "Param",
    "dynamic_tool",
    "infer_schema",
    "tool",
    "tools_of",
]
