"""An MCP ``CallToolResult`` (or a protocol error) as the ``ToolResult`` a model reads."""

from __future__ import annotations

import base64
import binascii
import functools
import json
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
    from .._validation import format_json_path

    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON: checked afresh (and refused) each time
        text = None
    validator, invalid = _output_validator(text) if text is not None else _compile(schema)
    if invalid is not None:
        return [f"the output schema itself is invalid: {invalid}"]
    if structured is None:
        return ["the tool declares an output schema but returned no structured content"]
    return [
        f"{format_json_path(e.absolute_path)}: {e.message}"
        for e in list(validator.iter_errors(structured))[:5]
    ]


@functools.lru_cache(maxsize=1024)
def _output_validator(text: str) -> tuple[Any, str | None]:
    """One tool's output validator, checked against its metaschema once, not per call:
    checking the schema costs tens of milliseconds, ten times the call itself."""
    return _compile(json.loads(text))


def _compile(schema: Mapping[str, Any]) -> tuple[Any, str | None]:
    """The schema's validator, or why the schema itself is invalid."""
    from jsonschema import SchemaError

    from .._validation import validator_for

    try:
        validator = validator_for(schema)
        validator.check_schema(schema)
    except SchemaError as exc:
        return None, exc.message
    return validator, None


def describe_invalid(exc: ValidationError, *, limit: int = 3) -> str:
    """What was wrong with a result the protocol's types refused, in a line or three.

    A value that matches no member of a union (a content block of an unknown
    type) is one problem, not one per member. The offending value is shown only in
    brief: a malformed 20 MB result must not become a 20 MB message.
    """
    parts: list[str] = []
    unions: dict[tuple[Any, ...], _UnionMiss] = {}
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        cut = next((i for i, part in enumerate(loc) if _is_member(part)), None)
        if cut is not None:
            miss = unions.get(loc[:cut])
            if miss is None:
                miss = unions[loc[:cut]] = _UnionMiss(_where(loc[:cut]))
                parts.append("")  # its place in the order; filled in below
                miss.index = len(parts) - 1
            miss.note(error, loc[cut + 1 :])
            continue
        if error["type"] == "missing":
            parts.append(f"{_where(loc)} is missing")
        else:
            parts.append(f"{_where(loc)}: {error['msg']} (got {_brief(error.get('input'))})")
    for miss in unions.values():
        parts[miss.index] = miss.describe()
    shown = parts[:limit]
    if len(parts) > limit:
        shown.append(f"and {len(parts) - limit} more")
    return "; ".join(shown) or str(exc)[:200]


def _is_member(part: Any) -> bool:
    """A union member's name in an error location (``TextContent``), not a field or an index."""
    return isinstance(part, str) and part[:1].isupper()


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "the result"


class _UnionMiss:
    """The errors of one value that matched none of a union's members."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.index = 0
        self.expected: list[str] = []
        self.got: Any = None

    def note(self, error: Any, rest: tuple[Any, ...]) -> None:
        if rest == ("type",) and error["type"] == "literal_error":
            self.got = error.get("input")
            expected = (error.get("ctx") or {}).get("expected")
            if isinstance(expected, str):
                self.expected.append(expected)

    def describe(self) -> str:
        if self.got is not None:
            allowed = ", ".join(self.expected) or "another type"
            return f"{self.where}: unknown type {self.got!r} (the protocol defines {allowed})"
        return f"{self.where}: matches none of the shapes the protocol defines"


def _brief(value: Any) -> str:
    shown = repr(value)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN] + "..."
    return f"{type(value).__name__} {shown}"
