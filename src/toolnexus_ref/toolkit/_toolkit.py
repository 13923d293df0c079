"""A toolkit: many tools behind one name-routed ``execute``, plus their declarations.

A toolkit has no ``name`` of its own on purpose: whatever sees an object with
``name`` and ``execute`` treats it as one tool, while a toolkit is recognised by
its ``tools`` sequence.
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from toolnexus_ref._calling import call_tool
from toolnexus_ref._context import ToolContext
from toolnexus_ref._result import ToolResult

from ._declarations import anthropic_declarations, gemini_declarations, openai_declarations
from ._hooks import Filter, Listener, apply_filters, notify_listeners
from ._toolcalls import ToolCall

__all__ = ["DuplicateToolError", "Toolkit"]

#: How many tool names an unknown-name error lists before saying "and N more".
MAX_LISTED_NAMES = 20


class DuplicateToolError(ValueError):
    """Two tools share a name; a model could not tell them apart."""

    def __init__(self, name: str, first: Any, second: Any) -> None:
        self.name = name
        self.first = first
        self.second = second
        super().__init__(
            f"duplicate tool name {name!r}: {_describe(first)} and {_describe(second)}. "
            "Rename one of them, or prefix names by source "
            "(sanitize(server) + '_' + name, as MCP tools are)."
        )


def _describe(tool: Any) -> str:
    try:
        source = getattr(tool, "source", None)
    except Exception:
        source = None
    where = f"source {source!r}" if source is not None else "no source"
    return f"{type(tool).__module__}.{type(tool).__qualname__} ({where})"


def _tool_name(tool: Any, position: int) -> str:
    try:
        name = tool.name
    except Exception as exc:
        raise TypeError(
            f"tool #{position} ({type(tool).__name__}) has no readable 'name': "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(name, str):
        raise TypeError(
            f"tool #{position} ({type(tool).__name__}) has a name of type "
            f"{type(name).__name__}; a tool name is a string"
        )
    if not callable(getattr(tool, "execute", None)):
        raise TypeError(f"tool {name!r} ({type(tool).__name__}) has no callable 'execute'")
    return name


def _flatten(items: Iterable[Any]) -> list[Any]:
    """The tools ``items`` holds, by the one rule (``toolnexus_ref.as_tools``): toolkits
    expanded, foreign tool objects adapted. Items that are no tool at all stay, for
    ``add`` to refuse by name."""
    from toolnexus_ref._resolve import as_tools

    return as_tools(items, label="the toolkit's tools")


class Toolkit:
    """Aggregates tools, routes calls by name, and declares the tools to providers.

    ``tools`` are any objects that meet the Tool protocol (ours or duck-typed);
    toolkits among them are merged. ``filters`` run before each call, in order;
    ``listeners`` after it (see ``toolnexus_ref.toolkit.Decision``). ``execute``
    never raises, except when the awaiting task is cancelled.
    """

    __slots__ = ("_by_name", "_filters", "_listeners")

    def __init__(
        self,
        tools: Iterable[Any] = (),
        *,
        filters: Iterable[Filter] = (),
        listeners: Iterable[Listener] = (),
    ) -> None:
        self._by_name: dict[str, Any] = {}
        self._filters: tuple[Filter, ...] = tuple(filters)
        self._listeners: tuple[Listener, ...] = tuple(listeners)
        self.add(*_flatten(tools))

    def __repr__(self) -> str:
        return f"<Toolkit {len(self)} tools: {', '.join(self._by_name)}>"

    # -- the collection ---------------------------------------------------------
    def add(self, *tools: Any) -> None:
        """Add tools; all or none: a duplicate name leaves the toolkit unchanged."""
        staged: dict[str, Any] = {}
        for offset, tool in enumerate(tools):
            name = _tool_name(tool, len(self._by_name) + offset)
            earlier = self._by_name.get(name, staged.get(name))
            if earlier is not None:
                raise DuplicateToolError(name, earlier, tool)
            staged[name] = tool
        self._by_name.update(staged)

    def remove(self, name: str) -> Any:
        """Take the tool out and return it; ``KeyError`` when there is none by that name."""
        return self._by_name.pop(name)

    def add_filter(self, hook: Filter) -> None:
        self._filters = (*self._filters, hook)

    def add_listener(self, hook: Listener) -> None:
        self._listeners = (*self._listeners, hook)

    @property
    def tools(self) -> tuple[Any, ...]:
        """The tools, in the order they were added."""
        return tuple(self._by_name.values())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def get(self, name: str, default: Any = None) -> Any:
        return self._by_name.get(name, default)

    def __len__(self) -> int:
        return len(self._by_name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.tools)

    def __contains__(self, item: object) -> bool:
        """``"name" in toolkit``, or whether this very tool object is in it."""
        if isinstance(item, str):
            return item in self._by_name
        return any(tool is item for tool in self._by_name.values())

    # -- declarations -------------------------------------------------------------
    def to_openai(self, *, strict: bool = False) -> list[dict[str, Any]]:
        return openai_declarations(self.tools, strict=strict)

    def to_anthropic(self) -> list[dict[str, Any]]:
        return anthropic_declarations(self.tools)

    def to_gemini(self, *, json_schema: bool = False) -> dict[str, Any]:
        return gemini_declarations(self.tools, json_schema=json_schema)

    # -- calling ------------------------------------------------------------------
    def unknown_tool_result(self, name: object) -> ToolResult:
        """The error a model gets for a name no tool has: close matches, then what exists."""
        shown = name if isinstance(name, str) else repr(name)
        parts = [f"Unknown tool {shown!r}."]
        if isinstance(name, str):
            close = difflib.get_close_matches(name, self._by_name, n=3, cutoff=0.6)
            if close:
                parts.append(f"Did you mean {', '.join(repr(c) for c in close)}?")
        names = list(self._by_name)
        if not names:
            parts.append("No tools are available.")
        else:
            listed = ", ".join(names[:MAX_LISTED_NAMES])
            more = len(names) - MAX_LISTED_NAMES
            parts.append(
                f"Available tools: {listed}" + (f" (and {more} more)." if more > 0 else ".")
            )
        return ToolResult.error(" ".join(parts), {"error_type": "UnknownTool"}, retryable=False)

    async def execute(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
    ) -> ToolResult:
        """Call the tool named ``name``: route, filter, call, tell the listeners.

        ``timeout`` is one budget for the tool's call (see ``call_tool``). Listeners
        hear every outcome, unknown names and denied calls included, with the
        arguments the tool was (or would have been) called with and the seconds
        ``execute`` took.
        """
        arguments = dict(args) if isinstance(args, Mapping) else {}
        return await self._run(ToolCall(None, name, arguments), args, ctx, timeout)

    async def execute_call(
        self, call: ToolCall, ctx: ToolContext | None = None, *, timeout: float | None = None
    ) -> ToolResult:
        """Execute a parsed model call; a malformed one gets its error result, untouched."""
        return await self._run(call, call.arguments, ctx, timeout)

    async def execute_calls(
        self,
        calls: Iterable[ToolCall],
        ctx: ToolContext | None = None,
        *,
        timeout: float | None = None,
        max_concurrency: int | None = None,
    ) -> list[ToolResult]:
        """Execute calls concurrently; results come back in the order of ``calls``."""
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency!r}")
        gate = asyncio.Semaphore(max_concurrency) if max_concurrency else None

        async def one(call: ToolCall) -> ToolResult:
            if gate is None:
                return await self.execute_call(call, ctx, timeout=timeout)
            async with gate:
                return await self.execute_call(call, ctx, timeout=timeout)

        return list(await asyncio.gather(*(one(call) for call in calls)))

    async def _run(
        self,
        call: ToolCall,
        given: Mapping[str, Any] | None,
        ctx: ToolContext | None,
        timeout: float | None,
    ) -> ToolResult:
        started = time.perf_counter()
        args: dict[str, Any] = dict(call.args)
        result = self._precheck(call, given)
        if result is None:
            args, result = await apply_filters(self._filters, call)
        if result is None:
            result = await call_tool(self._by_name[call.name], args, ctx, timeout=timeout)
        await notify_listeners(
            self._listeners, call.name, args, result, time.perf_counter() - started
        )
        return result

    def _precheck(self, call: ToolCall, given: object) -> ToolResult | None:
        if call.error is not None:
            meta = {"error_type": "InvalidToolCall"}
            if call.id is not None:
                meta["call_id"] = call.id
            return ToolResult.error(call.error, meta, retryable=False)
        if given is not None and not isinstance(given, Mapping):
            return ToolResult.error(
                f"The arguments for {call.name!r} must be a JSON object, "
                f"got {type(given).__name__}.",
                {"error_type": "InvalidArguments"},
                retryable=False,
            )
        if not isinstance(call.name, str) or call.name not in self._by_name:
            return self.unknown_tool_result(call.name)
        return None
