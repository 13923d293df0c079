"""Call filters (before a call) and listeners (after it): the toolkit's extension points.

A filter is ``filter(call) -> None | Decision`` (or an awaitable of one) where
``call`` is a ``ToolCall`` with ``name`` and ``args``. Returning ``None`` allows the
call; otherwise the ``Decision`` says what to do: ``Decision.allow()``,
``Decision.deny(reason)``, ``Decision.rewrite(new_args)`` or
``Decision.respond(result)`` (answer without calling the tool: a cache, a mock).
One explicit type, so that a filter returning a dict by accident is an error
rather than a silent rewrite.

Filters fail closed: a filter that raises or returns anything else blocks the
call with an error result that names the filter, because filters are usually
policy and a broken policy must not let calls through.

A listener is ``listener(name, args, result, duration_seconds)``, sync or async.
Listeners fail open: one that raises is reported with a ``RuntimeWarning`` and
the call's result is returned unchanged.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

from toolnexus_ref._result import ToolResult

from ._toolcalls import ToolCall

__all__ = ["Action", "Decision", "Filter", "Listener", "apply_filters", "notify_listeners"]


class Action(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    REWRITE = "rewrite"
    RESPOND = "respond"


@dataclass(frozen=True, slots=True)
class Decision:
    """What a filter decided about one call. Build it with the class methods."""

    action: Action
    reason: str | None = None
    args: Mapping[str, Any] | None = None
    result: ToolResult | None = field(default=None, repr=False)

    @classmethod
    def allow(cls) -> Decision:
        return cls(Action.ALLOW)

    @classmethod
    def deny(cls, reason: str) -> Decision:
        """Refuse the call; the model reads ``reason`` in the error result."""
        if not isinstance(reason, str) or not reason:
            raise TypeError("Decision.deny needs a non-empty reason the model can read")
        return cls(Action.DENY, reason=reason)

    @classmethod
    def rewrite(cls, args: Mapping[str, Any]) -> Decision:
        """Call the tool with ``args`` instead; later filters see the new arguments."""
        if not isinstance(args, Mapping):
            raise TypeError(f"Decision.rewrite needs a mapping, got {type(args).__name__}")
        return cls(Action.REWRITE, args=dict(args))

    @classmethod
    def respond(cls, result: ToolResult) -> Decision:
        """Answer with ``result`` without calling the tool."""
        if not isinstance(result, ToolResult):
            raise TypeError(f"Decision.respond needs a ToolResult, got {type(result).__name__}")
        return cls(Action.RESPOND, result=result)


#: ``filter(call) -> Decision | None``, sync or async.
Filter: TypeAlias = Callable[[ToolCall], Decision | Awaitable[Decision | None] | None]
#: ``listener(name, args, result, duration_seconds)``, sync or async.
Listener: TypeAlias = Callable[[str, Mapping[str, Any], ToolResult, float], object]


def _label(hook: object) -> str:
    return getattr(hook, "__qualname__", None) or type(hook).__name__


def denied_result(name: str, reason: str) -> ToolResult:
    return ToolResult.error(
        f"The call to {name!r} was denied: {reason}",
        {"error_type": "Denied", "denied": True},
        retryable=False,
    )


def _filter_failure(name: str, hook: object, problem: str) -> ToolResult:
    return ToolResult.error(
        f"The call to {name!r} was blocked because filter {_label(hook)} {problem}",
        {"error_type": "FilterError"},
        retryable=False,
    )


async def apply_filters(
    filters: tuple[Filter, ...], call: ToolCall
) -> tuple[dict[str, Any], ToolResult | None]:
    """Run the filters in order: the (possibly rewritten) arguments, or a final result."""
    args = dict(call.args)
    for hook in filters:
        try:
            outcome: Any = hook(ToolCall(call.id, call.name, args, None, call.raw))
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except Exception as exc:
            return args, _filter_failure(call.name, hook, f"raised {type(exc).__name__}: {exc}")
        if outcome is None:
            continue
        if not isinstance(outcome, Decision):
            return args, _filter_failure(
                call.name,
                hook,
                f"returned {type(outcome).__name__}; a filter returns None or a Decision",
            )
        if outcome.action is Action.DENY:
            return args, denied_result(call.name, outcome.reason or "denied by a filter")
        if outcome.action is Action.RESPOND and outcome.result is not None:
            return args, outcome.result
        if outcome.action is Action.REWRITE and outcome.args is not None:
            args = dict(outcome.args)
    return args, None


async def notify_listeners(
    listeners: tuple[Listener, ...],
    name: str,
    args: Mapping[str, Any],
    result: ToolResult,
    duration: float,
) -> None:
    """Tell every listener; a failing listener is warned about and skipped."""
    for hook in listeners:
        try:
            value = hook(name, args, result, duration)
            if inspect.isawaitable(value):
                await value
        except Exception as exc:
            warnings.warn(
                f"toolkit listener {_label(hook)} raised {type(exc).__name__}: {exc}; "
                "the call's result is unaffected",
                RuntimeWarning,
                stacklevel=2,
            )
