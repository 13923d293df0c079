"""Tools built at run time from a name, a description, a schema and a handler."""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from toolnexus_ref._calling import accepts_context
from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._tool import BaseTool, ToolAnnotations

from ._invoke import check_options, invoke

__all__ = ["DynamicTool", "dynamic_tool"]


class DynamicTool(BaseTool):
    """A Tool whose schema was given rather than inferred; the handler gets the raw args dict."""

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        source: str = Source.CUSTOM.value,
        timeout: float | None = None,
        annotations: ToolAnnotations | None = None,
    ) -> None:
        check_options(
            name,
            description,
            source=source,
            timeout=timeout,
            annotations=annotations,
            hint="use sanitize() on names that come from elsewhere",
        )
        if not callable(handler):
            raise TypeError(
                f"tool {name!r}: handler must be callable, got {type(handler).__name__}"
            )
        self.name = name
        self.description = description
        self.input_schema = _checked_schema(name, input_schema)
        self.source = source
        self.timeout = timeout
        self.annotations = annotations
        self._handler = handler
        self._with_ctx = accepts_context(handler)
        self._is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            getattr(handler, "__call__", None)  # noqa: B004 - an async __call__ method
        )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        positional: list[Any] = [dict(args), ctx] if self._with_ctx else [dict(args)]
        return await invoke(self._handler, positional, {}, is_async=self._is_async, name=self.name)


def _checked_schema(name: str, schema: object) -> dict[str, Any]:
    """A private deep copy of a valid object schema; anything else is refused now."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise ValueError(
            f'tool {name!r}: input_schema must be a JSON-Schema object with "type": "object", '
            f"got {schema!r:.200}"
        )
    try:
        json.dumps(schema)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"tool {name!r}: input_schema must be plain JSON data: {exc}") from None
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError

    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(
            f"tool {name!r}: input_schema is not a valid schema: {exc.message}"
        ) from None
    return copy.deepcopy(dict(schema))


def dynamic_tool(
    name: str,
    description: str,
    input_schema: Mapping[str, Any],
    handler: Callable[..., Any],
    *,
    source: str = Source.CUSTOM.value,
    timeout: float | None = None,
    annotations: ToolAnnotations | None = None,
) -> DynamicTool:
    """A Tool from parts known only at run time; ``handler(args)`` or ``handler(args, ctx)``.

    The handler may be sync (it runs in a daemon thread) or async. It gets a copy of
    the validated arguments as a plain dict, and the call's context (or ``None``).
    Everything else is ``BaseTool``'s: validation, timeout, error results.
    """
    return DynamicTool(
        name,
        description,
        input_schema,
        handler,
        source=source,
        timeout=timeout,
        annotations=annotations,
    )
