"""pydantic-ai ``Tool`` objects as Tools.

The declaration is what pydantic-ai sends: ``name``, ``description`` and
``function_schema.json_schema``. A call validates the arguments with the tool's
own validator and calls the function as pydantic-ai does; arguments that fail
validation and a ``ModelRetry`` come back as error results (pydantic-ai sends both
to the model as a retry prompt); any other exception escapes, as it ends a
pydantic-ai run. A tool that takes a ``RunContext`` gets one with ``deps=None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolnexus_ref._calling import guard
from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._output import to_output
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import ToolAnnotations

from ._base import ForeignTool, refused_arguments

__all__ = ["PydanticAITool", "adapt"]


def adapt(value: object) -> PydanticAITool | None:
    from pydantic_ai import Tool

    if isinstance(value, Tool):
        return PydanticAITool(value)
    return None


def _run_context() -> Any:
    from pydantic_ai import RunContext
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


class PydanticAITool(ForeignTool):
    """A pydantic-ai tool, validated and called as an agent run calls it."""

    library = "pydantic-ai"

    def __init__(self, tool: Any) -> None:
        super().__init__(
            tool,
            name=tool.name,
            description=tool.description,
            source=Source.CUSTOM.value,
            annotations=ToolAnnotations(),  # pydantic-ai tools carry no behaviour hints
        )
        self.input_schema = tool.function_schema.json_schema

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        from pydantic import ValidationError
        from pydantic_ai import ModelRetry

        refused = refused_arguments(args)
        if refused is not None:
            return refused
        schema: Any = self.wrapped.function_schema  # type: ignore[attr-defined]
        try:
            validated = schema.validator.validate_python(dict(args))
        except ValidationError as exc:
            return ToolResult.error(
                f"Invalid arguments for {self.name!r}: {exc}",
                {"error_type": "InvalidArguments"},
                retryable=False,
            )
        run_context = _run_context() if schema.takes_ctx else None
        try:
            value = await guard(lambda _ctx: schema.call(validated, run_context), ctx)
        except ModelRetry as exc:
            return ToolResult.error(exc.message, {"error_type": "ModelRetry"}, retryable=True)
        if isinstance(value, ToolResult):
            return value
        try:
            return ToolResult.ok(to_output(value))
        except TypeError as exc:
            return ToolResult.error(
                f"the tool's return value cannot be sent to the model: {exc}",
                {"error_type": "TypeError"},
            )
