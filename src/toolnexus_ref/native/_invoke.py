"""Calling a user's function from a tool's ``run``, sync or async, without letting it escape."""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

from toolnexus_ref._calling import exception_result, run_in_daemon_thread
from toolnexus_ref._naming import SOURCES, is_valid_name
from toolnexus_ref._tool import ToolAnnotations

__all__ = ["check_options", "invoke"]


async def invoke(
    fn: Callable[..., Any],
    positional: list[Any],
    keywords: Mapping[str, Any],
    *,
    is_async: bool,
    name: str,
) -> Any:
    """Run ``fn`` and return its value, or an error result for anything it raised.

    ``BaseTool.execute`` already turns exceptions into results; catching every
    ``BaseException`` here as well (``SystemExit`` included) keeps the value inside
    the tool's own task, so nothing a function raises can reach the event loop. A
    sync function runs in a daemon thread so a stuck one cannot block the loop or
    the interpreter's exit. Cancellation, ``KeyboardInterrupt`` and ``GeneratorExit``
    still propagate.
    """
    try:
        if is_async:
            value = await fn(*positional, **keywords)
        else:
            value = await run_in_daemon_thread(
                lambda: fn(*positional, **keywords), name=f"toolnexus-{name}"
            )
        if inspect.isawaitable(value):
            value = await value
    except (asyncio.CancelledError, KeyboardInterrupt, GeneratorExit):
        raise
    except BaseException as exc:
        return exception_result(exc)
    return value


def check_options(
    name: object,
    description: object,
    *,
    source: object,
    timeout: object,
    annotations: object,
    hint: str,
) -> None:
    """Refuse, at definition time, a tool that would break the contract on its first call."""
    if not is_valid_name(name):
        raise ValueError(
            f"invalid tool name {name!r}: names are 1-64 characters from [a-zA-Z0-9_-]; {hint}"
        )
    if not isinstance(description, str) or not description.strip():
        raise ValueError(
            f"tool {name!r} has no description, and the model needs one to choose it; "
            "write a docstring or pass description="
        )
    if source not in SOURCES:
        raise ValueError(f"tool {name!r}: unknown source {source!r}; use one of {sorted(SOURCES)}")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ValueError(
            f"tool {name!r}: timeout must be a positive number of seconds, got {timeout!r}"
        )
    if annotations is not None and not isinstance(annotations, ToolAnnotations):
        raise TypeError(
            f"tool {name!r}: annotations must be a ToolAnnotations, got {type(annotations).__name__}"
        )
