"""A tool that ends its stdio server is one tool's finding; its neighbours never pay for it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _mcp_testing import PYTHON, SERVERS
from _scripted import ScriptedServer
from _sessions import RunningSession, Session, SessionsByKey, early, start_session
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.live._crashes import MAX_REPLAYS, exit_check, exited, find_culprit
from toolnexus_conformance.live._loop import BackgroundLoop
from toolnexus_conformance.live._search import PREFETCH
from toolnexus_conformance.process._sandbox import probe

from toolnexus_ref._mcp_config import ServerConfig
from toolnexus_ref.mcp import open_stdio
from toolnexus_ref.mcp._connection import ServerConnection

#: The live checks whose records used to fail on every tool once the server exited.
LIVE = "TN55,TN60,TN65,TN75"
CULPRIT = "crash_on_input_convert"
SAID = "crash_on_input: fatal: cannot convert"


def _start(path: Path, script: str, *extra: str) -> RunningSession:
    return start_session(
        path,
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{PYTHON} {SERVERS / script}",
        "--toolnexus-examples",
        "6",
        "--toolnexus-report",
        "report.json",
        *extra,
    )


def _rows(session: Session) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = session.report()["results"]
    return rows


#: Seeds the crash run is repeated with. Two in the suite; ``TOOLNEXUS_CRASH_RUNS=10``
#: repeats it as often as the blame's stability is worth proving (each run is a real
#: session with a server restarted mid-run: 10-30 s).
RUNS = int(os.environ.get("TOOLNEXUS_CRASH_RUNS", "2"))


def _crash_run(folder: Path, seed: int) -> RunningSession:
    return _start(
        folder, "crash_on_input.py", "--toolnexus-select", LIVE, "--toolnexus-seed", str(seed)
    )


@early
def crash_runs(folder: Path) -> SessionsByKey[int]:
    """The seeded crash sessions. The suite's two start early, side by side, and run
    beside other tests; a seed past them (``TOOLNEXUS_CRASH_RUNS``) starts when its test
    runs, so no more than two such sessions (each restarting its server mid-run) run at
    once."""
    return SessionsByKey(folder, _crash_run, ahead=range(min(RUNS, 2)))


@early
def dies_at_start_run(folder: Path) -> RunningSession:
    """The session on a server that exits at every start, started early."""
    return _start(folder, "exit_at_start.py")


@pytest.mark.parametrize("seed", range(RUNS))
def test_the_tool_that_ends_its_server_is_named_and_its_neighbours_pass(
    crash_runs: SessionsByKey[int], seed: int
) -> None:
    result = crash_runs.start(seed).result()
    rows = _rows(result)
    shown = "\n".join(f"{r['tool']} {r['check']} {r['outcome']}: {r['message']}" for r in rows)
    failed = [r for r in rows if r["outcome"] == "failed"]
    assert [(r["tool"], r["check"]) for r in failed] == [(CULPRIT, "TN606")], shown
    [finding] = failed
    assert "ended the server 'crash_on_input' (exit status 1)" in finding["message"]
    message = finding["message"]
    assert SAID in message
    assert "(simulated abort)" in message
    # The arguments that end it, shrunk where that still ends a fresh server.
    assert "'unit': 'kelvin'" in message or "'value': -" in message, message
    # Only the lines the crashing call wrote: never a neighbour's.
    assert "called" not in finding["message"]
    # The neighbours were judged on the restarted server, not skipped for the exit.
    for tool in ("crash_on_input_greet", "crash_on_input_count_words", "crash_on_input_upper"):
        mine = {r["check"]: r for r in rows if r["tool"] == tool}
        assert mine["TN651"]["outcome"] == "passed", shown
        # These tools answer at once: no cancel reaches their calls, and TN751 says so.
        assert mine["TN751"]["outcome"] == "skipped", shown
        assert "before it could be cancelled" in mine["TN751"]["message"], shown
    # The culprit's other live checks say why they were not judged.
    others = [r for r in rows if r["tool"] == CULPRIT and r["check"] not in ("TN606", "TN607")]
    assert others
    assert all(r["outcome"] == "skipped" and "TN606" in r["message"] for r in others), shown
    result.stdout.fnmatch_lines([f"*{CULPRIT}::TN606-call-keeps-process*"])


def test_a_server_that_dies_at_every_start_is_one_target_finding(
    dies_at_start_run: RunningSession,
) -> None:
    rows = _rows(dies_at_start_run.result())
    failed = [r for r in rows if r["outcome"] == "failed"]
    assert [(r["tool"], r["check"]) for r in failed] == [("*", "TN851")], rows
    assert "cannot open the database (simulated)" in failed[0]["message"]


@pytest.fixture
def starts(monkeypatch: pytest.MonkeyPatch) -> list[ServerConnection]:
    """Every server process started from now on: each costs a start of the server."""
    started: list[ServerConnection] = []
    real_start = ServerConnection.start

    async def start(self: ServerConnection) -> Any:
        started.append(self)
        return await real_start(self)

    monkeypatch.setattr(ServerConnection, "start", start)
    return started


@pytest.fixture
def dead_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tools called, from now on, on a connection whose server had already exited."""
    called: list[str] = []
    real_call = ServerConnection.call

    async def call(self: ServerConnection, tool: Any, *args: Any, **kwargs: Any) -> Any:
        if exited(self):
            called.append(tool.name)
        return await real_call(self, tool, *args, **kwargs)

    monkeypatch.setattr(ServerConnection, "call", call)
    return called


#: Calls a dead server may still get per tool and round: those begun as it exited
#: (up to ``PREFETCH`` per stream) and the single-call probes, which no search makes.
#: Before, each tool's search went on calling it to its end: about 150 calls.
AFTER_EXIT = 2 * PREFETCH + 4


def test_a_server_that_exits_on_its_own_blames_no_tool(
    loop: BackgroundLoop, starts: list[ServerConnection], dead_calls: list[str]
) -> None:
    source = loop.run(open_stdio([PYTHON, str(SERVERS / "exit_soon.py")], timeout=20), timeout=60)
    try:
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        verdicts = check_subjects(
            subjects,
            "t",
            select=["TN606", "TN651", "TN552"],
            loop=loop,
            options=RunOptions(examples=20),
            target_extra=source.conformance_extra(),
        )
    finally:
        loop.run(source.close(), timeout=30)
    shown = [(v.tool, v.check.code, v.outcome.value, v.message) for v in verdicts]
    assert not [v for v in verdicts if v.outcome is Outcome.FAILED], shown
    assert any("exited" in v.message for v in verdicts if v.outcome is Outcome.SKIPPED), shown
    # The first start, one restart, and at most three replays (the first two start at
    # once): once a fresh server exits with no call in flight, neither the other calls
    # in flight nor a second round's are replayed, and a server given up is not restarted.
    assert len(starts) <= 5, "\n".join(  # as text: pytest cuts a list short
        f"{s.status.phase or '-'}: {s.lived}: {s.status.describe()}" for s in starts
    )
    # Each tool's exploration stopped once the server had exited, in both rounds.
    assert len(dead_calls) <= AFTER_EXIT * 2 * len(subjects), dead_calls


def test_the_server_a_tool_ended_is_called_no_more_and_the_tool_is_named(
    loop: BackgroundLoop, dead_calls: list[str]
) -> None:
    command = [PYTHON, str(SERVERS / "crash_on_input.py")]
    source = loop.run(open_stdio(command, timeout=20), timeout=60)
    try:
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        verdicts = check_subjects(
            subjects,
            "t",
            select=["TN606", "TN651"],
            loop=loop,
            options=RunOptions(examples=6, depth=0, seed=0),
            target_extra=source.conformance_extra(),
        )
    finally:
        loop.run(source.close(), timeout=30)
    shown = [(v.tool, v.check.code, v.outcome.value, v.message) for v in verdicts]
    failed = [(v.tool, v.check.code) for v in verdicts if v.outcome is Outcome.FAILED]
    assert failed == [(CULPRIT, "TN606")], shown
    neighbours = [v for v in verdicts if v.tool != CULPRIT]
    assert neighbours
    assert all(v.outcome is Outcome.PASSED for v in neighbours), shown
    # The exit ended every tool's exploration of the first round, the culprit's too.
    assert len(dead_calls) <= AFTER_EXIT * len(subjects), dead_calls


@contextlib.contextmanager
def _judged_with_a_broken_culprit_search(
    loop: BackgroundLoop, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[list[Any], list[Any]]]:
    """TN651 on the server a tool's input ends, its culprit search raising (a kit bug):
    the subjects and verdicts, while the server is still open."""
    from toolnexus_conformance.live import _explorations

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("simulated kit bug")

    monkeypatch.setattr(_explorations, "find_culprit", broken)
    source = loop.run(open_stdio([PYTHON, str(SERVERS / "crash_on_input.py")]), timeout=60)
    try:
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        verdicts = check_subjects(
            subjects,
            "t",
            select=["TN651"],
            loop=loop,
            options=RunOptions(examples=6, depth=0, seed=0),
            target_extra=source.conformance_extra(),
        )
        yield subjects, verdicts
    finally:
        loop.run(source.close(), timeout=30)


@pytest.mark.parametrize("stops_at_exit", [True, False])
def test_a_kit_failure_while_finding_the_culprit_is_the_kits_not_the_exit(
    loop: BackgroundLoop, monkeypatch: pytest.MonkeyPatch, stops_at_exit: bool
) -> None:
    """Each tool's exploration stopped at the exit, to be made again: if the kit fails
    before it is, its checks fail as the kit's, never skip saying "the server exited".
    So too for a tool whose exploration ended without a call after the exit (its last
    call in flight as the server exited, which a busy machine makes likely; here every
    tool's, its exploration not stopped): never judged on calls the exit failed."""
    from toolnexus_conformance.live import _explorer, _probes

    if not stops_at_exit:
        monkeypatch.setattr(_explorer, "exit_check", lambda subject: None)
        monkeypatch.setattr(_probes, "exit_check", lambda subject: None)
    with _judged_with_a_broken_culprit_search(loop, monkeypatch) as (subjects, verdicts):
        pass
    shown = [(v.tool, v.outcome.value, v.kit_failure, v.message) for v in verdicts]
    assert len(verdicts) == len(subjects), shown
    assert all(v.kit_failure and "simulated kit bug" in v.message for v in verdicts), shown


def test_a_kit_failure_while_finding_the_culprit_leaves_no_restart_running(
    loop: BackgroundLoop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server restarts while the culprit is searched for: a search that fails must
    not leave that restart running past the run, to start a server nobody closes (its
    process outliving the loop it was started on)."""
    restarts: list[str] = []
    real_restart = ServerConnection.restart

    async def restart(self: ServerConnection) -> Any:
        restarts.append("begun")
        await asyncio.sleep(0.3)  # slower than the failed search, as a real start is
        status = await real_restart(self)
        restarts.append("ended")
        return status

    monkeypatch.setattr(ServerConnection, "restart", restart)
    with _judged_with_a_broken_culprit_search(loop, monkeypatch):
        # Read before the server is closed: a restart still running would end meanwhile.
        assert restarts, "the server was not restarted"
        assert restarts.count("begun") == restarts.count("ended"), restarts


class _Status:
    def __init__(self, reason: str) -> None:
        self.state, self.reason = "failed", reason

    def describe(self) -> str:
        return f"srv: failed: {self.reason}"


class _Connection:
    status: Any = None


class _Subject:
    def __init__(self, source: str, connection: _Connection) -> None:
        self.source, self.extra = source, {"connection": connection}


def test_only_an_mcp_server_that_exited_ends_an_exploration() -> None:
    connection = _Connection()
    assert exit_check(_Subject("custom", connection)) is None  # no server of its own
    check = exit_check(_Subject("mcp", connection))
    assert check is not None
    assert check() is None  # not started yet
    connection.status = _Status("timed out after 10s")  # slow, or stopped by us: not gone
    assert check() is None
    connection.status = _Status("server exited (code 2)")
    why = check()
    assert why is not None
    assert why.startswith("the server exited during the exploration (srv: failed: server exited")


class _Uncallable:
    name = "probed"

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        raise AssertionError("a server that exited was called")


@pytest.mark.parametrize("together", [False, True])
def test_the_single_call_probes_call_no_server_that_exited(together: bool) -> None:
    from toolnexus_conformance.live._observation import Observation, Phase
    from toolnexus_conformance.live._probes import Env, make_probes
    from toolnexus_conformance.live._search import Gone

    connection = _Connection()
    connection.status = _Status("server exited (code 1)")
    subject: Any = _Subject("mcp", connection)
    subject.tool = _Uncallable()
    observation = Observation(subject, call_timeout=1.0)
    observation.simplest = {}
    env = Env(subject, RunOptions(), None, None, observation, {}, {})  # type: ignore[arg-type]
    phases = [Phase.CANCEL_BEFORE, Phase.CANCEL_DURING, Phase.DEADLINE]
    with pytest.raises(Gone, match="the server exited during the exploration"):
        asyncio.run(make_probes(env, phases, together=together))
    assert observation.calls == 0


def test_replays_stop_once_a_fresh_server_exits_with_no_call_in_flight(
    loop: BackgroundLoop, starts: list[ServerConnection]
) -> None:
    source = loop.run(open_stdio([PYTHON, str(SERVERS / "exit_soon.py")], timeout=20), timeout=60)
    try:
        [connection] = source.connections.values()
        for _ in range(200):  # it exits half a second after it starts
            if exited(connection):
                break
            loop.run(asyncio.sleep(0.05), timeout=10)
        assert exited(connection), connection.status.describe()
        suspects = [("echo", {"text": word}) for word in ("one", "two", "three", "four")]
        starts.clear()
        blame = loop.run(find_culprit(connection, suspects, 10.0, lived=connection.lived), 120)
    finally:
        loop.run(source.close(), timeout=30)
    # Each replay would start the server again, to see it exit by itself again: the first
    # two start at once, and the one left alone shows it during the third's start at most.
    assert len(starts) <= 3, [s.status.describe() for s in starts]
    assert blame.crash is None
    assert "with no call in flight" in blame.unblamed, blame


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="the exit is stamped from a pidfd")
def test_a_servers_age_at_exit_is_when_it_exited_not_when_a_busy_loop_noticed(
    loop: BackgroundLoop,
) -> None:
    """The culprit search compares ages at exit; on a busy session's loop the exit is
    noticed seconds late, and a server that exits on its own looked older than the
    fresh one that showed it."""

    async def busy(seconds: float) -> None:
        time.sleep(seconds)  # the loop does nothing else meanwhile

    source = loop.run(open_stdio([PYTHON, str(SERVERS / "exit_soon.py")], timeout=20), timeout=60)
    try:
        [connection] = source.connections.values()
        # It exits half a second after it starts; the loop, busy past the bound below,
        # notices that late, so an age taken when noticed cannot pass for one stamped.
        loop.run(busy(2.2), timeout=30)
        for _ in range(200):
            if exited(connection):
                break
            loop.run(asyncio.sleep(0.05), timeout=10)
        assert exited(connection), connection.status.describe()
    finally:
        loop.run(source.close(), timeout=30)
    assert connection.lived is not None
    assert connection.lived < 2.0, connection.lived  # noticed after 2.2 s at least
    # One thread stamps every server's exit, however many a run starts.
    assert [t.name for t in threading.enumerate()].count("toolnexus-exits") == 1


@pytest.mark.parametrize(
    ("script", "timeout", "said", "exits_alone"),
    [
        ("exit_at_start.py", 10.0, "exited while it started, with no call in flight", True),
        # It never answers: any start timeout is met in full.
        ("hang_start.py", 0.5, "did not start: again: failed: timed out after 0.5s", False),
    ],
)
def test_replays_stop_at_a_fresh_server_that_does_not_start(
    loop: BackgroundLoop,
    starts: list[ServerConnection],
    script: str,
    timeout: float,
    said: str,
    exits_alone: bool,
) -> None:
    command = (PYTHON, str(SERVERS / script))
    connection = ServerConnection(ServerConfig("again", "stdio", command=command, timeout=timeout))
    suspects = [("count", {"to": n}) for n in range(3)]
    blame = loop.run(find_culprit(connection, suspects, 10.0, lived=1.0), timeout=60)
    # The first replay and, beside it, the second; never the third.
    assert len(starts) == 2, [s.status.describe() for s in starts]
    assert blame.crash is None
    assert said in blame.unblamed, blame
    # A server that exits on its own before it is ready explains its later exits, at any
    # age (they are not replayed again); one that never started explains none.
    assert blame.explains(0.0) is exits_alone
    assert blame.explains(30.0) is exits_alone


def test_a_tool_that_ends_its_server_whatever_it_is_given_is_reported_with_no_arguments(
    loop: BackgroundLoop, starts: list[ServerConnection]
) -> None:
    """The call in flight at the exit carried keys the tool ignores: they are not the cause."""
    command = (PYTHON, str(SERVERS / "crashy.py"))
    connection = ServerConnection(ServerConfig("crashy", "stdio", command=command, timeout=20))
    suspects = [("crash", {"extra": "x", "a.b": "y"})]
    blame = loop.run(find_culprit(connection, suspects, 10.0, lived=30.0), timeout=120)
    assert blame.crash is not None, blame
    assert blame.crash.args == {}, blame.crash.describe()
    assert blame.crash.exit_code == 3
    # The replay, then one with no arguments and, beside it, one with the first key made
    # simpler; the server had lived long: no control.
    assert len(starts) == 3, [s.status.describe() for s in starts]


def test_more_calls_in_flight_than_replays_are_swept_on_one_server_first(
    loop: BackgroundLoop, starts: list[ServerConnection]
) -> None:
    """Twenty tools of one server explored at once leave more calls in flight than a
    server start each can replay: one fresh server takes them one at a time, and the
    call it ends on, the last here, is replayed alone and blamed."""
    command = (PYTHON, str(SERVERS / "crashy.py"))
    connection = ServerConnection(ServerConfig("crashy", "stdio", command=command, timeout=20))
    innocent = [("fine", {"n": n}) for n in range(2 * MAX_REPLAYS)]
    blame = loop.run(find_culprit(connection, [*innocent, ("crash", {})], 10.0, lived=30.0))
    assert blame.crash is not None, blame
    assert (blame.crash.tool, blame.crash.args) == ("crash", {})
    # The sweep, then the crash's replay alone, and no other suspect's (were it not to
    # end a server alone, the calls in order would be replayed next); without the sweep,
    # the first eight innocent calls would each take a server of their own.
    assert len(starts) == 2, [s.status.describe() for s in starts]


@pytest.mark.parametrize("lived", [0.49, 2.5])
def test_a_server_left_alone_that_exits_during_the_next_replay_ends_the_search(
    lived: float,
) -> None:
    """The first replay's server, left alone, exits no later than the first server did
    while the second replay's call is in flight: that is the server exiting on its own,
    and no third server is started to learn it again (CI, load: five starts for a bound
    of four). The first server's exit noticed seconds late (2.5 s, a busy session's
    loop) is the same: ten starts, in a README run at ``-n 4``."""
    started: list[ScriptedServer] = []

    def fresh() -> ScriptedServer:
        process = ScriptedServer(started)
        if len(started) == 2:  # the first one, alone, exits as the second serves its call
            process.on_call = lambda: started[0].exit(0.45)
        return process

    connection = SimpleNamespace(fresh=fresh, config=SimpleNamespace(name="exit_soon"))
    suspects = [("echo", {"text": word}) for word in ("one", "two", "three", "four")]
    blame = asyncio.run(find_culprit(connection, suspects, 10.0, lived=lived))
    assert len(started) == 2, blame
    assert blame.crash is None
    assert "with no call in flight" in blame.unblamed, blame
    assert blame.explains(lived)


def _exits_after_its_call(started: list[ScriptedServer]) -> SimpleNamespace:
    """A connection whose fresh servers (noted in ``started``) each exit on their own
    0.3 s after their call is answered."""

    def fresh() -> ScriptedServer:
        process = ScriptedServer(started)
        process.on_call = lambda: asyncio.get_running_loop().call_later(0.3, process.exit, 0.3)
        return process

    return SimpleNamespace(fresh=fresh, config=SimpleNamespace(name="exit_soon"))


def test_the_server_left_alone_is_watched_to_the_first_servers_age_before_the_search_ends() -> None:
    """Every replayed call answered and the replays are over, but the server left alone
    is younger than the first server was when it exited: it is watched until that age,
    and its exit there is the server exiting on its own. The search used to end at once,
    showing nothing, and the restarted server's next exit was replayed all over again
    (six starts of a server that exits by itself, for a bound of five, under ``-n 4``)."""
    started: list[ScriptedServer] = []
    # Left alone after its call, it exits 0.3 s later, younger than the first (0.5 s).
    connection = _exits_after_its_call(started)
    blame = asyncio.run(find_culprit(connection, [("echo", {"text": "one"})], 10.0, lived=0.5))
    assert len(started) == 1, blame
    assert blame.crash is None
    assert "with no call in flight" in blame.unblamed, blame
    assert blame.explains(0.5)


def test_the_watch_of_the_server_left_alone_ends_as_it_exits() -> None:
    """The first server lived 5 s; the one left alone exits 0.3 s after its call: the
    search ends there, not once the alone one has reached the first one's age."""
    connection = _exits_after_its_call([])
    began = time.monotonic()
    blame = asyncio.run(find_culprit(connection, [("echo", {"text": "one"})], 10.0, lived=5.0))
    assert time.monotonic() - began < 5.0, "the watch waited for the first server's age"
    assert blame.crash is None
    assert "with no call in flight" in blame.unblamed, blame


def test_replays_start_two_at_once_until_a_server_is_left_alone() -> None:
    """A server start is most of a replay: the first two replays start together, as do
    the culprit's bare call and its first simplification; once a fresh server survived
    its call and is left alone, the replays take turns (its exit may end the search)."""
    started: list[ScriptedServer] = []
    at_once: list[int] = []
    inside = [0]

    class Slow(ScriptedServer):
        async def start(self) -> Any:
            inside[0] += 1
            at_once.append(inside[0])
            await asyncio.sleep(0.05)
            inside[0] -= 1
            return self.status

    def fresh() -> ScriptedServer:
        process = Slow(started)
        if len(started) == 4:  # the fourth call in flight ends its server
            process.on_call = lambda: process.exit(0.1)
        return process

    connection = SimpleNamespace(fresh=fresh, config=SimpleNamespace(name="slow"))
    suspects = [("echo", {"text": word}) for word in ("one", "two", "three", "four")]
    blame = asyncio.run(find_culprit(connection, suspects, 10.0, lived=30.0))
    assert blame.crash is not None, blame
    assert (blame.crash.tool, blame.crash.args) == ("echo", {"text": "four"})
    # Two replays, then two in turn, then the bare call and {"text": ""} together.
    assert at_once == [1, 2, 1, 1, 1, 2]


@pytest.mark.skipif(not probe().available, reason=probe().why or "no sandbox here")
def test_the_replays_that_find_the_culprit_run_in_the_sandbox_too(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """The tool that ends its server writes a file of the user's first: in the sandbox
    the first process cannot, and neither can the fresh ones that replay its call (they
    once started outside it, and wrote it)."""
    users = tmp_path / "users-files"
    users.mkdir()
    result = pytester.runpytest_subprocess(
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{PYTHON} {SERVERS / 'writes_then_crashes.py'} {users}",
        "--toolnexus-select",
        "TN606",
        "-p",
        "no:cacheprovider",
    )
    result.stdout.fnmatch_lines(
        ["*calling 'crash' with {} ended the server 'writes_then_crashes' (exit status 3)*"]
    )
    result.assert_outcomes(passed=1, failed=1)
    assert list(users.iterdir()) == []
