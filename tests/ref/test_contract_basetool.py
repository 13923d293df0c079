"""BaseTool keeps the contract for subclasses: validation, results, exceptions, time."""

from __future__ import annotations

import asyncio
import datetime as dt
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from toolnexus_ref import BaseTool, Tool, ToolAnnotations, ToolContext, ToolResult, annotations_of


class Search(BaseTool):
    name = "search"
    description = "Search things."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1},
            "when": {"type": "string", "format": "date"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    source = "native"
    annotations = ToolAnnotations(read_only=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"query": args["query"], "day": dt.date(2024, 1, 2)}


def execute(tool: BaseTool, args: Any, ctx: ToolContext | None = None) -> ToolResult:
    return asyncio.run(tool.execute(args, ctx))


def test_subclass_meets_the_protocol_and_keeps_annotations() -> None:
    tool = Search()
    assert isinstance(tool, Tool)
    assert annotations_of(tool).read_only is True
    assert annotations_of(object()) == ToolAnnotations()
    assert "search" in repr(tool)


def test_plain_return_values_become_json_text() -> None:
    assert execute(Search(), {"query": "x"}) == ToolResult.ok('{"query":"x","day":"2024-01-02"}')


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({}, "'query' is a required property"),
        ({"query": ""}, "query:"),
        ({"query": "x", "limit": "ten"}, "limit: 'ten' is not of type 'integer'"),
        ({"query": "x", "limit": 0}, "limit:"),
        ({"query": "x", "extra": 1}, "'extra' was unexpected"),
        ({"query": "x", "when": "not a date"}, "when:"),
        (["query"], "arguments must be a JSON object"),
    ],
)
def test_validation_error_names_the_field(args: Any, field: str) -> None:
    ran: list[int] = []

    class Recording(Search):
        def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            ran.append(1)
            return "ran"

    result = execute(Recording(), args)
    assert result.is_error
    assert result.output.startswith("Invalid arguments for 'search':")
    assert field in result.output
    assert result.metadata["error_type"] == "InvalidArguments"
    assert result.retryable is False
    assert ran == []


def test_validation_can_be_turned_off() -> None:
    class Loose(Search):
        validate_arguments = False

        def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            return "ran anyway"

    assert execute(Loose(), {}).output == "ran anyway"


def test_async_run_and_context_injection() -> None:
    class Async(Search):
        async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            return f"ctx {ctx is not None}"

    assert execute(Async(), {"query": "x"}).output == "ctx False"
    assert execute(Async(), {"query": "x"}, ToolContext()).output == "ctx True"


@pytest.mark.parametrize(
    ("returned", "expected"),
    [
        (ToolResult.error("nope", retryable=True), ToolResult("nope", True, {"retryable": True})),
        (None, ToolResult.ok("")),
        ("text", ToolResult.ok("text")),
        ({1, 2}, ToolResult.ok("[1,2]")),
    ],
)
def test_return_values(returned: Any, expected: ToolResult) -> None:
    class Returns(Search):
        def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            return returned

    assert execute(Returns(), {"query": "x"}) == expected


def test_unserialisable_return_and_exceptions_are_error_results() -> None:
    class Opaque(Search):
        def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            return object()

    class Raises(Search):
        def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            raise PermissionError("no access")

    class Exits(Search):
        async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            raise SystemExit("bye")

    opaque = execute(Opaque(), {"query": "x"})
    assert opaque.is_error
    assert "cannot turn object into JSON text" in opaque.output
    assert execute(Raises(), {"query": "x"}).output == "PermissionError: no access"
    assert execute(Exits(), {"query": "x"}).output == "SystemExit: bye"


def test_timeout_is_one_budget_and_a_retryable_error() -> None:
    release = threading.Event()
    budgets: list[float | None] = []

    class Slow(Search):
        timeout = 0.05

        def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
            budgets.append(ctx.remaining() if ctx is not None else None)
            release.wait(30)  # ignores the context: the budget must still hold
            return "late"

    started = time.monotonic()
    result = execute(Slow(), {"query": "x"})
    release.set()
    assert time.monotonic() - started < 10  # the budget, not the tool's 30 s
    assert budgets[0] is not None  # the budget is visible to the tool
    # What is left of it, which on a loaded machine the thread may start too late to see.
    assert 0 <= budgets[0] <= 0.05
    assert result.is_error
    assert result.retryable is True
    assert result.metadata["timeout"] == 0.05


def test_cancelled_context_short_circuits_before_validation() -> None:
    ctx = ToolContext()
    ctx.cancel("host shut down")
    result = execute(Search(), {}, ctx)
    assert result.is_error
    assert result.output == "Cancelled: host shut down"
