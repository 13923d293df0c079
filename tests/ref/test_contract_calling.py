"""call_tool: sync, async and duck-typed tools all end in a ToolResult, whatever they do."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from toolnexus_ref import ToolContext, ToolResult, call_tool, execute_raw

PROMPT = 5.0  # well under the 30 s a misbehaving tool would take


@dataclass
class ForeignResult:
    """A result from another library: same attributes, different class."""

    output: str
    is_error: bool
    metadata: Mapping[str, Any] | None = None


class Tool:
    """A duck-typed tool whose ``execute`` behaviour is given per test."""

    description = "test tool"
    input_schema: Mapping[str, Any] = {"type": "object"}
    source = "custom"

    def __init__(self, execute: Any, name: str = "t") -> None:
        self.name = name
        self.execute = execute


def call(tool: Any, args: Mapping[str, Any] | None = None, **kw: Any) -> ToolResult:
    return asyncio.run(call_tool(tool, args or {}, **kw))


def test_sync_and_async_execute_with_and_without_ctx() -> None:
    def sync_one(args: Mapping[str, Any]) -> ToolResult:
        return ToolResult.ok(f"sync {args['x']}")

    def sync_two(args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        return ToolResult.ok(f"ctx {ctx is not None}")

    async def async_two(args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        return ToolResult.ok("async")

    assert call(Tool(sync_one), {"x": 1}) == ToolResult.ok("sync 1")
    assert call(Tool(sync_two)).output == "ctx False"
    assert asyncio.run(call_tool(Tool(sync_two), {}, ToolContext())).output == "ctx True"
    assert call(Tool(async_two)) == ToolResult.ok("async")


def test_sync_execute_returning_an_awaitable_is_awaited() -> None:
    async def inner() -> ToolResult:
        return ToolResult.ok("awaited")

    assert call(Tool(lambda args: inner())).output == "awaited"


def test_sync_tools_run_off_the_event_loop_thread() -> None:
    seen: list[str] = []

    def record(args: Mapping[str, Any]) -> ToolResult:
        seen.append(threading.current_thread().name)
        return ToolResult.ok("")

    call(Tool(record, name="probe"))
    assert seen == ["toolnexus-probe"]
    assert threading.current_thread().name != seen[0]


def test_duck_typed_results_are_coerced() -> None:
    result = call(Tool(lambda args: ForeignResult("hi", False, {"k": 1})))
    assert result == ToolResult("hi", False, {"k": 1})
    assert type(result) is ToolResult
    assert call(Tool(lambda args: ForeignResult("bad", True))).is_error


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (None, "got NoneType"),
        ("plain text", "got str"),
        (42, "got int"),
        (ForeignResult(b"bytes", False), "output must be str"),  # type: ignore[arg-type]
        (ForeignResult("x", "yes"), "is_error must be bool"),  # type: ignore[arg-type]
        (ForeignResult("x", False, ["m"]), "metadata must be a mapping"),  # type: ignore[arg-type]
    ],
)
def test_garbage_results_become_malformed_result_errors(value: Any, fragment: str) -> None:
    result = call(Tool(lambda args: value))
    assert result.is_error
    assert result.output.startswith("Tool returned a malformed result:")
    assert fragment in result.output
    assert result.metadata["error_type"] == "TypeError"


@pytest.mark.parametrize("is_async", [False, True])
def test_a_raising_tool_becomes_an_error_with_type_and_message(is_async: bool) -> None:
    def boom(args: Mapping[str, Any]) -> ToolResult:
        raise KeyError("missing")

    async def aboom(args: Mapping[str, Any]) -> ToolResult:
        raise KeyError("missing")

    result = call(Tool(aboom if is_async else boom))
    assert result.is_error
    assert result.output == "KeyError: 'missing'"
    assert result.metadata["error_type"] == "KeyError"


def test_a_tool_without_execute_is_an_error_result() -> None:
    result = call(object())
    assert result.is_error
    assert "AttributeError" in result.output


def test_a_tool_calling_sys_exit_does_not_end_the_host() -> None:
    def leave(args: Mapping[str, Any]) -> ToolResult:
        raise SystemExit(3)

    result = call(Tool(leave))
    assert result.is_error
    assert result.output.startswith("SystemExit")


@pytest.mark.parametrize("is_async", [False, True])
def test_a_hanging_tool_is_bounded_by_timeout_as_a_retryable_error(is_async: bool) -> None:
    release = threading.Event()

    def hang(args: Mapping[str, Any]) -> ToolResult:
        release.wait(30)  # ignores its context on purpose
        return ToolResult.ok("late")

    async def ahang(args: Mapping[str, Any]) -> ToolResult:
        await asyncio.sleep(30)
        return ToolResult.ok("late")

    started = time.monotonic()
    result = call(Tool(ahang if is_async else hang), timeout=0.05)
    elapsed = time.monotonic() - started
    release.set()
    assert elapsed < PROMPT
    assert result.is_error
    assert result.retryable is True
    assert result.metadata["error_type"] == "TimeoutError"
    assert result.metadata["timeout"] == 0.05


def test_async_tool_that_swallows_cancellation_is_abandoned_after_grace() -> None:
    async def stubborn(args: Mapping[str, Any]) -> ToolResult:
        for _ in range(3):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                continue
        return ToolResult.ok("never")

    async def main() -> tuple[ToolResult, float]:
        started = time.monotonic()
        result = await call_tool(Tool(stubborn), {}, timeout=0.05)
        elapsed = time.monotonic() - started
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()  # let asyncio.run finish quickly
        return result, elapsed

    result, elapsed = asyncio.run(main())
    assert result.is_error
    assert result.retryable is True
    assert elapsed < PROMPT


def test_cooperative_cancel_ends_in_an_error_result() -> None:
    ctx = ToolContext()

    async def waits(args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        assert ctx is not None
        await ctx.wait_cancelled()
        return ToolResult.error("stopped by ctx")

    async def main() -> ToolResult:
        task = asyncio.ensure_future(call_tool(Tool(waits), {}, ctx))
        await asyncio.sleep(0.02)
        threading.Thread(target=ctx.cancel, args=("user",)).start()
        return await asyncio.wait_for(task, PROMPT * 5)

    result = asyncio.run(main())
    assert result.is_error


def test_a_context_cancelled_before_the_call_never_runs_the_tool() -> None:
    ran: list[int] = []
    ctx = ToolContext()
    ctx.cancel("too late")

    def record(args: Mapping[str, Any]) -> ToolResult:
        ran.append(1)
        return ToolResult.ok("")

    result = asyncio.run(call_tool(Tool(record), {}, ctx))
    assert ran == []
    assert result.is_error
    assert result.metadata["cancelled"] is True
    assert result.output == "Cancelled: too late"


def test_a_passed_deadline_is_a_timeout_result() -> None:
    ctx = ToolContext(timeout=0)
    result = asyncio.run(call_tool(Tool(lambda args: ToolResult.ok("")), {}, ctx))
    assert result.is_error
    assert result.retryable is True


@pytest.mark.parametrize("is_async", [False, True])
def test_task_cancellation_propagates_cancelled_error(is_async: bool) -> None:
    entered = threading.Event()

    def hang(args: Mapping[str, Any]) -> ToolResult:
        entered.set()
        time.sleep(0.3)
        return ToolResult.ok("late")

    async def ahang(args: Mapping[str, Any]) -> ToolResult:
        entered.set()
        await asyncio.sleep(30)
        return ToolResult.ok("late")

    async def main(ctx: ToolContext | None) -> None:
        task = asyncio.ensure_future(call_tool(Tool(ahang if is_async else hang), {}, ctx))
        while not entered.is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, PROMPT * 5)

    asyncio.run(main(None))
    entered.clear()
    asyncio.run(main(ToolContext(timeout=30)))


def test_execute_raw_returns_what_the_tool_gave() -> None:
    assert asyncio.run(execute_raw(Tool(lambda args: 42), {})) == 42

    def boom(args: Mapping[str, Any]) -> None:
        raise ValueError("raw")

    with pytest.raises(ValueError, match="raw"):
        asyncio.run(execute_raw(Tool(boom), {}))


def test_concurrent_calls_are_kept_apart() -> None:
    async def echo(args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        await asyncio.sleep(0.01 * (5 - int(args["i"]) % 5))
        return ToolResult.ok(str(args["i"]))

    async def main() -> list[ToolResult]:
        tool = Tool(echo)
        return list(await asyncio.gather(*(call_tool(tool, {"i": i}) for i in range(20))))

    assert [r.output for r in asyncio.run(main())] == [str(i) for i in range(20)]


def test_a_methods_context_parameter_is_read_once_and_kept_per_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search calls one tool hundreds of times: its signature is read at the first."""
    import inspect

    from toolnexus_ref._calling import accepts_context

    class WithCtx:
        def execute(self, args: Any, ctx: Any = None) -> str:
            return "with"

    class Without:
        def execute(self, args: Any) -> str:
            return "without"

    reads: list[Any] = []
    real = inspect.signature

    def counted(fn: Any, *rest: Any, **kwargs: Any) -> inspect.Signature:
        reads.append(fn)
        return real(fn, *rest, **kwargs)

    monkeypatch.setattr(inspect, "signature", counted)
    for _ in range(3):
        assert accepts_context(WithCtx().execute)  # a new bound method each time
        assert not accepts_context(Without().execute)
    assert len(reads) == 2

    def replaced(self: Any, args: Any) -> str:
        return "replaced"

    monkeypatch.setattr(WithCtx, "execute", replaced)  # another function: read anew
    assert not accepts_context(WithCtx().execute)
    assert not accepts_context(lambda args: args)  # not a method: read every time
    assert len(reads) == 4
    assert asyncio.run(execute_raw(WithCtx(), {})) == "replaced"
