"""An MCP ``CallToolResult`` (or a protocol error) as the ``ToolResult`` a model reads."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

import mcp_types
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from pydantic import ValidationError

from .._output import to_output
from .._result import ToolResult

__all__ = ["describe_invalid", "from_call_result", "from_mcp_error", "output_schema_errors"]

_SHOWN = 60


def _decoded_size(data: str) -> int | None:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return None


def _summary(block: Any) -> str:
    """One line that tells the model what non-text content came back."""
    kind = getattr(block, "type", "content")
    if kind in ("image", "audio"):
        size = _decoded_size(getattr(block, "data", "") or "")
        sized = f", {size} bytes" if size is not None else ""
        return f"[{kind}: {getattr(block, 'mime_type', '?')}{sized}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return f"[resource {resource.uri}]\n{text}"
        return f"[resource {resource.uri}: {getattr(resource, 'mime_type', None) or 'binary'}]"
    if kind == "resource_link":
        return f"[resource link {block.uri}: {block.name}]"
    return f"[{kind}]"


def from_call_result(result: mcp_types.CallToolResult, *, server: str, tool: str) -> ToolResult:
    """Error flag → error result; structured content → its JSON; else the joined text parts.

    Non-text blocks are summarised in the text (a model must know an image came
    back) and carried whole in ``metadata["content"]`` for a host that can use them.
    """
    texts: list[str] = []
    others: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            texts.append(block.text)
        else:
            texts.append(_summary(block))
            others.append(block.model_dump(by_alias=True, mode="json", exclude_none=True))
    metadata: dict[str, Any] = {"mcp_server": server, "mcp_tool": tool}
    if others:
        metadata["content"] = others
    structured = result.structured_content
    if structured is not None:
        metadata["structured_content"] = structured
    if result.is_error:
        message = "\n".join(texts) or "the tool reported an error without a message"
        return ToolResult.error(message, {**metadata, "error_type": "ToolError"})
    if structured is not None:
        try:
            return ToolResult.ok(to_output(structured), metadata)
        except TypeError:
            pass
    return ToolResult.ok("\n".join(texts), metadata)


def from_mcp_error(exc: MCPError, *, server: str, tool: str) -> ToolResult:
    """A JSON-RPC error as an error result that keeps the code and the message."""
    meta: dict[str, Any] = {
        "mcp_server": server,
        "mcp_tool": tool,
        "error_type": "MCPError",
        "mcp_error_code": exc.code,
    }
    if exc.data is not None:
        meta["mcp_error_data"] = exc.data
    retryable = exc.code in (REQUEST_TIMEOUT, CONNECTION_CLOSED)
    return ToolResult.error(f"MCP error {exc.code}: {exc.message}", meta, retryable=retryable)


def output_schema_errors(schema: Mapping[str, Any], structured: Any) -> list[str]:
    """How ``structured`` breaks the declared output schema; empty when it conforms."""
    from jsonschema import SchemaError

    from .._validation import format_json_path, validator_for

    try:
        validator = validator_for(schema)
        validator.check_schema(schema)
    except SchemaError as exc:
        return [f"the output schema itself is invalid: {exc.message}"]
    if structured is None:
        return ["the tool declares an output schema but returned no structured content"]
    return [
        f"{format_json_path(e.absolute_path)}: {e.message}"
        for e in list(validator.iter_errors(structured))[:5]
    ]


def describe_invalid(exc: ValidationError, *, limit: int = 3) -> str:
    """What was wrong with a result the protocol's types refused, in a line or three.

    The offending value is shown only in brief: a malformed 20 MB result must not
    become a 20 MB message.
    """
    parts: list[str] = []
    errors = exc.errors(include_url=False)
    for error in errors[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "the result"
        if error["type"] == "missing":
            parts.append(f"{where} is missing")
            continue
        parts.append(f"{where}: {error['msg']} (got {_brief(error.get('input'))})")
    if len(errors) > limit:
        parts.append(f"and {len(errors) - limit} more")
    return "; ".join(parts) or str(exc)[:200]


def _brief(value: Any) -> str:
    shown = repr(value)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN] + "..."
    return f"{type(value).__name__} {shown}"
