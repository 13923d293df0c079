"""``@tool``: a plain or async function, or a method, as a Tool that keeps the contract."""

from __future__ import annotations

import copy
import functools
import inspect
import types
from collections.abc import Callable, Mapping
from typing import Any, overload

from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import BaseTool, ToolAnnotations

from ._convert import ConversionError, convert
from ._invoke import check_options, invoke
from ._schema import FunctionPlan, plan_function

__all__ = ["NativeTool", "tool", "tools_of"]


class NativeTool(BaseTool):
    """A function as a Tool; still callable as the function it wraps.

    ``execute`` is ``BaseTool``'s: arguments are validated against the inferred
    schema, the context and ``timeout`` are honoured, and the return value or the
    exception becomes a result. Between validation and the call, JSON values are
    turned into what the hints promise (a dataclass instance, an ``Enum`` member, a
    tuple, a ``date``, a pydantic model ...).

    The context parameter (``ctx``, or one annotated ``ToolContext``) receives the
    context of the call, or ``None`` when the caller gave none and the tool has no
    ``timeout``: a made-up context that nobody can cancel would only pretend.
    Annotate it ``ToolContext | None``.

    Used in a class body, ``@tool`` makes a method tool: reading it from an instance
    gives a tool bound to that instance (see ``tools_of``). Put ``@tool`` above
    ``@staticmethod``/``@classmethod``, not below.
    """

    source: str = Source.NATIVE.value
    __wrapped__: Callable[..., Any]

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
        annotations: ToolAnnotations | None = None,
        source: str = Source.NATIVE.value,
    ) -> None:
        raw, binding, target = _unwrap(fn)
        where = getattr(raw, "__qualname__", repr(raw))
        if inspect.isasyncgenfunction(raw) or inspect.isgeneratorfunction(raw):
            raise TypeError(
                f"cannot make a tool of {where}(): it is a generator; a tool returns one "
                "result, so collect the items and return a list"
            )
        if binding == "auto":
            binding = "method" if _looks_like_method(raw) else "function"
        plan = plan_function(raw, skip_first=binding != "function", description=description)
        tool_name = name if name is not None else getattr(raw, "__name__", "")
        check_options(
            tool_name,
            plan.description,
            source=source,
            timeout=timeout,
            annotations=annotations,
            hint=f"pass name= to @tool for {where}, e.g. name=sanitize(...)",
        )
        functools.update_wrapper(self, raw)
        self.name = tool_name
        self.description = plan.description
        self.input_schema = plan.input_schema
        self.source = source
        self.timeout = timeout
        self.annotations = annotations
        self._raw = raw
        self._plan: FunctionPlan = plan
        self._binding = binding
        self._fn: Callable[..., Any] | None = raw if binding == "function" else None
        if target is not None:  # @tool applied to an already-bound method
            self._fn, self._binding = types.MethodType(raw, target), "function"
        self._is_async = inspect.iscoroutinefunction(raw)

    def __repr__(self) -> str:
        bound = " (unbound method)" if self._fn is None else ""
        return f"<NativeTool {self.name!r}{bound} source={self.source!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly, exactly as without the decorator."""
        fn = self._fn if self._fn is not None else self._raw
        return fn(*args, **kwargs)

    def __get__(self, instance: object, owner: type | None = None) -> NativeTool:
        if self._binding == "classmethod" and owner is not None:
            return self._bind(owner)
        if self._binding == "method" and instance is not None:
            return self._bind(instance)
        return self

    def _bind(self, target: object) -> NativeTool:
        bound = copy.copy(self)
        bound._fn = types.MethodType(self._raw, target)
        bound.__dict__["__self__"] = target
        return bound

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        fn = self._fn
        if fn is None:
            return ToolResult.error(
                f"{self.name!r} is a method tool read from its class; read it from an "
                "instance (obj.method, or tools_of(obj)) so that it has its self",
                {"error_type": "TypeError"},
            )
        plan = self._plan
        values: dict[str, Any] = {}
        for param in plan.params:
            if param.name == plan.ctx_param or param.name not in args:
                continue
            try:
                values[param.name] = convert(args[param.name], param.annotation)
            except (ConversionError, TypeError, ValueError) as exc:
                return ToolResult.error(
                    f"Invalid arguments for {self.name!r}:\n- {param.name}: {exc}",
                    {"error_type": "InvalidArguments"},
                    retryable=False,
                )
        positional, keywords = plan.call_arguments(values, ctx)
        return await invoke(fn, positional, keywords, is_async=self._is_async, name=self.name)


def _unwrap(fn: Any) -> tuple[Callable[..., Any], str, object]:
    """``(function, binding, bound self)`` for a function, method or method descriptor."""
    if isinstance(fn, NativeTool):
        raise TypeError(f"{fn!r} is already a tool; apply @tool once")
    if isinstance(fn, staticmethod):
        return fn.__func__, "function", None
    if isinstance(fn, classmethod):
        return fn.__func__, "classmethod", None
    if isinstance(fn, types.MethodType):
        return fn.__func__, "method", fn.__self__
    if not callable(fn):
        raise TypeError(f"@tool needs a function, got {type(fn).__name__}")
    return fn, "auto", None


def _looks_like_method(fn: Callable[..., Any]) -> bool:
    """A function written in a class body whose first parameter is ``self``."""
    parts = getattr(fn, "__qualname__", "").split(".")
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return False
    return len(parts) >= 2 and parts[-2] != "<locals>" and params[:1] == ["self"]


@overload
def tool(fn: Callable[..., Any], /) -> NativeTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    annotations: ToolAnnotations | None = None,
    source: str = Source.NATIVE.value,
) -> Callable[[Callable[..., Any]], NativeTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    annotations: ToolAnnotations | None = None,
    source: str = Source.NATIVE.value,
) -> NativeTool | Callable[[Callable[..., Any]], NativeTool]:
    """Make a Tool of a function: ``@tool``, ``@tool()`` or ``@tool(name=..., timeout=...)``.

    The schema comes from the type hints, the description from the docstring's first
    paragraph (or ``description=``). Anything that cannot be inferred is refused here,
    with the parameter and the fix, rather than at the first call.
    """
    if isinstance(fn, str):
        raise TypeError(f"@tool({fn!r}): pass the name as a keyword, @tool(name={fn!r})")

    def decorate(function: Callable[..., Any]) -> NativeTool:
        return NativeTool(
            function,
            name=name,
            description=description,
            timeout=timeout,
            annotations=annotations,
            source=source,
        )

    return decorate if fn is None else decorate(fn)


def tools_of(obj: object) -> list[NativeTool]:
    """Every ``@tool`` method of an instance (or every tool in a module), in definition order.

    Methods come bound to ``obj``; base-class tools come first, and a subclass that
    overrides one keeps its place (a plain method overriding a tool removes it).
    """
    if isinstance(obj, types.ModuleType):
        seen: dict[int, NativeTool] = {}
        for value in vars(obj).values():
            if isinstance(value, NativeTool):
                seen.setdefault(id(value), value)
        return list(seen.values())
    if isinstance(obj, type):
        raise TypeError(
            f"tools_of needs an instance, got the class {obj.__qualname__}; its method tools "
            f"need a self: call tools_of({obj.__qualname__}(...))"
        )
    mro = type(obj).__mro__
    names = dict.fromkeys(name for cls in reversed(mro) for name in vars(cls))
    found: list[NativeTool] = []
    for name in names:
        static = next(vars(cls)[name] for cls in mro if name in vars(cls))
        if isinstance(static, staticmethod):
            static = static.__func__
        if isinstance(static, NativeTool):
            value = getattr(obj, name)
            if isinstance(value, NativeTool):
                found.append(value)
    return found
