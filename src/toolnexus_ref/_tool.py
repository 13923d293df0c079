"""The Tool contract: the protocol any object can meet, and a base class that keeps it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from ._calling import exception_result, guard
from ._context import ToolContext
from ._naming import Source
from ._output import to_output
from ._result import ToolResult, coerce_result, is_result_like
from ._validation import argument_errors, validator_for

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["BaseTool", "Tool", "ToolAnnotations", "annotations_of"]


@runtime_checkable
class Tool(Protocol):
    """What a model sees and calls. ``execute`` may be ``async def`` or plain ``def``.

    A tool never raises from ``execute``: failures are ``ToolResult.error(...)``.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def input_schema(self) -> Mapping[str, Any]: ...

    @property
    def source(self) -> str: ...

    def execute(
        self, args: Mapping[str, Any], ctx: ToolContext | None = None
    ) -> ToolResult | Awaitable[ToolResult]: ...


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Behaviour hints, as MCP defines them. ``None`` means the owner did not say.

    The conformance suites read these to decide what is safe to call: only a tool
    marked read-only (and not destructive) is called by default when its source is
    one whose tools can act on the world. Hints that could not be read at all (a
    property that raises, a hint that is not a boolean) are no evidence of safety:
    ``unreadable`` says why, and the suites treat the tool as unsafe.
    """

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None
    #: Why the hints could not be read, or ``None`` when they could.
    unreadable: str | None = None

    @classmethod
    def cannot_read(cls, reason: str) -> ToolAnnotations:
        """Hints that say nothing is safe, because reading them failed for ``reason``."""
        return cls(unreadable=reason)

    @property
    def readable(self) -> bool:
        return self.unreadable is None


#: Each hint: our field, the MCP wire spelling, the mcp SDK's attribute. The hints that
#: make a tool less safe when true (``destructive``, ``open_world``) win a disagreement.
_HINTS = (
    ("read_only", "readOnlyHint", "read_only_hint"),
    ("destructive", "destructiveHint", "destructive_hint"),
    ("idempotent", "idempotentHint", "idempotent_hint"),
    ("open_world", "openWorldHint", "open_world_hint"),
)
_UNSAFE_WHEN = {"read_only": False, "destructive": True, "idempotent": False, "open_world": True}


#: Hints that say nothing, shared (the annotations are immutable).
_NONE = ToolAnnotations()


class _Unreadable(Exception):
    """A hint that cannot be read; the message says which and why."""


def annotations_of(tool: object) -> ToolAnnotations:
    """The tool's hints in any form its author wrote them; empty hints when it has none.

    Read from ``tool.annotations`` (a ``ToolAnnotations``, the mcp SDK's
    ``ToolAnnotations``, any object with hint attributes, or a mapping, in the MCP
    spelling ``readOnlyHint`` or the snake-case ``read_only_hint`` / ``read_only``)
    and from MCP-style hint attributes on the tool itself (``destructiveHint = True``).
    Where two places disagree, the less safe hint wins. Hints that cannot be read
    come back as ``ToolAnnotations.cannot_read(reason)``, never as empty hints.
    """
    try:
        declared = getattr(tool, "annotations", None)
        if isinstance(declared, ToolAnnotations):
            hints = declared
        elif declared is None:
            hints = _NONE
        else:
            hints = _read(declared, "annotations", names=3)
        own = _read(tool, "the tool", names=2)
    except _Unreadable as exc:
        return ToolAnnotations.cannot_read(str(exc))
    except BaseException as exc:  # the 'annotations' attribute itself raised (even SystemExit)
        return ToolAnnotations.cannot_read(
            f"reading 'annotations' raised {type(exc).__name__}: {exc}"
        )
    if not hints.readable:
        return hints
    return _less_safe(hints, own)


def _read(holder: object, where: str, *, names: int) -> ToolAnnotations:
    """Hints from a mapping or an object; ``names`` spellings of each are tried in turn.

    On the tool itself only the MCP spellings count (``names=2``): a bare attribute
    named ``read_only`` may mean something else there.
    """
    mapping = isinstance(holder, Mapping)
    values: dict[str, bool | None] = {}
    for field_name, wire, sdk in _HINTS:
        values[field_name] = None
        for name in (wire, sdk, field_name)[:names]:
            value = _lookup(holder, name, where, mapping)
            if value is None:
                continue
            if not isinstance(value, bool):
                raise _Unreadable(f"{where} has {name} = {value!r}, not true or false")
            values[field_name] = value
            break
    title = _lookup(holder, "title", where, mapping) if names == 3 else None
    return _hints(values, title if isinstance(title, str) else None)


def _lookup(holder: object, name: str, where: str, mapping: bool) -> object:
    try:
        if mapping:
            return cast("Mapping[str, object]", holder).get(name)
        return getattr(holder, name, None)
    except BaseException as exc:
        raise _Unreadable(f"reading {name} of {where} raised {type(exc).__name__}: {exc}") from exc


def _less_safe(first: ToolAnnotations, second: ToolAnnotations) -> ToolAnnotations:
    if second is _NONE:  # the common case: no hints on the tool itself
        return first
    merged: dict[str, bool | None] = {}
    for field_name, unsafe in _UNSAFE_WHEN.items():
        a, b = getattr(first, field_name), getattr(second, field_name)
        merged[field_name] = unsafe if unsafe in (a, b) else (a if a is not None else b)
    return _hints(merged, first.title)


def _hints(values: Mapping[str, bool | None], title: str | None) -> ToolAnnotations:
    if title is None and not any(value is not None for value in values.values()):
        return _NONE  # one shared value: most tools say nothing, and building one is not free
    return ToolAnnotations(
        read_only=values["read_only"],
        destructive=values["destructive"],
        idempotent=values["idempotent"],
        open_world=values["open_world"],
        title=title,
    )


class BaseTool(ABC):
    """A concrete base for tools written as classes.

    Subclasses set ``name``, ``description``, ``input_schema`` (and optionally
    ``source``, ``annotations``, ``timeout``) and implement ``run``, sync or async.
    ``execute`` then keeps the contract for them: it validates the arguments,
    honours the context and the timeout, and turns exceptions and plain return
    values into results.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}
    source: str = Source.CUSTOM.value
    annotations: ToolAnnotations | None = None
    #: One wall-clock budget in seconds for the whole call, or ``None``.
    timeout: float | None = None
    #: Validate arguments against ``input_schema`` before ``run``.
    validate_arguments: bool = True

    _validator: Validator | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {getattr(self, 'name', '?')!r} source={self.source!r}>"

    @abstractmethod
    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        """Do the work; may be ``async def``. Return a result, text, or JSON-able data."""

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        if ctx is not None and ctx.is_cancelled():
            from ._calling import cancelled_result

            return cancelled_result(ctx)
        if self.validate_arguments:
            problem = self.check_arguments(args)
            if problem is not None:
                return problem
        from ._calling import execute_raw

        runner = _RunAdapter(self)
        try:
            value = await guard(lambda c: execute_raw(runner, args, c), ctx, timeout=self.timeout)
        except Exception as exc:
            return exception_result(exc)
        except SystemExit as exc:  # a tool calling sys.exit must not end the host
            return exception_result(exc)
        return self.to_result(value)

    def check_arguments(self, args: object) -> ToolResult | None:
        """An error result naming every offending field, or ``None`` when ``args`` is valid."""
        if self._validator is None:
            self._validator = validator_for(self.input_schema)
        errors = argument_errors(self._validator, args)
        if not errors:
            return None
        listed = "\n".join(f"- {line}" for line in errors)
        return ToolResult.error(
            f"Invalid arguments for {self.name!r}:\n{listed}",
            {"error_type": "InvalidArguments"},
            retryable=False,
        )

    @staticmethod
    def to_result(value: Any) -> ToolResult:
        if is_result_like(value):
            try:
                return coerce_result(value)
            except TypeError as exc:
                return ToolResult.error(f"malformed result: {exc}", {"error_type": "TypeError"})
        try:
            return ToolResult.ok(to_output(value))
        except TypeError as exc:
            return ToolResult.error(
                f"the tool's return value cannot be sent to the model: {exc}",
                {"error_type": "TypeError"},
            )


class _RunAdapter:
    """Lets ``execute_raw`` call ``BaseTool.run`` the way it calls any ``execute``."""

    __slots__ = ("execute", "name")

    def __init__(self, tool: BaseTool) -> None:
        self.name = tool.name
        self.execute = tool.run
