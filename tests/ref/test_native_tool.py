"""@tool, NativeTool, tools_of and dynamic_tool: behaviour over the BaseTool core."""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import sys
import threading
import time
import types
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel

from toolnexus_ref import Tool, ToolAnnotations, ToolContext, ToolResult
from toolnexus_ref.native import NativeTool, Param, dynamic_tool, tool, tools_of


class Shape(enum.Enum):
    CIRCLE = "circle"
    SQUARE = "square"


@dataclass
class Point:
    x: float
    y: float = 0.0


class Box(TypedDict):
    corner: Point
    shape: Shape


class Account(BaseModel):
    name: str
    balance: int = 0


def run(tool_: Any, args: Any, ctx: ToolContext | None = None) -> ToolResult:
    result = asyncio.run(tool_.execute(args, ctx))
    assert isinstance(result, ToolResult)
    return result


# -- the decorator's forms ---------------------------------------------------------


def test_bare_called_and_configured_forms_make_the_same_kind_of_tool() -> None:
    def double(x: int) -> int:
        """Double it."""
        return 2 * x

    bare, called = tool(double), tool()(double)
    named = tool(
        name="twice",
        description="Two times.",
        timeout=5,
        annotations=ToolAnnotations(read_only=True),
        source="custom",
    )(double)
    for made in (bare, called, named):
        assert isinstance(made, NativeTool)
        assert isinstance(made, Tool)
        assert made(4) == 8  # still the function
        assert made.__wrapped__ is double
        assert made.__doc__ == double.__doc__
        assert run(made, {"x": 3}) == ToolResult.ok("6")
    assert (bare.name, bare.description, bare.source, bare.timeout) == (
        "double",
        "Double it.",
        "native",
        None,
    )
    assert (named.name, named.description, named.source, named.timeout) == (
        "twice",
        "Two times.",
        "custom",
        5,
    )
    assert named.annotations == ToolAnnotations(read_only=True)


def test_async_function_is_awaited_and_still_callable() -> None:
    @tool
    async def shout(text: str) -> str:
        """Upper-case it."""
        await asyncio.sleep(0)
        return text.upper()

    assert asyncio.run(shout("hi")) == "HI"
    assert run(shout, {"text": "hi"}) == ToolResult.ok("HI")


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"name": "bad name"}, "invalid tool name 'bad name'"),
        ({"name": "x" * 65}, "1-64 characters"),
        ({"timeout": 0}, "timeout must be a positive number"),
        ({"timeout": float("nan")}, "timeout must be a positive number"),
        ({"source": "elsewhere"}, "unknown source 'elsewhere'"),
        ({"description": "  "}, "has no description"),
    ],
)
def test_bad_options_are_refused_at_decoration_time(kwargs: dict[str, Any], fragment: str) -> None:
    def fine(x: int) -> int:
        """Fine."""
        return x

    with pytest.raises((TypeError, ValueError), match=None) as info:
        tool(**kwargs)(fine)
    assert fragment in str(info.value)


def test_refusals_of_misuse() -> None:
    def fine(x: int) -> int:
        """Fine."""
        return x

    with pytest.raises(TypeError, match="pass the name as a keyword"):
        tool("fine")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="already a tool"):
        tool(tool(fine))
    with pytest.raises(TypeError, match="invalid schema"):

        @tool
        def broken(x: Annotated[int, Param(minimum="zero")]) -> int:
            """Broken bound."""
            return x


# -- calls: validation, conversion, results ---------------------------------------------


def test_arguments_arrive_as_the_hinted_python_types() -> None:
    seen: dict[str, Any] = {}

    @tool
    def take(
        point: Point,
        box: Box,
        shape: Shape,
        pair: tuple[int, str],
        tags: set[str],
        day: dt.date,
        when: dt.datetime,
        ident: uuid.UUID,
        account: Account,
        ratio: float,
        maybe: Point | None = None,
    ) -> str:
        """Record what came in."""
        seen.update(locals())
        return "ok"

    args = {
        "point": {"x": 1},
        "box": {"corner": {"x": 2, "y": 3}, "shape": "square"},
        "shape": "circle",
        "pair": [1, "a"],
        "tags": ["a", "b"],
        "day": "2024-02-29",
        "when": "2024-02-29T12:00:00+00:00",
        "ident": "12345678-1234-5678-1234-567812345678",
        "account": {"name": "n"},
        "ratio": 2,
    }
    assert run(take, args) == ToolResult.ok("ok")
    assert seen["point"] == Point(1.0, 0.0)
    assert seen["box"] == {"corner": Point(2, 3), "shape": Shape.SQUARE}
    assert seen["shape"] is Shape.CIRCLE
    assert seen["pair"] == (1, "a")
    assert seen["tags"] == {"a", "b"}
    assert seen["day"] == dt.date(2024, 2, 29)
    assert seen["when"] == dt.datetime(2024, 2, 29, 12, tzinfo=dt.UTC)
    assert seen["ident"] == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert seen["account"] == Account(name="n")
    assert isinstance(seen["ratio"], float)
    assert seen["maybe"] is None


def test_invalid_arguments_are_an_error_result_naming_the_field() -> None:
    @tool
    def area(width: int, height: int = 1) -> int:
        """Area."""
        return width * height

    missing = run(area, {})
    assert missing.is_error
    assert "'width' is a required property" in missing.output
    wrong = run(area, {"width": "wide"})
    assert wrong.is_error
    assert "width" in wrong.output
    unknown = run(area, {"width": 1, "depth": 2})
    assert unknown.is_error
    assert "'depth' was unexpected" in unknown.output
    assert unknown.metadata["error_type"] == "InvalidArguments"
    not_an_object = run(area, ["width"])
    assert not_an_object.is_error


def test_a_value_the_schema_admits_but_python_cannot_parse_is_an_error_result() -> None:
    @tool
    def at(when: dt.datetime) -> str:
        """When."""
        return when.isoformat()

    result = run(at, {"when": "not a date"})  # "date-time" may go unchecked by jsonschema
    assert result.is_error
    assert "when" in result.output
    assert result.metadata["error_type"] == "InvalidArguments"


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        ("plain text", ToolResult.ok("plain text")),
        (ToolResult.error("own error", {"k": 1}), ToolResult.error("own error", {"k": 1})),
        ({"a": [1, 2]}, ToolResult.ok('{"a":[1,2]}')),
        (Point(1, 2), ToolResult.ok('{"x":1,"y":2}')),
        (Account(name="n"), ToolResult.ok('{"name":"n","balance":0}')),
        (dt.date(2024, 1, 2), ToolResult.ok('"2024-01-02"')),
        (None, ToolResult.ok("")),
    ],
)
def test_return_values_become_results(returned: Any, expected: ToolResult) -> None:
    @tool
    def give() -> Any:
        """Give it back."""
        return returned

    assert run(give, {}) == expected


@pytest.mark.parametrize("is_async", [False, True])
def test_failures_become_error_results(is_async: bool) -> None:
    def raising() -> None:
        raise LookupError("no such thing")

    def exiting() -> None:
        sys.exit(2)

    def opaque() -> object:
        return object()

    for body, fragment in [
        (raising, "LookupError: no such thing"),
        (exiting, "SystemExit: 2"),
        (opaque, "cannot be sent to the model"),
    ]:
        if is_async:

            async def fn(body: Any = body) -> Any:
                """Fails."""
                return body()

        else:

            def fn(body: Any = body) -> Any:
                """Fails."""
                return body()

        result = run(tool(name=body.__name__)(fn), {})
        assert result.is_error
        assert fragment in result.output


# -- context, timeout, cancellation --------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True])
def test_ctx_is_injected_and_left_out_of_the_schema(is_async: bool) -> None:
    got: list[Any] = []

    def body(query: str, ctx: ToolContext | None = None) -> str:
        got.append(ctx)
        return query

    if is_async:

        async def fn(query: str, ctx: ToolContext | None = None) -> str:
            """Look."""
            return body(query, ctx)

    else:

        def fn(query: str, ctx: ToolContext | None = None) -> str:
            """Look."""
            return body(query, ctx)

    made = tool(fn)
    assert list(made.input_schema["properties"]) == ["query"]
    context = ToolContext()
    assert run(made, {"query": "q"}, context) == ToolResult.ok("q")
    assert run(made, {"query": "q"}) == ToolResult.ok("q")
    assert got[0] is context
    assert got[1] is None  # no context given: None, not a context nobody can cancel
    refused = run(made, {"query": "q", "ctx": 1})
    assert refused.is_error


def test_a_parameter_annotated_toolcontext_gets_the_context_whatever_its_name() -> None:
    @tool(timeout=5)
    def peek(token: ToolContext) -> float:
        """Time left."""
        remaining = token.remaining()
        assert remaining is not None
        return remaining

    assert "token" not in peek.input_schema["properties"]
    result = run(peek, {})  # with a timeout the tool gets a context carrying the deadline
    assert not result.is_error
    assert 0 < float(result.output) <= 5


@pytest.mark.parametrize("is_async", [False, True])
def test_timeout_is_one_budget_and_ends_in_a_retryable_error(is_async: bool) -> None:
    if is_async:

        async def fn() -> str:
            """Slow."""
            await asyncio.sleep(30)
            return "late"

    else:
        release = threading.Event()

        def fn() -> str:
            """Slow."""
            release.wait(30)  # a daemon thread, abandoned when the budget ends
            return "late"

    made = tool(timeout=0.1)(fn)
    started = time.monotonic()
    result = run(made, {})
    assert time.monotonic() - started < 10  # the budget, not the tool's 30 s
    if not is_async:
        release.set()
    assert result.is_error
    assert result.retryable
    assert result.metadata["error_type"] == "TimeoutError"


def test_a_cancelled_context_ends_the_call_with_an_error_result() -> None:
    calls: list[int] = []

    @tool
    def count() -> int:
        """Count calls."""
        calls.append(1)
        return len(calls)

    context = ToolContext()
    context.cancel("user pressed stop")
    result = run(count, {}, context)
    assert result.is_error
    assert "user pressed stop" in result.output
    assert calls == []

    @tool
    async def wait_for_cancel(ctx: ToolContext | None = None) -> str:
        """Waits."""
        await asyncio.sleep(30)
        return "late"

    async def cancel_midway() -> ToolResult:
        ctx = ToolContext()
        asyncio.get_running_loop().call_later(0.05, ctx.cancel, "stop")
        return await wait_for_cancel.execute({}, ctx)

    started = time.monotonic()
    midway = asyncio.run(cancel_midway())
    assert midway.is_error
    assert midway.metadata.get("cancelled") is True
    assert time.monotonic() - started < 10  # the cancel, not the tool's 30 s


# -- methods and tools_of ----------------------------------------------------------


class Calculator:
    def __init__(self, offset: int) -> None:
        self.offset = offset

    @tool
    def add(self, a: int) -> int:
        """Add the offset."""
        return a + self.offset

    def helper(self) -> int:
        return self.offset

    @tool(name="times")
    async def multiply(self, a: int, ctx: ToolContext | None = None) -> int:
        """Multiply by the offset."""
        return a * self.offset

    @tool
    @staticmethod
    def negate(a: int) -> int:
        """Negate."""
        return -a

    @tool
    @classmethod
    def kind(cls) -> str:
        """The class name."""
        return cls.__name__


class LoudCalculator(Calculator):
    @tool
    def shout(self, text: str) -> str:
        """Upper-case."""
        return text.upper()

    def helper(self) -> int:
        return 0


def test_tools_of_binds_methods_in_definition_order() -> None:
    calc = LoudCalculator(10)
    tools = tools_of(calc)
    assert [t.name for t in tools] == ["add", "times", "negate", "kind", "shout"]
    assert "self" not in tools[0].input_schema["properties"]
    results = [
        run(t, args)
        for t, args in zip(tools, [{"a": 1}, {"a": 2}, {"a": 3}, {}, {"text": "x"}], strict=True)
    ]
    assert [r.output for r in results] == ["11", "20", "-3", "LoudCalculator", "X"]
    assert calc.add(5) == 15  # still a method
    assert Calculator.add(calc, 1) == 11
    assert tools_of(Calculator(1))[0] is not tools_of(Calculator(2))[0]


def test_a_method_tool_read_from_the_class_says_how_to_bind_it() -> None:
    result = run(Calculator.add, {"a": 1})
    assert result.is_error
    assert "instance" in result.output
    with pytest.raises(TypeError, match="needs an instance"):
        tools_of(Calculator)


def test_tool_on_a_bound_method_and_tools_of_a_module() -> None:
    calc = Calculator(3)

    def minus(self: Calculator, a: int) -> int:
        """Subtract the offset."""
        return a - self.offset

    bound = tool(types.MethodType(minus, calc))
    assert list(bound.input_schema["properties"]) == ["a"]
    assert run(bound, {"a": 5}) == ToolResult.ok("2")

    module = types.ModuleType("holder")
    module.first = bound  # type: ignore[attr-defined]
    module.other = 3  # type: ignore[attr-defined]
    module.again = bound  # type: ignore[attr-defined]
    module.second = Calculator.negate  # type: ignore[attr-defined]
    assert tools_of(module) == [bound, Calculator.negate]


# -- dynamic tools ---------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def test_dynamic_tool_with_sync_and_async_handlers_with_and_without_ctx() -> None:
    def one(args: Mapping[str, Any]) -> str:
        return args["q"]

    def two(args: Mapping[str, Any], ctx: ToolContext | None) -> str:
        return f"{args['q']}:{ctx is not None}"

    async def three(args: Mapping[str, Any], ctx: ToolContext | None = None) -> dict[str, Any]:
        return {"q": args["q"]}

    made = [dynamic_tool(f"t{i}", "Echo.", SCHEMA, h) for i, h in enumerate((one, two, three))]
    assert all(isinstance(t, Tool) and t.source == "custom" for t in made)
    assert run(made[0], {"q": "a"}).output == "a"
    assert run(made[1], {"q": "a"}, ToolContext()).output == "a:True"
    assert run(made[2], {"q": "a"}).output == '{"q":"a"}'
    assert run(made[0], {}).is_error  # validated against the given schema


def test_dynamic_tool_refuses_bad_parts_and_keeps_the_contract() -> None:
    with pytest.raises(ValueError, match="invalid tool name"):
        dynamic_tool("a b", "d", SCHEMA, print)
    with pytest.raises(ValueError, match='"type": "object"'):
        dynamic_tool("a", "d", {"type": "string"}, print)
    with pytest.raises(ValueError, match="not a valid schema"):
        dynamic_tool("a", "d", {"type": "object", "properties": 3}, print)
    with pytest.raises(TypeError, match="handler must be callable"):
        dynamic_tool("a", "d", SCHEMA, 3)  # type: ignore[arg-type]

    def boom(args: Mapping[str, Any]) -> str:
        raise RuntimeError("bad")

    async def slow(args: Mapping[str, Any]) -> str:
        await asyncio.sleep(10)
        return "late"

    assert run(dynamic_tool("b", "d", SCHEMA, boom), {"q": "x"}).output == "RuntimeError: bad"
    timed = run(dynamic_tool("s", "d", SCHEMA, slow, timeout=0.05), {"q": "x"})
    assert timed.is_error
    assert timed.retryable
    schema = dict(SCHEMA)
    copy_kept = dynamic_tool("c", "d", schema, boom)
    schema["required"] = []
    assert copy_kept.input_schema["required"] == ["q"]
