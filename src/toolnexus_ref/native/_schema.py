"""A function's signature and docstring as a tool's description and input schema.

The top level is ``{"type": "object", "properties": ..., "required": [...],
"additionalProperties": false}``: an argument the function does not declare is
refused with a message that names it, instead of being dropped or crashing the
call with a ``TypeError`` the model cannot act on. ``required`` lists the
parameters without defaults; a JSON-able default is published as ``default``. A
parameter named ``ctx`` (or annotated ``ToolContext``) receives the call's
context and is not part of the schema.

Everything that makes inference impossible (``*args``, ``**kwargs``, a parameter
with neither annotation nor default, an unsupported type) raises ``TypeError``
here, at decoration time, naming the function, the parameter and the fix.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from toolnexus_ref._context import ToolContext

from ._docstring import parse_docstring
from ._kinds import SIMPLE, kind_of
from ._types import SchemaBuilder, has_default, jsonable_default

__all__ = ["FunctionPlan", "InferredSchema", "ParamPlan", "infer_schema", "plan_function"]

_EMPTY = inspect.Parameter.empty
_SUPPORTED = (
    "str, int, float, bool, None, Literal, Enum, list/tuple/set, dict[str, T], "
    "TypedDict, dataclasses, pydantic models, datetime/date/time, UUID, Any"
)


class InferredSchema(NamedTuple):
    """What a model is shown for a function: unpack as ``description, schema = ...``."""

    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ParamPlan:
    """One parameter as the call needs it: how to pass it and what to convert it to."""

    name: str
    kind: inspect._ParameterKind
    annotation: Any
    default: Any


@dataclass(frozen=True, slots=True)
class FunctionPlan:
    description: str
    input_schema: dict[str, Any]
    #: Every parameter after ``self``, in order, the context one included.
    params: tuple[ParamPlan, ...]
    ctx_param: str | None

    def call_arguments(
        self, values: Mapping[str, Any], ctx: ToolContext | None
    ) -> tuple[list[Any], dict[str, Any]]:
        """Positional and keyword arguments for the function from converted ``values``."""
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for param in self.params:
            if param.name == self.ctx_param:
                present, value = True, ctx
            else:
                present, value = param.name in values, values.get(param.name)
            if param.kind is inspect.Parameter.POSITIONAL_ONLY:
                positional.append(value if present else param.default)
            elif present:
                keywords[param.name] = value
        return positional, keywords


def infer_schema(fn: Callable[..., Any]) -> InferredSchema:
    """The description and Draft 2020-12 input schema that ``@tool`` would publish for ``fn``.

    Bound methods drop their ``self``. Raises ``TypeError`` where inference is impossible.
    """
    skip_first = inspect.ismethod(fn)
    plan = plan_function(getattr(fn, "__func__", fn), skip_first=skip_first)
    return InferredSchema(plan.description, plan.input_schema)


def plan_function(
    fn: Callable[..., Any], *, skip_first: bool = False, description: str | None = None
) -> FunctionPlan:
    """Everything ``@tool`` needs to know about ``fn``, computed once at decoration time."""
    where = f"{getattr(fn, '__qualname__', repr(fn))}()"
    if not inspect.isfunction(fn):
        raise TypeError(f"@tool needs a function, got {type(fn).__name__} {fn!r}")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(
            f"cannot make a tool of {where}: its type hints do not resolve ({exc}); define the "
            "types it names at module level, or import them outside `if TYPE_CHECKING:`"
        ) from exc
    summary, arg_docs = parse_docstring(fn.__doc__)
    builder = SchemaBuilder()
    params: list[ParamPlan] = []
    props: dict[str, Any] = {}
    required: list[str] = []
    ctx_param: str | None = None
    signature = list(inspect.signature(fn).parameters.values())
    for param in signature[1:] if skip_first else signature:
        annotation = hints.get(param.name, _EMPTY)
        _refuse_variadic(param, where)
        if param.name == "ctx" or _is_context(annotation):
            if ctx_param is not None:
                raise TypeError(
                    f"cannot make a tool of {where}: both {ctx_param!r} and {param.name!r} ask "
                    "for the ToolContext; keep one"
                )
            ctx_param = param.name
            params.append(ParamPlan(param.name, param.kind, annotation, param.default))
            continue
        annotation, prop = _parameter_schema(builder, param, annotation, where)
        if param.name in arg_docs and "description" not in prop:
            prop["description"] = arg_docs[param.name]
        props[param.name] = prop
        if param.default is _EMPTY:
            required.append(param.name)
        params.append(ParamPlan(param.name, param.kind, annotation, param.default))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }
    if builder.defs:
        schema["$defs"] = builder.defs
    if builder.has_extras:
        _check_schema(schema, where)
    text = description if description is not None else summary
    return FunctionPlan(text, schema, tuple(params), ctx_param)


def _refuse_variadic(param: inspect.Parameter, where: str) -> None:
    if param.kind is inspect.Parameter.VAR_POSITIONAL:
        raise TypeError(
            f"cannot make a tool of {where}: parameter '*{param.name}' takes positional "
            f"arguments, which a JSON object cannot give; replace it with a named parameter "
            f"such as `{param.name}: list[str]`"
        )
    if param.kind is inspect.Parameter.VAR_KEYWORD:
        raise TypeError(
            f"cannot make a tool of {where}: parameter '**{param.name}' accepts any keyword, "
            f"which has no schema; declare each argument as a named parameter, or take one "
            f"`{param.name}: dict[str, Any]`"
        )


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    kind, args = kind_of(annotation) if annotation is not _EMPTY else ("any", ())
    if kind == "union":
        return any(a is ToolContext for a in args)
    return kind == "annotated" and _is_context(args[0])


def _parameter_schema(
    builder: SchemaBuilder, param: inspect.Parameter, annotation: Any, where: str
) -> tuple[Any, dict[str, Any]]:
    """The parameter's (conversion type, property schema), default included."""
    if annotation is _EMPTY:
        if param.default is _EMPTY:
            raise TypeError(
                f"cannot make a tool of {where}: parameter {param.name!r} has no type "
                f"annotation and no default, so its schema is unknown; annotate it, for "
                f"example `{param.name}: str`"
            )
        annotation = type(param.default) if type(param.default) in SIMPLE else Any
    try:
        prop = builder.schema(annotation)
    except TypeError as exc:
        raise TypeError(
            f"cannot make a tool of {where}: parameter {param.name!r}: {exc}; supported are "
            f"{_SUPPORTED} (use Any or dict[str, Any] and convert it yourself otherwise)"
        ) from None
    if param.default is _EMPTY:
        return annotation, prop
    if param.default is None and not _admits_null(prop):
        inner = {k: v for k, v in prop.items() if k != "description"}
        outer = {"description": prop["description"]} if "description" in prop else {}
        prop = {"anyOf": [inner, {"type": "null"}], **outer}
        annotation = typing.Optional[annotation]  # noqa: UP045 - a runtime type, not a hint
    default = jsonable_default(param.default)
    if has_default(default):
        prop["default"] = default
    return annotation, prop


def _admits_null(schema: Mapping[str, Any]) -> bool:
    if not schema or schema.get("type") == "null" or None in schema.get("enum", [1]):
        return True
    return any(_admits_null(branch) for branch in schema.get("anyOf", []))


def _check_schema(schema: Mapping[str, Any], where: str) -> None:
    """``Param`` keywords are the user's own JSON: catch a typo here, not at the first call."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise TypeError(
            f"cannot make a tool of {where}: the Param keywords make an invalid schema: "
            f"{exc.message}"
        ) from None
