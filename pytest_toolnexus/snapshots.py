"""A syrupy extension that snapshots tool declarations and loop transcripts as JSON.

Declarations are sorted by name and transcripts reduced to what a reviewer reads
(turns, calls, results, why the loop stopped), so a snapshot changes only when
behaviour does. Long outputs are cut with a marker, keeping files small.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension

__all__ = ["ToolnexusSnapshotExtension", "to_snapshot_data"]

_MAX_TEXT = 400


def _cut(value: str) -> str:
    if len(value) <= _MAX_TEXT:
        return value
    return value[:_MAX_TEXT] + f"... [{len(value) - _MAX_TEXT} more characters]"


def _declaration(tool: Any) -> dict[str, Any]:
    schema = getattr(tool, "input_schema", None)
    if schema is None:
        schema = getattr(tool, "parameters", {})
    return {
        "name": tool.name,
        "description": getattr(tool, "description", ""),
        "input_schema": dict(schema),
    }


def _cut_all(value: Any) -> Any:
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, Mapping):
        return {k: _cut_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut_all(v) for v in value]
    return value


def _held_tools(value: Any) -> list[Any] | None:
    """The tools ``value`` holds by the one rule, or ``None`` when it is other data."""
    if isinstance(value, Mapping | str | bytes | int | float | bool) or value is None:
        return None
    from toolnexus_ref import NotToolsError, as_tools, is_tool

    if callable(value) and not is_tool(value):
        return None  # a snapshot never calls what it is given (a factory, a function)
    try:
        tools = as_tools(value, label="the snapshot value")
    except NotToolsError:
        return None
    return tools if tools and all(is_tool(t) for t in tools) else None


def to_snapshot_data(value: Any) -> Any:
    """Plain, stable data for a transcript, a toolkit, a list of tools or declarations."""
    to_data = getattr(value, "to_data", None)
    if callable(to_data):  # a Transcript
        return _cut_all(to_data())
    tools = _held_tools(value)
    if tools is not None:
        return sorted((_declaration(v) for v in tools), key=lambda d: str(d["name"]))
    return _cut_all(value)


class ToolnexusSnapshotExtension(JSONSnapshotExtension):
    """``snapshot.use_extension(ToolnexusSnapshotExtension)`` or the ``toolnexus_snapshot``
    fixture; then ``assert transcript == toolnexus_snapshot``."""

    def serialize(self, data: Any, **kwargs: Any) -> Any:
        return super().serialize(to_snapshot_data(data), **kwargs)
