"""How a tool's code runs, told from the tool without calling it.

The exploration schedules by it: in-process ``async def`` code runs on the shared
event loop, where a blocking call stops every other tool, so such tools take turns;
the task-cancel probe applies only to an async ``execute``. Both are read once with
the declaration, in the bounded pass (``_subject``); these functions are that read.
"""

from __future__ import annotations

import inspect
from typing import Any

from toolnexus_ref import BaseTool

__all__ = ["code_on_loop", "execute_is_async"]


def execute_is_async(tool: Any) -> bool:
    """Whether ``tool.execute`` is ``async def``; a hostile attribute counts as not."""
    try:
        return inspect.iscoroutinefunction(tool.execute)
    except Exception:
        return False


def code_on_loop(tool: Any, source: Any, *, execute_async: bool | None = None) -> bool:
    """Whether the tool's own code runs on the event loop, where it could block it.

    MCP tools only wait for their server, and a tool saying ``_code_on_loop`` (the
    reference http and A2A tools over httpx's own transport) only for its endpoint;
    sync code runs in threads. Only an in-process ``async def`` can stop the loop
    (``time.sleep`` inside it). A tool that cannot say is taken to run there: it then
    merely takes turns.
    ``execute_async``, when the caller already knows it, saves reading ``execute`` again.
    """
    if source == "mcp":
        return False
    try:
        said = getattr(tool, "_code_on_loop", None)
        if isinstance(said, bool):
            return said
        marker = getattr(tool, "_is_async", None)
        if isinstance(marker, bool):
            return marker
        if isinstance(tool, BaseTool):
            return inspect.iscoroutinefunction(tool.run)
    except Exception:
        return True
    return execute_is_async(tool) if execute_async is None else execute_async
