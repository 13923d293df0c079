"""Many tools as one: name routing, call filters and listeners, provider declarations,
and the tool calls that come back from a model.

``Toolkit`` is the host's view of a set of tools. Filters return ``None`` (allow) or
a ``Decision`` (allow, deny, rewrite, respond); listeners hear
``(name, args, result, duration_seconds)`` after every call.
"""

from __future__ import annotations

from ._declarations import (
    anthropic_declaration,
    anthropic_declarations,
    gemini_declaration,
    gemini_declarations,
    openai_declaration,
    openai_declarations,
    plain_schema,
)
from ._hooks import Action, Decision, Filter, Listener
from ._toolcalls import (
    ToolCall,
    parse_anthropic_tool_calls,
    parse_gemini_tool_calls,
    parse_openai_tool_calls,
)
from ._toolkit import MAX_LISTED_NAMES, DuplicateToolError, Toolkit

__all__ = [
    "MAX_LISTED_NAMES",
    "Action",
    "Decision",
    "DuplicateToolError",
    "Filter",
    "Listener",
    "ToolCall",
    "Toolkit",
    "anthropic_declaration",
    "anthropic_declarations",
    "gemini_declaration",
    "gemini_declarations",
    "openai_declaration",
    "openai_declarations",
    "parse_anthropic_tool_calls",
    "parse_gemini_tool_calls",
    "parse_openai_tool_calls",
    "plain_schema",
]
