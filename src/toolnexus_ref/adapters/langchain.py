"""LangChain ``BaseTool`` objects (``@tool``, ``StructuredTool``, subclasses) as Tools.

The declaration is what LangChain sends to a provider
(``convert_to_openai_tool``). A call is a LangChain tool call (``invoke`` with a
``ToolCall``, or ``ainvoke`` when the tool has its own async implementation), and
the outcome is mapped as a LangChain host maps it:

- a ``ToolMessage`` with ``status="error"`` (``handle_tool_error`` /
  ``handle_validation_error`` turned the exception into text) is an error result;
- a ``ToolException`` that escapes (its handler is off) is an error result with
  its message, the convention LangChain documents for "tell the model";
- a pydantic ``ValidationError`` (arguments that break ``args_schema``) is an
  error result listing the problems, as LangGraph's ``ToolNode`` sends it back;
- every other exception escapes ``execute``: that is a fault of the tool, and the
  suites report it rather than this adapter hiding it.

LangChain tools take no cancellation token, so the context works as a LangChain
host's would: a cancel or deadline abandons the call (the task is cancelled, a
sync tool's thread is left to finish) and the call ends in an error result.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from toolnexus_ref._calling import guard, run_in_daemon_thread
from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import ToolAnnotations

from ._base import ForeignTool, refused_arguments

__all__ = ["LangChainTool", "adapt"]

_call_ids = itertools.count(1)


def adapt(value: object) -> LangChainTool | None:
    from langchain_core.tools import BaseTool

    if isinstance(value, BaseTool):
        return LangChainTool(value)
    return None


def _declaration(tool: Any) -> tuple[Any, Any, Any]:
    """Name, description and parameters as LangChain sends them to a provider.

    When LangChain cannot declare the tool, the parameters are the exception:
    reading ``input_schema`` raises it, and the checks report it there.
    """
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        function = convert_to_openai_tool(tool)["function"]
    except Exception as exc:
        problem = TypeError(f"LangChain cannot declare this tool: {type(exc).__name__}: {exc}")
        return getattr(tool, "name", None), getattr(tool, "description", None), problem
    parameters = function.get("parameters", {"type": "object", "properties": {}})
    return function.get("name"), function.get("description", ""), parameters


def _has_own_async(tool: Any) -> bool:
    from langchain_core.tools import BaseTool, StructuredTool
    from langchain_core.tools import Tool as SimpleTool

    if isinstance(tool, StructuredTool | SimpleTool):
        return getattr(tool, "coroutine", None) is not None
    return type(tool)._arun is not BaseTool._arun


def _text(content: Any) -> str:
    """A ToolMessage's content (text, or a list of content blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
            else:
                import json

                parts.append(json.dumps(block, default=str))
        return "\n".join(parts)
    return str(content)


class LangChainTool(ForeignTool):
    """A LangChain tool, called the way a LangChain host calls it."""

    library = "langchain"

    def __init__(self, tool: Any) -> None:
        name, description, parameters = _declaration(tool)
        super().__init__(
            tool,
            name=name,
            description=description,
            source=Source.CUSTOM.value,
            annotations=ToolAnnotations(),  # LangChain tools carry no behaviour hints
        )
        self._parameters = parameters
        self._async = _has_own_async(tool)

    @property
    def input_schema(self) -> Mapping[str, Any]:
        if isinstance(self._parameters, Exception):
            raise self._parameters
        parameters: Mapping[str, Any] = self._parameters
        return parameters

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        refused = refused_arguments(args)
        if refused is not None:
            return refused
        call = {
            "type": "tool_call",
            "id": f"toolnexus-{next(_call_ids)}",
            "name": self.wrapped.name,  # type: ignore[attr-defined]
            "args": dict(args),
        }
        try:
            value = await guard(lambda _ctx: self._invoke(call), ctx)
        except Exception as exc:
            mapped = _mapped_exception(exc)
            if mapped is None:
                raise  # a fault of the tool: the suites must see it
            return mapped
        if isinstance(value, ToolResult):  # the context ended the call
            return value
        return _from_message(value)

    async def _invoke(self, call: dict[str, Any]) -> Any:
        tool: Any = self.wrapped
        if self._async:
            return await tool.ainvoke(call)
        return await run_in_daemon_thread(
            lambda: tool.invoke(call), name=f"toolnexus-langchain-{self.name}"
        )


def _from_message(message: Any) -> ToolResult:
    from langchain_core.messages import ToolMessage

    if not isinstance(message, ToolMessage):  # a tool that returns a message of its own
        return ToolResult.ok(_text(getattr(message, "content", message)))
    metadata: dict[str, Any] = {}
    if message.artifact is not None:
        metadata["artifact"] = repr(message.artifact)[:2000]
    if message.status == "error":
        return ToolResult.error(_text(message.content), metadata)
    return ToolResult.ok(_text(message.content), metadata)


def _mapped_exception(exc: Exception) -> ToolResult | None:
    """The error result a LangChain host sends the model for ``exc``, or ``None``."""
    from langchain_core.tools import ToolException
    from pydantic import ValidationError

    if isinstance(exc, ToolException):
        return ToolResult.error(str(exc) or "ToolException", {"error_type": "ToolException"})
    if isinstance(exc, ValidationError):
        lines = [
            f"- {'.'.join(str(p) for p in error.get('loc', ())) or '(arguments)'}: {error.get('msg')}"
            for error in exc.errors()
        ]
        return ToolResult.error(
            "Invalid arguments:\n" + "\n".join(lines),
            {"error_type": "InvalidArguments"},
            retryable=False,
        )
    try:
        from pydantic.v1 import ValidationError as ValidationErrorV1
    except ImportError:  # pragma: no cover - pydantic 2 ships v1
        return None
    if isinstance(exc, ValidationErrorV1):
        return ToolResult.error(f"Invalid arguments: {exc}", {"error_type": "InvalidArguments"})
    return None
