"""OpenAI Agents SDK ``FunctionTool`` objects (``@function_tool``) as Tools.

The declaration is the tool's own (``name``, ``description``,
``params_json_schema``, what the SDK sends). A call goes through
``on_invoke_tool`` with a real ``agents.ToolContext`` and the arguments as the
JSON text the model would send. When the SDK's failure handler turns an
exception into text for the model (``failure_error_function``, on by default for
``@function_tool``), the adapter returns that text as an error result; when no
handler is set, the exception escapes, as it fails the SDK's run.

The SDK takes no cancellation token: a cancel or deadline of the context cancels
the call's task, as the SDK's runner does, and ends in an error result.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import Any

from toolnexus_ref._calling import guard
from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import ToolAnnotations

from ._base import ForeignTool, refused_arguments

__all__ = ["AgentsFunctionTool", "adapt"]

_call_ids = itertools.count(1)


def adapt(value: object) -> AgentsFunctionTool | None:
    from agents import FunctionTool

    if isinstance(value, FunctionTool):
        return AgentsFunctionTool(value)
    return None


def _text(value: Any) -> str:
    """What the SDK sends the model for a return value: text, or ``str()`` of it."""
    if isinstance(value, str):
        return value
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else str(value)


class AgentsFunctionTool(ForeignTool):
    """An Agents SDK function tool, invoked as the SDK's runner invokes it."""

    library = "openai-agents"

    def __init__(self, tool: Any) -> None:
        super().__init__(
            tool,
            name=tool.name,
            description=tool.description,
            source=Source.CUSTOM.value,
            annotations=ToolAnnotations(),  # function tools carry no behaviour hints
        )
        self.input_schema = tool.params_json_schema

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        from agents.tool_context import ToolContext as AgentsContext

        refused = refused_arguments(args)
        if refused is not None:
            return refused
        try:
            arguments = json.dumps(args)
        except (TypeError, ValueError) as exc:
            return ToolResult.error(f"arguments are not JSON: {exc}", {"error_type": "TypeError"})
        context = AgentsContext(
            context=None,
            tool_name=self.wrapped.name,  # type: ignore[attr-defined]
            tool_call_id=f"toolnexus-{next(_call_ids)}",
            tool_arguments=arguments,
        )
        value = await guard(lambda _ctx: self._invoke(context, arguments), ctx)
        return value if isinstance(value, ToolResult) else ToolResult.ok(_text(value))

    async def _invoke(self, context: Any, arguments: str) -> Any:
        from agents.tool import maybe_invoke_function_tool_failure_error_function

        tool: Any = self.wrapped
        invoker = tool.on_invoke_tool
        inner = getattr(invoker, "_invoke_tool_impl", None)
        if inner is None:  # a FunctionTool built by hand: its invoker is all there is
            return await invoker(context, arguments)
        try:
            return await inner(context, arguments)
        except Exception as exc:
            text = await maybe_invoke_function_tool_failure_error_function(
                function_tool=tool, context=context, error=exc
            )
            if text is None:
                raise  # no failure handler: the SDK's run fails, so must this call
            return ToolResult.error(_text(text), {"error_type": type(exc).__name__})
