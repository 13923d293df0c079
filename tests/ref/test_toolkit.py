"""The toolkit: building, duplicate names, routing, filters and listeners."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from toolnexus_ref import BaseTool, ToolContext, ToolResult
from toolnexus_ref.toolkit import MAX_LISTED_NAMES, Decision, DuplicateToolError, ToolCall, Toolkit


class Echo:
    """A duck-typed sync tool: no base class, no protocol import."""

    description = "Echo the arguments back."
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, name: str, source: str = "custom") -> None:
        self.name = name
        self.source = source
        self.seen: list[dict[str, Any]] = []

    def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        self.seen.append(dict(args))
        return ToolResult.ok(f"{self.name}:{sorted(args.items())}")


class AsyncEcho(Echo):
    async def execute(  # type: ignore[override]
        self, args: Mapping[str, Any], ctx: ToolContext | None = None
    ) -> ToolResult:
        self.seen.append(dict(args))
        return ToolResult.ok(f"async {self.name}")


class Add(BaseTool):
    name = "add"
    description = "Add two integers."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    source = "native"

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> int:
        return int(args["a"]) + int(args["b"])


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# -- building ------------------------------------------------------------------------
def test_collection_interface_keeps_order() -> None:
    a, b, c = Echo("alpha"), AsyncEcho("beta"), Add()
    kit = Toolkit([a, b, c])
    assert kit.tools == (a, b, c)
    assert kit.names == ("alpha", "beta", "add")
    assert len(kit) == 3
    assert list(kit) == [a, b, c]
    assert "beta" in kit
    assert "gamma" not in kit
    assert c in kit
    assert Echo("add") not in kit
    assert kit.get("add") is c
    assert kit.get("nope") is None
    assert isinstance(kit.tools, tuple)


def test_a_toolkit_is_not_mistaken_for_one_tool() -> None:
    from toolnexus_conformance._runner import as_tool_list

    kit = Toolkit([Echo("a"), Echo("b")])
    assert not hasattr(kit, "name")
    assert as_tool_list(kit) == list(kit.tools)


def test_toolkits_given_as_tools_are_merged() -> None:
    inner = Toolkit([Echo("a"), Echo("b")])
    kit = Toolkit([inner, Echo("c")])
    assert kit.names == ("a", "b", "c")


def test_duplicate_name_at_build_names_both_tools_and_sources() -> None:
    first, second = Echo("search", source="mcp"), AsyncEcho("search", source="native")
    with pytest.raises(DuplicateToolError) as info:
        Toolkit([first, Echo("other"), second])
    message = str(info.value)
    assert "'search'" in message
    assert "Echo (source 'mcp')" in message
    assert "AsyncEcho (source 'native')" in message
    assert info.value.first is first
    assert info.value.second is second
    assert isinstance(info.value, ValueError)


def test_add_refuses_a_duplicate_and_leaves_the_toolkit_unchanged() -> None:
    kit = Toolkit([Echo("a")])
    with pytest.raises(DuplicateToolError, match="'a'"):
        kit.add(Echo("b"), Echo("a", source="http"))
    assert kit.names == ("a",)
    with pytest.raises(DuplicateToolError, match="'c'"):
        kit.add(Echo("c"), Echo("c"))
    assert list(kit.names) == ["a"]
    kit.add(Echo("b"))
    assert list(kit.names) == ["a", "b"]
    assert kit.remove("a").name == "a"
    assert kit.names == ("b",)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (object(), "no readable 'name'"),
        (type("N", (), {"name": 3, "execute": lambda self, a: None})(), "name of type int"),
        (type("X", (), {"name": "x"})(), "no callable 'execute'"),
    ],
)
def test_objects_that_are_not_tools_are_refused_with_a_reason(bad: object, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        Toolkit([bad])


# -- routing -------------------------------------------------------------------------
def test_execute_routes_by_name_to_sync_async_and_base_tools() -> None:
    kit = Toolkit([Echo("echo"), AsyncEcho("aecho"), Add()])
    assert run(kit.execute("echo", {"x": 1})) == ToolResult.ok("echo:[('x', 1)]")
    assert run(kit.execute("aecho", {})).output == "async aecho"
    assert run(kit.execute("add", {"a": 2, "b": 3})) == ToolResult.ok("5")
    invalid = run(kit.execute("add", {"a": 2}))
    assert invalid.is_error
    assert "'b' is a required property" in invalid.output


def test_unknown_name_lists_close_matches_and_available_names() -> None:
    kit = Toolkit([Echo("get_weather"), Echo("get_time"), Echo("send_mail")])
    result = run(kit.execute("get_wether", {}))
    assert result.is_error
    assert result.metadata["error_type"] == "UnknownTool"
    assert result.retryable is False
    assert "Unknown tool 'get_wether'" in result.output
    assert "Did you mean 'get_weather'" in result.output
    assert "Available tools: get_weather, get_time, send_mail." in result.output


def test_unknown_name_list_is_bounded() -> None:
    kit = Toolkit([Echo(f"tool_{i:03d}") for i in range(MAX_LISTED_NAMES + 7)])
    result = run(kit.execute("zzz", {}))
    assert result.output.endswith("(and 7 more).")
    assert f"tool_{MAX_LISTED_NAMES:03d}" not in result.output
    assert "Did you mean" not in result.output


def test_unknown_name_in_an_empty_toolkit_and_a_non_string_name() -> None:
    assert "No tools are available." in run(Toolkit().execute("x", {})).output
    result = run(Toolkit([Echo("a")]).execute(42, {}))  # type: ignore[arg-type]
    assert result.is_error
    assert "Unknown tool '42'" in result.output


def test_arguments_that_are_not_a_mapping_are_an_error_result() -> None:
    tool = Echo("a")
    result = run(Toolkit([tool]).execute("a", ["x"]))  # type: ignore[arg-type]
    assert result.is_error
    assert "must be a JSON object, got list" in result.output
    assert tool.seen == []
    assert run(Toolkit([tool]).execute("a", None)).is_error is False


def test_a_raising_or_garbage_returning_tool_becomes_an_error_result() -> None:
    class Boom(Echo):
        def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
            raise RuntimeError("kaput")

    class Garbage(Echo):
        def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> Any:
            return 42

    kit = Toolkit([Boom("boom"), Garbage("garbage")])
    boom = run(kit.execute("boom", {}))
    assert boom.is_error
    assert boom.output == "RuntimeError: kaput"
    garbage = run(kit.execute("garbage", {}))
    assert garbage.is_error
    assert "malformed result" in garbage.output


def test_timeout_is_passed_through_as_a_retryable_error() -> None:
    class Slow(Echo):
        async def execute(  # type: ignore[override]
            self, args: Mapping[str, Any], ctx: ToolContext | None = None
        ) -> ToolResult:
            await asyncio.sleep(30)
            return ToolResult.ok("late")

    started = time.monotonic()
    result = run(Toolkit([Slow("slow")]).execute("slow", {}, timeout=0.05))
    assert time.monotonic() - started < 10  # the timeout, not the tool's 30 s
    assert result.is_error
    assert result.retryable is True


def test_cancelling_the_task_propagates_cancelled_error() -> None:
    entered = threading.Event()

    class Hang(Echo):
        async def execute(  # type: ignore[override]
            self, args: Mapping[str, Any], ctx: ToolContext | None = None
        ) -> ToolResult:
            entered.set()
            await asyncio.sleep(30)
            return ToolResult.ok("never")

    async def main() -> None:
        task = asyncio.ensure_future(Toolkit([Hang("hang")]).execute("hang", {}))
        while not entered.is_set():
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 2)

    run(main())


# -- filters -------------------------------------------------------------------------
def test_filters_allow_deny_rewrite_and_respond() -> None:
    tool = Echo("echo")
    seen: list[ToolCall] = []

    def record(call: ToolCall) -> None:
        seen.append(call)

    def policy(call: ToolCall) -> Decision | None:
        if call.args.get("path") == "/etc/passwd":
            return Decision.deny("reading /etc/passwd is not allowed")
        if "limit" not in call.args:
            return Decision.rewrite({**call.args, "limit": 10})
        if call.args.get("cached"):
            return Decision.respond(ToolResult.ok("from cache"))
        return Decision.allow()

    kit = Toolkit([tool], filters=[policy, record])
    denied = run(kit.execute("echo", {"path": "/etc/passwd"}))
    assert denied.is_error
    assert denied.output == ("The call to 'echo' was denied: reading /etc/passwd is not allowed")
    assert denied.metadata["denied"] is True
    assert tool.seen == []
    assert seen == []  # a denial ends the chain

    assert run(kit.execute("echo", {"q": "x"})).is_error is False
    assert tool.seen == [{"q": "x", "limit": 10}]
    assert seen[-1].args == {"q": "x", "limit": 10}  # later filters see the rewrite

    assert run(kit.execute("echo", {"limit": 1, "cached": True})) == ToolResult.ok("from cache")
    assert len(tool.seen) == 1


def test_filter_cannot_mutate_the_callers_arguments() -> None:
    def meddle(call: ToolCall) -> None:
        call.args["injected"] = True

    given = {"a": 1}
    run(Toolkit([Echo("e")], filters=[meddle]).execute("e", given))
    assert given == {"a": 1}


def test_async_filter_is_awaited() -> None:
    async def deny_all(call: ToolCall) -> Decision:
        await asyncio.sleep(0)
        return Decision.deny("maintenance window")

    kit = Toolkit([Echo("e")])
    kit.add_filter(deny_all)
    assert "maintenance window" in run(kit.execute("e", {})).output


@pytest.mark.parametrize(
    ("hook", "expected"),
    [
        (lambda call: 1 / 0, "raised ZeroDivisionError: division by zero"),
        (lambda call: {"x": 1}, "returned dict; a filter returns None or a Decision"),
        (lambda call: Decision.deny(""), "raised TypeError"),
    ],
)
def test_a_broken_filter_fails_closed(hook: Any, expected: str) -> None:
    tool = Echo("e")
    result = run(Toolkit([tool], filters=[hook]).execute("e", {}))
    assert result.is_error
    assert result.metadata["error_type"] == "FilterError"
    assert "The call to 'e' was blocked because filter" in result.output
    assert expected in result.output
    assert tool.seen == []


def test_decision_constructors_check_their_input() -> None:
    with pytest.raises(TypeError, match="mapping"):
        Decision.rewrite(["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ToolResult"):
        Decision.respond("text")  # type: ignore[arg-type]


# -- listeners -----------------------------------------------------------------------
def test_listeners_hear_every_outcome_with_final_args_and_duration() -> None:
    heard: list[tuple[str, Mapping[str, Any], ToolResult, float]] = []

    def listen(name: str, args: Mapping[str, Any], result: ToolResult, duration: float) -> None:
        heard.append((name, args, result, duration))

    async def alisten(name: str, args: Mapping[str, Any], result: ToolResult, d: float) -> None:
        await asyncio.sleep(0)
        heard.append(("async:" + name, args, result, d))

    def rewrite(call: ToolCall) -> Decision | None:
        return Decision.rewrite({"v": 2}) if call.args.get("v") == 1 else None

    kit = Toolkit([Echo("e")], filters=[rewrite], listeners=[listen, alisten])
    ok = run(kit.execute("e", {"v": 1}))
    unknown = run(kit.execute("nope", {"v": 3}))
    assert [h[0] for h in heard] == ["e", "async:e", "nope", "async:nope"]
    assert heard[0][1] == {"v": 2}
    assert heard[0][2] is ok
    assert heard[2][2] is unknown
    assert all(isinstance(h[3], float) and h[3] >= 0 for h in heard)


def test_a_raising_listener_warns_and_does_not_break_the_call() -> None:
    heard: list[str] = []

    def broken(name: str, args: Mapping[str, Any], result: ToolResult, d: float) -> None:
        raise ValueError("listener bug")

    def after(name: str, args: Mapping[str, Any], result: ToolResult, d: float) -> None:
        heard.append(name)

    kit = Toolkit([Echo("e")], listeners=[broken])
    kit.add_listener(after)
    with pytest.warns(RuntimeWarning, match="raised ValueError: listener bug"):
        result = run(kit.execute("e", {}))
    assert result.is_error is False
    assert heard == ["e"]


def test_listener_duration_measures_the_call() -> None:
    durations: list[float] = []

    class Sleepy(Echo):
        def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
            time.sleep(0.05)
            return ToolResult.ok("zz")

    kit = Toolkit([Sleepy("s")], listeners=[lambda n, a, r, d: durations.append(d)])
    run(kit.execute("s", {}))
    assert 0.04 <= durations[0] < 2
