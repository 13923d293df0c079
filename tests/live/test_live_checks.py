"""Live checks end to end: shrinking, skips, safety, hangs in a separate process."""

from __future__ import annotations

import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _corpus import LIVE, live_entries
from _sessions import RunningSession, early, run_environment
from hypothesis import settings
from hypothesis.database import InMemoryExampleDatabase
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.arguments import edge_args_for

from toolnexus_ref import ToolResult

FAST = RunOptions(execute=ExecuteMode.ALL, examples=10, depth=0, grace=0.3, call_timeout=1.0)
ROOT = Path(__file__).resolve().parents[2]


def _bad(name: str) -> Any:
    return next(e.tool for e in live_entries("bad") if e.tool.name == name)


def _verdicts(
    tool: Any, select: list[str] | tuple[str, ...], options: RunOptions = FAST
) -> dict[str, Verdict]:
    return {v.check.code: v for v in check_tools(tool, select=select, options=options)}


def test_the_failure_is_shrunk_to_the_smallest_arguments() -> None:
    verdict = _verdicts(_bad("raises_when_large"), ["TN601"])["TN601"]
    assert verdict.outcome is Outcome.FAILED
    assert "ValueError: 1001 is too large" in verdict.message
    assert "{'n': 1001}" in verdict.message
    assert verdict.findings[0].sent == {"n": 1001}


def test_a_failure_found_once_is_replayed_first_next_time() -> None:
    seen: list[Any] = []

    class Recorder:
        name = "recorder"
        description = "Raises for large n."
        source = "custom"
        input_schema: ClassVar[dict[str, Any]] = {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        }

        def execute(self, args: Any, ctx: Any = None) -> Any:
            seen.append(args)
            if args["n"] > 1000:
                raise ValueError("large")
            return ToolResult.ok("ok")

    db = InMemoryExampleDatabase()
    settings.register_profile("toolnexus-live-db", settings.get_profile("ci"), database=db)
    previous = settings._current_profile  # type: ignore[attr-defined]
    settings.load_profile("toolnexus-live-db")
    try:
        first = _verdicts(Recorder(), ["TN601"])["TN601"]
        assert first.outcome is Outcome.FAILED
        seen.clear()
        second = _verdicts(Recorder(), ["TN601"])["TN601"]
    finally:
        settings.load_profile(previous or "default")
    assert second.outcome is Outcome.FAILED
    # The simplest arguments are called first, once per tool, then the edge values (each
    # once); then the search replays the stored failure before generating anything.
    edges = [e for e in edge_args_for(Recorder.input_schema, {"n": 0}) if e != {"n": 0}]
    assert seen[0] == {"n": 0}
    assert seen[1 : 1 + len(edges)] == edges
    assert seen[1 + len(edges)] == {"n": 1001}


def test_a_schema_the_generator_cannot_serve_skips_naming_the_keyword() -> None:
    class Unserved:
        name = "unserved"
        description = "d"
        source = "custom"
        input_schema: ClassVar[dict[str, Any]] = {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/missing"}},
        }

        def execute(self, args: Any, ctx: Any = None) -> Any:
            return ToolResult.ok("ok")

    verdict = _verdicts(Unserved(), ["TN601"])["TN601"]
    assert verdict.outcome is Outcome.SKIPPED
    assert "'$ref'" in verdict.message


def test_execute_none_skips_every_live_check_without_calling() -> None:
    class Never:
        name = "never"
        description = "d"
        source = "custom"
        input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

        def execute(self, args: Any, ctx: Any = None) -> Any:
            raise AssertionError("called")

    verdicts = _verdicts(Never(), LIVE, RunOptions(execute=ExecuteMode.NONE))
    live = [v for v in verdicts.values() if v.check.live]
    assert live
    assert all(v.outcome is Outcome.SKIPPED for v in live)
    assert all(
        "--toolnexus-execute none" in v.message for v in live if v.check.sources == frozenset()
    )


def test_auto_skips_an_unmarked_mcp_tool_with_the_reason() -> None:
    class Mcp:
        name = "mcp_delete"
        description = "d"
        source = "mcp"
        input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

        def execute(self, args: Any, ctx: Any = None) -> Any:
            raise AssertionError("called")

    verdict = _verdicts(Mcp(), ["TN601"], RunOptions())["TN601"]
    assert verdict.outcome is Outcome.SKIPPED
    assert "not marked read-only" in verdict.message
    assert "toolnexus_allow" in verdict.message


_HANG = textwrap.dedent(
    """
    import sys, time
    from toolnexus_conformance._options import RunOptions
    from toolnexus_conformance._runner import check_tools
    from toolnexus_ref import ToolResult

    class Hang:
        name = "hang"
        description = "Sleeps for a day."
        source = "custom"
        input_schema = {"type": "object", "properties": {}}

        def execute(self, args, ctx=None):
            time.sleep(86400)
            return ToolResult.ok("never")

    for v in check_tools(Hang(), select=["TN601", "TN702", "TN803"],
                         options=RunOptions(execute="all", grace=0.3, call_timeout=0.5)):
        print(v.check.code, v.outcome.value, v.message)
    print("END")
    """
)


@early
def hanging_tool_run(folder: Path) -> RunningSession:
    """A fresh interpreter judging a tool that sleeps for a day: started early, as it
    mostly waits out the call's timeout and the grace after it."""
    env = {
        **run_environment(),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "conformance")]),
    }
    return RunningSession([sys.executable, "-c", _HANG], folder, timeout=60, env=env)


def test_a_hanging_sync_tool_is_reported_and_the_process_exits(
    hanging_tool_run: RunningSession,
) -> None:
    done = hanging_tool_run.result()
    assert done.ret == 0, done.stderr[-2000:]
    lines = done.stdout.lines
    assert lines[-1] == "END"  # and the process exited although the tool's thread still sleeps
    # A hang is one finding; the checks it keeps from judging say so.
    assert any(
        line.startswith("TN803 failed the call did not return within 0.5s") for line in lines
    )
    assert any(
        line.startswith("TN601 skipped not judged: the tool did not answer") for line in lines
    )
    assert any(line.startswith("TN702 failed") for line in lines)


@pytest.mark.parametrize("name", ["calls_sys_exit", "async_keyboard_interrupt"])
def test_base_exceptions_fail_the_tool_and_later_checks_still_run(name: str) -> None:
    verdicts = _verdicts(_bad(name), ["TN601", "TN501"])
    assert verdicts["TN601"].outcome is Outcome.FAILED
    assert verdicts["TN501"].outcome is Outcome.PASSED


class _LosesTheRace:
    """Polls for the cancel while it works, but its first ``races`` cancels (or passed
    deadlines) arrive as it finishes: its thread, not run in between (a busy machine),
    answers with success."""

    name = "loses_the_race"
    description = "Works a quarter of a second, polling for the cancel."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self, races: int) -> None:
        self.races, self.lost = races, 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        end = time.monotonic() + 0.25
        while time.monotonic() < end:
            if ctx is not None and ctx.is_cancelled() and self.lost >= self.races:
                return ToolResult.error("Cancelled")
            time.sleep(0.01)
        if ctx is not None and ctx.is_cancelled():
            self.lost += 1
        return ToolResult.ok("done")


@pytest.mark.parametrize("code", ["TN704", "TN802"])
@pytest.mark.parametrize(("races", "outcome"), [(2, Outcome.PASSED), (1000, Outcome.FAILED)])
def test_a_success_that_raced_the_cancel_is_a_finding_only_if_it_shows_twice_alone(
    code: str, races: int, outcome: Outcome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lost in the batch and again alone, then honoured: the machine's doing, not the
    tool's. A tool that never honours the cancel (TN704) or its deadline (TN802) is
    still found."""
    from toolnexus_conformance.live import _probes

    # The cancel 50 ms in, however busy the machine (stretched past the tool's quarter
    # of a second, it would come after the tool answered: no race to lose).
    monkeypatch.setattr(_probes, "stretch", lambda: 1.0)
    tool = _LosesTheRace(races)
    verdict = _verdicts(tool, [code])[code]
    assert verdict.outcome is outcome, verdict.message
    assert tool.lost == min(races, 3)
    if code == "TN802" and outcome is Outcome.FAILED:
        # Made again with the deadline halfway through the quarter second the call took:
        # a tool that polls gets twice the time to see it, one that ignores it fails still.
        deadline = float(verdict.message.split("past its ")[1].split("s deadline")[0])
        assert 0.1 <= deadline < 0.2, verdict.message


class _FinishesWithoutLooking:
    """Polls for the cancel every 10 ms for 0.4 s, then takes a last 50 ms step that it
    does not interrupt (a commit): a cancel that comes in that step is answered with
    success. Halfway through a call (0.225 s quiet) is deep in the polling, however
    long a busy machine made the call that sets it."""

    name = "finishes_without_looking"
    description = "Works under half a second, polling for the cancel but at its end."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def execute(self, args: Any, ctx: Any = None) -> Any:
        end = time.monotonic() + 0.4
        while time.monotonic() < end:
            if ctx is not None and ctx.is_cancelled():
                return ToolResult.error("Cancelled")
            time.sleep(0.01)
        time.sleep(0.05)
        return ToolResult.ok("done")


def test_a_cancel_that_a_busy_machine_delays_to_the_end_of_the_work_is_made_again_halfway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine "a moment in" is stretched (here to 0.42 s), which for this tool
    is its last step, every time it is asked; made again halfway through the call, the
    cancel is honoured."""
    from toolnexus_conformance.live import _probes

    monkeypatch.setattr(_probes, "stretch", lambda: 8.4)
    verdict = _verdicts(_FinishesWithoutLooking(), ["TN704"])["TN704"]
    assert verdict.outcome is Outcome.PASSED, verdict.message
