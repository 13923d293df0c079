"""Reads of a tool's attributes are bounded: a property that never returns is a finding, not a hang.

Each hostile property here waits, or spins, on a ``Hold`` released at teardown, so
no abandoned thread outlives its test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._reading import (
    ATTRIBUTE_LIMIT,
    Hung,
    NotRead,
    Raised,
    attribute_limit,
    current_limit,
    read_bounded,
)
from toolnexus_conformance._safety import may_execute
from toolnexus_conformance._subject import (
    AttributeProblem,
    extra_of,
    extras_of,
    read_subject,
    read_subjects,
)
from toolnexus_conformance.corpus import Hold
from toolnexus_conformance.live._explorer import is_async, runs_on_loop

from toolnexus_ref import ToolAnnotations, ToolResult

LIMIT = 0.3
#: Re-armed at each release, so a spinner that has not yet looked still sees its own event set.
HOLD = Hold()


@pytest.fixture(autouse=True)
def _release() -> Iterator[None]:
    yield
    HOLD.release()


def _wait() -> None:
    HOLD.wait()


def _spin() -> None:
    HOLD.spin()  # a busy loop in pure Python


class Tool:
    """A plain tool; subclasses make one attribute hostile."""

    name = "tool"
    description = "Look something up."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    source = "custom"

    def __init__(self, name: str = "tool") -> None:
        self.name = name

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


class WaitingSchema(Tool):
    @property  # type: ignore[override]
    def input_schema(self) -> dict[str, Any]:
        _wait()
        return {}


class SpinningDescription(Tool):
    @property  # type: ignore[override]
    def description(self) -> str:
        _spin()
        return "never"


class WaitingName(Tool):
    def __init__(self) -> None:
        pass

    @property  # type: ignore[override]
    def name(self) -> str:
        _wait()
        return "never"


class WaitingHints(Tool):
    source = "mcp"

    @property
    def annotations(self) -> ToolAnnotations:
        _wait()
        return ToolAnnotations(read_only=True)


class WaitingExecute(Tool):
    @property  # type: ignore[override]
    def execute(self) -> Any:
        _wait()
        return None


class ExitingSource(Tool):
    @property  # type: ignore[override]
    def source(self) -> str:
        raise SystemExit(3)


class WaitingExtra(Tool):
    def conformance_extra(self) -> dict[str, Any]:
        _wait()
        return {"never": True}


class OffersExtra(Tool):
    def conformance_extra(self) -> dict[str, Any]:
        return {"library": "ours"}


def test_a_hanging_read_is_hung_and_the_tools_later_steps_are_not_read() -> None:
    steps = [("a", lambda o, v: o["a"]()), ("b", lambda o, v: o["b"]()), ("c", lambda o, v: 3)]
    objects = [{"a": lambda: 1, "b": lambda: 2}, {"a": lambda: 1, "b": _wait}, {"a": _spin}]
    first, second, third = read_bounded(objects, steps, limit=LIMIT)
    assert first == {"a": 1, "b": 2, "c": 3}
    assert second == {"a": 1, "b": Hung(LIMIT), "c": NotRead("b", LIMIT)}
    assert third == {"a": Hung(LIMIT), "b": NotRead("a", LIMIT), "c": NotRead("a", LIMIT)}
    assert str(second["b"]) == f"did not return within {LIMIT:g}s"
    assert "reading 'b' did not return within 0.3s" in str(second["c"])


def test_reads_after_a_hang_go_on_on_a_fresh_daemon_thread() -> None:
    seen: list[threading.Thread] = []

    def where(o: Any, v: Any) -> Any:
        seen.append(threading.current_thread())
        return o() if callable(o) else o

    before = threading.current_thread()
    rows = read_bounded([1, _wait, 2, _wait, 3], [("v", where)], limit=LIMIT)
    assert [r["v"] for r in rows] == [1, Hung(LIMIT), 2, Hung(LIMIT), 3]
    assert before not in seen
    assert len({id(t) for t in seen}) == 3  # one thread per stretch between hangs
    assert all(t.daemon and t.name == "toolnexus-read" for t in seen)


def test_a_slow_read_that_keeps_making_progress_is_not_cut_short() -> None:
    """The bound is per read: many reads slower than nothing, none near the bound, all count."""
    rows = read_bounded(
        list(range(8)), [("v", lambda o, v: time.sleep(LIMIT / 6) or o)], limit=LIMIT
    )
    assert [r["v"] for r in rows] == list(range(8))


def test_a_read_that_raises_anything_is_raised_with_type_and_message() -> None:
    def boom(o: Any, v: Any) -> Any:
        raise o

    rows = read_bounded([SystemExit(3), KeyboardInterrupt()], [("v", boom)], limit=LIMIT)
    assert rows == [{"v": Raised("SystemExit: 3")}, {"v": Raised("KeyboardInterrupt: ")}]


def test_the_default_bound_is_the_constant_unless_a_block_sets_another() -> None:
    assert current_limit() == ATTRIBUTE_LIMIT == 5.0
    with attribute_limit(LIMIT):
        assert current_limit() == LIMIT
        (row,) = read_bounded([None], [("v", lambda o, v: _wait())])
        assert row == {"v": Hung(LIMIT)}
    assert current_limit() == ATTRIBUTE_LIMIT


def test_the_bound_follows_the_call_timeout_when_that_is_shorter() -> None:
    assert RunOptions().attribute_limit == ATTRIBUTE_LIMIT
    assert RunOptions(call_timeout=0.5).attribute_limit == 0.5


@pytest.mark.parametrize(
    ("tool", "attribute", "not_read"),
    [
        (WaitingName(), "name", ("description", "input_schema", "source")),
        (SpinningDescription(), "description", ("input_schema", "source")),
        (WaitingSchema(), "input_schema", ("source",)),
    ],
    ids=["name-waits", "description-spins", "input_schema-waits"],
)
def test_a_hanging_declaration_attribute_is_a_problem_naming_it_and_the_bound(
    tool: Tool, attribute: str, not_read: tuple[str, ...]
) -> None:
    hostile, neighbour = read_subjects([tool, Tool("neighbour")], "t", limit=LIMIT)
    problem = getattr(hostile, attribute)
    assert problem == AttributeProblem(attribute, "did not return within 0.3s", "hung")
    assert str(problem) == f"reading {attribute!r} did not return within 0.3s"
    for later in not_read:
        value = getattr(hostile, later)
        assert isinstance(value, AttributeProblem)
        assert value.kind == "not-read"
        assert str(value) == (
            f"{later!r} was not read: reading {attribute!r} did not return within 0.3s,"
            " so nothing more was read from this tool"
        )
    # Nothing more was read, so nothing says the tool is safe to call.
    assert hostile.hints is not None
    assert not hostile.hints.readable
    assert may_execute(hostile, RunOptions()) is not None
    assert hostile.on_loop is True
    assert hostile.execute_async is False
    assert (neighbour.name, neighbour.description, neighbour.source) == (
        "neighbour",
        "Look something up.",
        "custom",
    )
    assert neighbour.hints == ToolAnnotations()
    assert hostile.sibling_names[1] == "neighbour"


def test_a_hanging_name_leaves_a_display_id_and_a_sibling_name_that_says_so() -> None:
    hostile, neighbour = read_subjects([WaitingName(), Tool("neighbour")], "t", limit=LIMIT)
    assert hostile.display_name == "tool[0]"
    assert neighbour.sibling_names[0] == hostile.name
    assert isinstance(hostile.name, AttributeProblem)
    assert hostile.name.kind == "hung"


def test_hints_that_never_return_make_the_tool_unsafe_and_say_why() -> None:
    subject = read_subject(WaitingHints(), "t", limit=LIMIT)
    assert subject.hints == ToolAnnotations.cannot_read(
        "reading 'annotations' or a hint attribute did not return within 0.3s"
    )
    reason = may_execute(subject, RunOptions())
    assert reason is not None
    assert "its safety hints cannot be read (reading 'annotations' or a hint attribute" in reason
    assert "did not return within 0.3s" in reason
    assert may_execute(subject, RunOptions(execute=ExecuteMode.ALL)) is None


def test_the_snapshot_is_what_the_safety_gate_and_the_scheduler_read() -> None:
    """After the pass, deciding reads nothing of the tool: a tool changed since is not re-read."""
    tool = Tool()
    subject = read_subject(tool, "t", limit=LIMIT)
    assert subject.hints == ToolAnnotations()
    tool.annotations = ToolAnnotations(destructive=True)  # type: ignore[attr-defined]
    assert may_execute(subject, RunOptions()) is None
    assert runs_on_loop(subject) is False
    assert is_async(subject) is False


def test_an_execute_that_never_returns_is_taken_to_run_on_the_loop() -> None:
    subject = read_subject(WaitingExecute(), "t", limit=LIMIT)
    assert subject.name == "tool"
    assert subject.hints == ToolAnnotations()
    assert runs_on_loop(subject) is True  # it then only takes turns with other async tools
    assert is_async(subject) is False
    assert subject.http_method is None


def test_a_property_raising_system_exit_is_still_a_raised_problem() -> None:
    subject = read_subject(ExitingSource(), "t", limit=LIMIT)
    assert subject.source == AttributeProblem("source", "SystemExit: 3")
    assert str(subject.source) == "reading 'source' raised SystemExit: 3"


def test_conformance_extra_is_bounded_and_offers_nothing_when_it_hangs() -> None:
    assert extra_of(WaitingExtra(), limit=LIMIT) == {}
    assert extras_of([WaitingExtra(), OffersExtra(), Tool()], limit=LIMIT) == [
        {},
        {"library": "ours"},
        {},
    ]
    hostile, neighbour = read_subjects([WaitingExtra(), OffersExtra()], "t", limit=LIMIT)
    assert (hostile.extra, neighbour.extra) == ({}, {"library": "ours"})
    assert hostile.name == "tool"
    assert hostile.hints == ToolAnnotations()


class SlowDescription(Tool):
    """A description that takes 0.6 s to read: as long as a busy machine can make a plain one."""

    @property  # type: ignore[override]
    def description(self) -> str:
        time.sleep(0.6)
        return "slow"


@pytest.mark.parametrize(("load", "hung"), [(1.0, True), (6.0, False)])
def test_the_bound_of_a_read_stretches_by_the_load(
    monkeypatch: pytest.MonkeyPatch, load: float, hung: bool
) -> None:
    """0.3 s on a quiet machine, which 0.6 s passes; 1.8 s at a load of 6, which it does not."""
    from toolnexus_conformance.live import _search

    monkeypatch.setattr(_search, "stretch", lambda: load)
    steps = [("description", lambda tool, _: tool.description)]
    [row] = read_bounded([SlowDescription()], steps, limit=LIMIT)
    assert row == ({"description": Hung(LIMIT)} if hung else {"description": "slow"})
