"""The Tool contract: the protocol any object can meet, and a base class that keeps it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

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
    one whose tools can act on the world.
    """

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None
    title: str | None = None


def annotations_of(tool: object) -> ToolAnnotations:
    """The tool's hints, or empty hints when it has none (or they cannot be read)."""
    try:
        value = getattr(tool, "annotations", None)
    except Exception:
        return ToolAnnotations()
    return value if isinstance(value, ToolAnnotations) else ToolAnnotations()


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
