"""One exploration per tool: what it calls, how often, and what the checks make of it."""

from __future__ import annotations

import collections
import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import pytest
from _corpus import LIVE
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import applicable_checks, check_tools, plan
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.arguments import edge_args_for
from toolnexus_conformance.live._explorations import Explorations
from toolnexus_conformance.live._explorer import runs_on_loop
from toolnexus_conformance.live._loop import BackgroundLoop

from toolnexus_ref import ToolAnnotations, ToolResult

FAST = RunOptions(execute=ExecuteMode.ALL, examples=10, depth=0, grace=0.3, call_timeout=0.5)
NUMBER: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


class Counted:
    """A well-behaved tool that counts its calls and the threads it was called from."""

    description = "Echoes n."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = NUMBER

    def __init__(self, name: str = "counted", *, read_only: bool = False) -> None:
        self.name = name
        self.calls: list[Any] = []
        self.annotations = ToolAnnotations(read_only=read_only or None)

    def execute(self, args: Any, ctx: Any = None) -> Any:
        self.calls.append(args)
        if not isinstance(args, Mapping) or set(args) != {"n"} or type(args["n"]) is not int:
            return ToolResult.error("'n' must be an integer, and the only argument")
        if ctx is not None and ctx.is_cancelled():
            return ToolResult.error("Cancelled")
        return ToolResult.ok(str(args["n"]))


def _by_code(verdicts: list[Verdict]) -> dict[str, Verdict]:
    return {v.check.code: v for v in verdicts}


def test_every_live_check_is_judged_from_one_exploration() -> None:
    tool = Counted()
    verdicts = check_tools(tool, select=LIVE, options=FAST)
    live = [v for v in verdicts if v.check.live]
    assert len(live) > 15
    assert all(v.outcome is not Outcome.FAILED for v in live), [v.message for v in live]
    # Three streams (each its floor, its depth and the edge values called first) and the
    # timing probes, not one search per check.
    edges = len(edge_args_for(NUMBER, {"n": 0}))
    assert len(tool.calls) <= 3 * (FAST.examples + FAST.depth) + 2 * edges + 8
    # Every live verdict tells the one exploration's cost (what shards are weighed by).
    passed = [v for v in live if v.outcome is Outcome.PASSED]
    assert len({(v.calls, v.seconds) for v in passed}) == 1
    assert all(v.seconds is not None and v.seconds > 0 for v in passed)
    assert all(v.seconds is None for v in verdicts if not v.check.live)


def test_the_simplest_arguments_come_first() -> None:
    tool = Counted()
    check_tools(tool, select=["TN601"], options=FAST)
    assert tool.calls[0] == {"n": 0}


class Hangs:
    description = "Never answers."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    def execute(self, args: Any, ctx: Any = None) -> Any:
        self.calls += 1
        threading.Event().wait(86400)


def test_a_hang_is_one_finding_and_the_checks_it_blocks_say_so() -> None:
    tool = Hangs("hangs")
    verdicts = _by_code(check_tools(tool, select=LIVE, options=FAST))
    assert verdicts["TN803"].outcome is Outcome.FAILED
    assert verdicts["TN803"].severity.value == "warning"
    for code in ("TN501", "TN601", "TN602", "TN603", "TN604"):
        assert verdicts[code].outcome is Outcome.SKIPPED, code
        assert "(TN803)" in verdicts[code].message
    # Ignoring a cancel or a deadline is a fault of its own, found by the short probes.
    assert verdicts["TN702"].outcome is Outcome.FAILED
    assert verdicts["TN801"].outcome is Outcome.FAILED
    # Called once by the streams, then only by the bounded timing probes, and once more
    # alone at the end of the batch, where it still does not answer.
    assert tool.calls <= 5


class StallsOnce(Counted):
    """Well-behaved, but its first call stalls past the bound: a busy machine's doing."""

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not self.calls:
            self.calls.append(args)
            threading.Event().wait(1.0)
            return ToolResult.ok("late")
        return super().execute(args, ctx)


def test_a_call_that_missed_its_bound_once_is_made_again_alone_before_tn803() -> None:
    tool = StallsOnce("stalls_once")
    verdicts = _by_code(check_tools(tool, select=LIVE, options=FAST))
    assert verdicts["TN803"].outcome is Outcome.PASSED, verdicts["TN803"].message
    # The tool was explored again, in full: its other verdicts are judged, not skipped.
    assert verdicts["TN601"].outcome is Outcome.PASSED, verdicts["TN601"].message
    assert len(tool.calls) > 10


def test_hanging_tools_are_waited_out_together() -> None:
    # 1 s: the six first calls begin within milliseconds of each other when the tools
    # are explored at once, so each begins long before the others' bound ends even on
    # a loaded machine; one after another, each would begin a whole bound later.
    options = dataclasses.replace(FAST, call_timeout=1.0)
    contexts: list[Any] = []
    overlapped: list[int] = []

    class Stamped(Hangs):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            if self.calls == 0:  # its first call: how many others are still waiting?
                overlapped.append(sum(1 for c in contexts if not c.is_cancelled()))
                contexts.append(ctx)
            return super().execute(args, ctx)

    tools = [Stamped(f"hangs_{i}") for i in range(6)]
    verdicts = check_tools(tools, select=["TN803"], options=options)
    assert [v.outcome for v in verdicts] == [Outcome.FAILED] * 6
    # A call's context is cancelled when it times out: one after another, every earlier
    # call would have timed out before the next began. Here they wait together.
    assert max(overlapped) >= 1


class InsideAtOnce:
    """The most calls inside the tools sharing it at one time."""

    def __init__(self) -> None:
        self.most = 0
        self._inside = 0
        self._lock = threading.Lock()

    def stay(self, seconds: float) -> None:
        """Be inside for ``seconds``, counted with every other call inside now."""
        with self._lock:
            self._inside += 1
            self.most = max(self.most, self._inside)
        time.sleep(seconds)
        with self._lock:
            self._inside -= 1


def test_tools_of_a_target_are_called_at_once() -> None:
    inside = InsideAtOnce()

    class Slow(Counted):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            inside.stay(0.02)
            return super().execute(args, ctx)

    tools = [Slow(f"slow_{i}") for i in range(4)]
    # No depth: the floor and the edge values keep each tool calling for a score of
    # calls, long enough for tools explored at once to meet inside.
    check_tools(tools, select=["TN601"], options=dataclasses.replace(FAST, depth=0))
    assert inside.most > 1


def test_concurrency_one_explores_one_tool_at_a_time() -> None:
    inside = InsideAtOnce()

    class Slow(Counted):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            inside.stay(0.01)
            return super().execute(args, ctx)

    # A bound no call misses, even on a loaded machine: a call that overran it would run
    # on in its thread beside the next tool's (a thread cannot be stopped), and the
    # calls asked again after it are the next test's. No depth: the floor and the edge
    # values are a score of calls a tool, enough to overlap had the tools run together.
    options = dataclasses.replace(FAST, concurrency=1, call_timeout=10.0, depth=0)
    check_tools([Slow(f"slow_{i}") for i in range(3)], select=["TN601"], options=options)
    assert inside.most == 1


def test_concurrency_one_asks_silent_tools_again_one_at_a_time() -> None:
    """A call that missed its bound is made again once the batch is done; under
    ``concurrency=1`` (tools that must not run together) those calls take turns too."""
    inside = InsideAtOnce()

    class SilentOnce(Counted):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            if not self.calls:  # the first call outlasts its bound, until it is cancelled
                self.calls.append(args)
                end = time.monotonic() + 20
                while not (ctx is not None and ctx.is_cancelled()) and time.monotonic() < end:
                    time.sleep(0.01)
                return ToolResult.ok("late")
            if len(self.calls) == 1:  # asked again: long enough to meet the others' asks
                inside.stay(0.1)
            return super().execute(args, ctx)

    options = dataclasses.replace(FAST, concurrency=1, call_timeout=0.3)
    tools = [SilentOnce(f"silent_{i}") for i in range(3)]
    check_tools(tools, select=["TN601"], options=options)
    assert all(len(tool.calls) > 2 for tool in tools)  # asked again, then explored again
    assert inside.most == 1


def test_the_same_seed_sends_the_same_arguments() -> None:
    # A budget and a call timeout no stall spends: on a busy machine a stall in the
    # edge values' window would skip the rest of them in one run and not the other,
    # and a call that missed its bound would be made again and the tool explored anew
    # (``_again_without_the_rest``): either run's calls would then shift by some.
    options = dataclasses.replace(FAST, seed=1234, search_budget=60.0, call_timeout=30.0)
    first, second = Counted(), Counted()
    check_tools(first, select=["TN601"], options=options)  # one stream: its order is total
    check_tools(second, select=["TN601"], options=options)
    # Past the floor a search stops on time, so one run may end sooner: what both sent
    # is the same, in the same order, and both sent at least the floor.
    shorter = min(len(first.calls), len(second.calls))
    assert shorter >= options.examples
    assert first.calls[:shorter] == second.calls[:shorter]


def test_only_the_phases_the_selected_checks_need_are_made() -> None:
    tool = Counted()
    loop = BackgroundLoop()
    try:
        explorations = Explorations(FAST, loop)
        subject = read_subjects([tool], "t")[0]
        plan(explorations, subject, applicable_checks(["TN701"]), group="t")
        observation = explorations.observation(subject)
    finally:
        loop.close()
    assert observation.streams == {}
    assert observation.cancel_before is not None
    assert len(tool.calls) == 1


def test_a_tool_whose_output_changes_with_time_is_no_concurrency_mix_up() -> None:
    class Clock(Counted):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            if not isinstance(args, Mapping) or not isinstance(args.get("n"), int):
                return ToolResult.error("'n' must be an integer")
            return ToolResult.ok(f"{args['n']} at {time.monotonic_ns()}")

    tool = Clock()
    tool.annotations = ToolAnnotations(read_only=True, idempotent=True)
    verdict = _by_code(check_tools(tool, select=["TN901"], options=FAST))["TN901"]
    # Every answer differs from every other, and none is another call's answer.
    assert verdict.outcome is Outcome.PASSED, verdict.message


@pytest.mark.parametrize(
    ("answer", "fires"),
    [
        ("MISSING_API_KEY is not set", True),
        ("Invalid value for 'n': must be positive", False),  # the tool judging its arguments
    ],
)
def test_every_valid_call_erroring_is_a_warning_unless_the_errors_are_about_arguments(
    answer: str, fires: bool
) -> None:
    class Refuses(Counted):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            return ToolResult.error(answer)

    verdict = _by_code(check_tools(Refuses(), select=["TN605"], options=FAST))["TN605"]
    assert (verdict.outcome is Outcome.FAILED) is fires
    if fires:
        assert answer in verdict.message


@pytest.mark.parametrize(
    ("quotes_the_value", "fires"),
    [
        (True, False),  # the tool judging the value it was given: no path but its own serves
        (False, True),  # the same refusal of every call, quoting only its own setting
    ],
)
def test_every_valid_call_refused_quoting_its_value_is_the_tool_judging_its_arguments(
    quotes_the_value: bool, fires: bool
) -> None:
    """mcp-server-git, started on one repository, refuses every other ``repo_path``."""

    class OneRepository(Counted):
        input_schema: ClassVar[dict[str, Any]] = {
            "type": "object",
            "properties": {"repo_path": {"type": "string"}},
            "required": ["repo_path"],
        }

        def execute(self, args: Any, ctx: Any = None) -> Any:
            self.calls.append(args)
            path = str(args.get("repo_path")) if isinstance(args, Mapping) else ""
            if quotes_the_value:
                return ToolResult.error(
                    f"Repository path '{path}' is outside the allowed repository '/srv/repo'"
                )
            return ToolResult.error("Repository '/srv/repo' is not a git repository")

    tool = OneRepository("git_status")
    verdict = _by_code(check_tools(tool, select=["TN605"], options=FAST))["TN605"]
    assert (verdict.outcome is Outcome.FAILED) is fires, verdict.message
    # Both tools were sent paths of two characters or more, so the verdict is the rule's.
    assert any(len(str(c.get("repo_path", "")).strip()) >= 2 for c in tool.calls)


def test_every_valid_call_refused_a_write_is_not_the_tools_failure() -> None:
    """A read-only file system (the sandbox's project) answering every call is the machine's."""

    class Refused(Counted):
        def execute(self, args: Any, ctx: Any = None) -> Any:
            return ToolResult.error("EROFS: read-only file system, open '/data/memory.jsonl'")

    verdict = _by_code(check_tools(Refused(), select=["TN605"], options=FAST))["TN605"]
    assert verdict.outcome is Outcome.SKIPPED
    assert "the file system refused a write" in verdict.message


@pytest.mark.parametrize("contained", [False, True])
def test_a_tool_called_only_because_its_sandbox_holds_is_not_judged_on_its_errors(
    contained: bool,
) -> None:
    """fetch in a sandbox without network: every call fails to connect, and the tool is fine."""

    class Offline(Counted):
        def __init__(self) -> None:
            super().__init__("fetch")
            self.annotations = ToolAnnotations(read_only=True, open_world=True)

        def execute(self, args: Any, ctx: Any = None) -> Any:
            return ToolResult.error("Failed to fetch https://a.com due to a connection issue")

    options = dataclasses.replace(FAST, contained=frozenset({"tools"} if contained else ()))
    verdict = _by_code(check_tools(Offline(), select=["TN605"], options=options))["TN605"]
    if contained:
        assert verdict.outcome is Outcome.SKIPPED
        assert "open-world" in verdict.message
        assert "--toolnexus-allow fetch" in verdict.message
    else:  # called by the user's choice (execute all), outside a sandbox: judged
        assert verdict.outcome is Outcome.FAILED


def test_http_tools_over_the_network_are_explored_at_once_and_a_mocked_one_takes_turns() -> None:
    """Over httpx's own transport a call only awaits its endpoint, as an MCP call does."""
    import http.server

    from toolnexus_ref.http import HttpTool

    inside: collections.Counter[str] = collections.Counter()
    most = 0  # the most tools with a call in flight at once
    lock = threading.Lock()

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            nonlocal most
            tool = self.path.split("/")[1]
            with lock:
                inside[tool] += 1
                most = max(most, sum(1 for n in inside.values() if n))
            time.sleep(0.02)
            with lock:
                inside[tool] -= 1
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        tools = [
            HttpTool(name=n, description="Reads a page.", method="GET", url=f"{url}/{n}/{{page}}")
            for n in ("left", "right")
        ]
        # A loaded machine's loopback must not make a call look hung (TN803). No depth:
        # the floor and the edge values are calls enough for the two tools to meet.
        options = dataclasses.replace(FAST, call_timeout=30.0, depth=0)
        verdicts = check_tools(tools, select=["TN601"], options=options)
    finally:
        server.shutdown()
        server.server_close()
    assert {v.outcome for v in verdicts} == {Outcome.PASSED}, verdicts
    assert most == 2
    subjects = read_subjects([*tools[:1], _mocked(url)], "t")
    assert [runs_on_loop(s) for s in subjects] == [False, True]


def _mocked(url: str) -> Any:
    import httpx

    from toolnexus_ref.http import HttpTool

    def answer(request: httpx.Request) -> httpx.Response:  # runs on the event loop
        return httpx.Response(200, text="ok")

    return HttpTool(
        name="mocked",
        description="Reads a page.",
        method="GET",
        url=url + "/{page}",
        transport=httpx.MockTransport(answer),
    )


class BlocksItsLoopOnce(Counted):
    """Its first call holds the event loop's thread for 2 s, as a busy machine's
    scheduler can hold it; then it is well-behaved."""

    async def execute(self, args: Any, ctx: Any = None) -> Any:  # type: ignore[override]
        if not self.calls:
            self.calls.append(args)
            time.sleep(2.0)
        return super().execute(args, ctx)


class HoldsTheLoopFromOutside(Counted):
    """A sync tool, called in a thread and never on the loop, whose first call has the
    loop's thread held from outside, as a busy machine's scheduler can hold it."""

    def __init__(self, name: str, owner: BackgroundLoop, hold: Callable[[], object]) -> None:
        super().__init__(name)
        self.owner, self.hold = owner, hold

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if not self.calls:
            self.owner.loop.call_soon_threadsafe(self.hold)
        return super().execute(args, ctx)


@pytest.mark.parametrize("ends", [True, False], ids=["hold-ends", "hold-stays"])
def test_a_loop_held_with_no_tools_code_on_it_blames_no_tool_once_it_runs_again(
    monkeypatch: pytest.MonkeyPatch, ends: bool
) -> None:
    """A loaded machine held the hostile corpus's first loop 1.1 s while only a sync
    tool's thread ran, and that tool was blamed for blocking it. With nothing of a tool
    on the loop, the kit looks whether it runs again within the bound: the hold ends
    here as the kit looks, and the tool is explored again on that loop, taken back; a
    hold that outlasts the look (3 s) is blamed as before."""
    from toolnexus_conformance._runner import check_subjects
    from toolnexus_conformance.live import _explorations

    monkeypatch.setattr(_explorations, "stretch", lambda: 1.0)  # the bound: 0.8 s
    released = threading.Event()
    looked: list[bool] = []
    real = BackgroundLoop.take_back

    def take_back(self: BackgroundLoop, loop: Any, within: float) -> bool:
        if ends:
            released.set()
        looked.append(real(self, loop, within))
        return looked[-1]

    monkeypatch.setattr(BackgroundLoop, "take_back", take_back)
    owner = BackgroundLoop()
    hold = (lambda: released.wait(10)) if ends else (lambda: time.sleep(3.0))
    try:
        tool = HoldsTheLoopFromOutside("held", owner, hold)
        subjects = read_subjects([tool], "t")
        verdicts = check_subjects(subjects, "t", select=LIVE, options=FAST, loop=owner)
    finally:
        released.set()
        owner.close(timeout=0.1)
    assert looked == [ends]
    blamed = [v for v in verdicts if "the event loop ran nothing for" in v.message]
    assert bool(blamed) is not ends, [v.message for v in verdicts]
    if ends:
        assert _by_code(verdicts)["TN501"].outcome is Outcome.PASSED, verdicts
        assert owner.generation == 1  # explored again on the loop it was held on


@pytest.mark.parametrize(("load", "abandoned"), [(1.0, True), (6.0, False)])
def test_a_loop_is_given_up_as_blocked_after_the_call_timeout_stretched_by_the_load(
    monkeypatch: pytest.MonkeyPatch, load: float, abandoned: bool
) -> None:
    """The bound is the call timeout times the load per core, and the grace: 0.8 s on a
    quiet machine, which a hold of 2 s passes; 3.3 s at a load of 6, which it does not."""
    from toolnexus_conformance.live import _explorations

    monkeypatch.setattr(_explorations, "stretch", lambda: load)
    verdicts = check_tools(BlocksItsLoopOnce("blocks_once"), select=LIVE, options=FAST)
    said = [v.message for v in verdicts if "the event loop ran nothing for" in v.message]
    assert bool(said) is abandoned, [v.message for v in verdicts]
