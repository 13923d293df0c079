"""Tools of the upstream ``toolnexus`` package (a ``Tool`` dataclass with async ``execute``).

Upstream tools already have our shape, but not our context: they read their own
``ToolContext(signal, timeout, answer)``. The adapter builds that context from
ours for every call, so a cancel reaches the tool through ``signal`` (upstream's
``is_set()`` / ``aborted`` convention) and the deadline through ``timeout``.
What the tool then does with them is its own affair, and the suites judge it.

A context already cancelled before the call ends it at once, as the upstream host
checks its cancel token before each step. A suspension (an error result whose
``metadata["pending"]`` is a ``Request``) comes back with the request as the
plain data it is on the wire, marked ``suspended``. The builtins are classified so
that ``--toolnexus-execute auto`` calls only those that cannot change anything.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from typing import Any

from toolnexus_ref._calling import cancelled_result
from toolnexus_ref._context import ToolContext
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import ToolAnnotations

from ._base import ForeignTool

__all__ = ["BUILTIN_HINTS", "UpstreamTool", "UpstreamSignal", "adapt"]

_READS = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)
_CHANGES = ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=False)
#: What each upstream builtin does to the world, read from its source (builtin.py).
BUILTIN_HINTS: dict[str, ToolAnnotations] = {
    "read": _READS,
    "grep": _READS,
    "glob": _READS,
    # Renders the list it is given and keeps nothing: nothing outside the call changes.
    "todowrite": _READS,
    # Suspends with a question for the host; answers the model from ``ctx.answer``.
    "question": ToolAnnotations(read_only=True, destructive=False, idempotent=True),
    "webfetch": ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=True
    ),
    "bash": ToolAnnotations(read_only=False, destructive=True, idempotent=False, open_world=True),
    "write": _CHANGES,
    "edit": _CHANGES,
    "apply_patch": _CHANGES,
}


def _upstream_types() -> Any:
    return sys.modules.get("toolnexus.types")


def adapt(value: object) -> UpstreamTool | None:
    """An upstream ``Tool``, or the ``skill`` tool of an upstream ``SkillSource``."""
    types = _upstream_types()
    if types is None:
        return None
    if isinstance(value, types.Tool):
        return UpstreamTool(value)
    skills = sys.modules.get("toolnexus.skill")
    if skills is not None and isinstance(value, skills.SkillSource):
        return UpstreamTool(value.tool)
    return None


class UpstreamSignal:
    """Upstream's cancellation token, read from our context.

    Upstream code asks ``signal.is_set()`` (an ``asyncio.Event``/``threading.Event``)
    or ``signal.aborted`` (the JS ``AbortSignal``); both read our context, which
    also counts a passed deadline as cancelled.
    """

    __slots__ = ("_ctx",)

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx

    def is_set(self) -> bool:
        return self._ctx.is_cancelled()

    @property
    def aborted(self) -> bool:
        return self._ctx.is_cancelled()

    @property
    def reason(self) -> str | None:
        return self._ctx.cancel_reason

    async def wait(self) -> bool:
        await self._ctx.wait_cancelled()
        return True

    def __bool__(self) -> bool:
        return self._ctx.is_cancelled()


def _their_answer(types: Any, answer: Any) -> Any:
    """Our context's answer in upstream's shape (an ``Answer``), when it has one."""
    if answer is None or isinstance(answer, types.Answer):
        return answer
    if isinstance(answer, Mapping) and "id" in answer and "ok" in answer:
        return types.Answer(
            id=answer["id"], ok=answer["ok"], data=answer.get("data"), reason=answer.get("reason")
        )
    return answer


def their_context(types: Any, ctx: ToolContext | None) -> Any:
    """Upstream's ``ToolContext`` driven by ours; ``None`` stays ``None``."""
    if ctx is None:
        return None
    return types.ToolContext(
        signal=UpstreamSignal(ctx), timeout=ctx.remaining(), answer=_their_answer(types, ctx.answer)
    )


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def our_result(value: Any) -> Any:
    """An upstream ``ToolResult`` as ours; anything else is returned as it came, to be judged."""
    if not (hasattr(value, "output") and hasattr(value, "is_error")):
        return value
    raw = getattr(value, "metadata", None)
    malformed = raw is not None and not isinstance(raw, Mapping)
    if malformed or not isinstance(value.output, str) or not isinstance(value.is_error, bool):
        return value  # a malformed result stays malformed: the result checks report it
    metadata = dict(raw or {})
    if "pending" in metadata:
        metadata["pending"] = _plain(metadata["pending"])
        metadata["suspended"] = True
    parts = getattr(value, "parts", None)
    if parts:
        metadata["parts"] = parts
    return ToolResult(value.output, value.is_error, metadata)


class UpstreamTool(ForeignTool):
    """An upstream ``toolnexus`` tool, called with its own context."""

    library = "toolnexus"

    def __init__(self, tool: Any) -> None:
        source = tool.source
        hints = BUILTIN_HINTS.get(tool.name) if source == "builtin" else None
        super().__init__(
            tool,
            name=tool.name,
            description=tool.description,
            source=source,
            annotations=hints or ToolAnnotations(),
        )
        self.input_schema = tool.input_schema

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> Any:
        if ctx is not None and ctx.is_cancelled():
            return cancelled_result(ctx)
        types = _upstream_types()
        value = await self.wrapped.execute(args, their_context(types, ctx))  # type: ignore[attr-defined]
        return our_result(value)
