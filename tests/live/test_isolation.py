"""The worker process itself: what it tells the session, and how it survives its own death."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from _processes import wait_ended
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import applicable_checks, plan, run_check
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.process._forkserver import ForkServer
from toolnexus_conformance.process._frames import Channel, FrameReader
from toolnexus_conformance.process._isolation import (
    REPLAYS,
    IsolatedExplorations,
    TargetWorker,
    ToolJudgement,
    WorkerError,
    _Job,
)
from toolnexus_conformance.process._sandbox import Sandbox
from toolnexus_conformance.process._target import check_target
from toolnexus_conformance.targets import load_target, parse_target

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="isolation needs os.fork")

OPTIONS = RunOptions(execute=ExecuteMode.ALL, examples=3, depth=0, grace=0.3, call_timeout=1.0)
#: For a tool that freezes its process at its first call: the freeze is found after the
#: call timeout, the grace and ``SILENCE_SLACK`` without a word from the process, and
#: nothing else the process does waits on the call timeout.
FREEZES = dataclasses.replace(OPTIONS, call_timeout=0.3)

THREADED = """
import re
import threading

from toolnexus_ref import ToolResult

threading.Thread(target=threading.Event().wait, daemon=True).start()


class Gil:
    name = "gil"
    description = "Holds the GIL with a regular expression that backtracks for ever."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        re.match(r"(a|aa)+$", "a" * 200 + "b")
        return ToolResult.ok("unreachable")


tools = [Gil()]
"""


def test_a_freeze_in_a_target_that_started_threads_says_so(tmp_path: Path) -> None:
    """The fork copies one thread: a finding that could be the missing threads' says it."""
    (tmp_path / "threaded_tools.py").write_text(THREADED)
    verdicts = check_target(
        "threaded_tools:tools", base_dir=tmp_path, select=["TN606"], options=FREEZES
    )
    [verdict] = [v for v in verdicts if v.check.code == "TN606"]
    assert verdict.outcome is Outcome.FAILED
    assert "the tool froze its process" in verdict.message
    assert "started 1 thread(s) at import" in verdict.message


def test_relative_path_entries_reach_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``""`` on sys.path is pytest's working directory, not the worker's scratch."""
    (tmp_path / "here_tools.py").write_text(
        "from toolnexus_ref.examples import toolkit\ntools = toolkit\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    # The worker imports the target, and its tools' processes are forked from it: its
    # load check (TN001) says whether the path reached it, without exploring a tool.
    verdicts = check_target("here_tools:tools", select=["TN001"], options=OPTIONS)
    assert {v.outcome for v in verdicts} == {Outcome.PASSED}


def test_a_relative_base_directory_is_this_processs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "based_tools.py").write_text(
        "from toolnexus_ref.examples import toolkit\ntools = toolkit\n"
    )
    monkeypatch.chdir(tmp_path)
    verdicts = check_target(
        "based_tools:tools", base_dir=Path("project"), select=["TN001"], options=OPTIONS
    )
    assert {v.outcome for v in verdicts} == {Outcome.PASSED}


def test_check_target_warms_nothing_unless_a_selected_check_calls_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm template costs seconds: a run of declaration checks only imports the target."""
    started: list[ForkServer] = []
    start = ForkServer.start

    def counted(self: ForkServer) -> None:
        started.append(self)
        start(self)

    monkeypatch.setattr(ForkServer, "start", counted)
    spec = "toolnexus_ref.examples:toolkit"
    static = check_target(spec, select=["TN001", "TN101"], options=OPTIONS)
    assert static
    assert {v.outcome for v in static} == {Outcome.PASSED}
    assert started == []
    live = check_target(spec, select=["TN606"], options=OPTIONS)
    assert {v.outcome for v in live} == {Outcome.PASSED}
    assert len(started) == 1


def test_a_worker_that_dies_between_tools_is_started_again(
    template: tuple[Sandbox, ForkServer],
) -> None:
    worker = _forked_example(template)
    try:
        worker.load(60)
        loaded = asyncio.run(load_target(parse_target(EXAMPLE)))
        subjects = read_subjects(loaded.tools, EXAMPLE)
        isolated = IsolatedExplorations(OPTIONS, prefetch=False)
        isolated.add(EXAMPLE, worker, subjects)
        [tn606] = [c for c in applicable_checks(select=["TN606"])]
        for subject in subjects:
            plan(isolated, subject, [tn606], group=EXAMPLE)
        first = run_check(tn606, subjects[0], OPTIONS, explorations=isolated)
        assert first.outcome is Outcome.PASSED
        process, group = worker._process, worker._group
        assert process is not None
        assert group is not None  # forked from the template
        os.killpg(group, signal.SIGKILL)  # the worker itself, not a tool's process
        process.wait(10)  # the process holding its sandbox ends as the worker did
        later = [run_check(tn606, s, OPTIONS, explorations=isolated) for s in subjects[1:]]
        assert [v.outcome for v in later] == [Outcome.PASSED] * len(later), [
            v.message for v in later
        ]
    finally:
        worker.close()


def test_a_worker_whose_holder_outlives_it_is_started_again_for_the_next_tool(
    template: tuple[Sandbox, ForkServer],
) -> None:
    """The worker is gone (its socket refuses) before the process the session holds
    ends: on a loaded machine the word of its end passes through three processes, and
    three sends refused at once used to give the tool up unstarted ("died 3 times")."""
    worker = _forked_example(template)
    waiter: int | None = None
    try:
        worker.load(60)
        assert worker._warmed.wait(60)  # it said so before it died: its first tool waits no more
        waiter = worker._group
        assert waiter is not None  # forked from the template
        [forked] = Path(f"/proc/{waiter}/task/{waiter}/children").read_text().split()
        name = asyncio.run(load_target(parse_target(EXAMPLE))).tools[0].name
        # The process that waits for the worker, stopped a second, tells the holder late.
        os.kill(waiter, signal.SIGSTOP)
        os.kill(int(forked), signal.SIGKILL)
        wait_ended(int(forked))  # a zombie: its parent, stopped, cannot reap it
        late = threading.Timer(1.0, os.kill, (waiter, signal.SIGCONT))
        late.start()
        judged = worker.explore(0, name, ["TN601"])
        late.join()
        assert judged.error is None, judged
        assert judged.results["TN601"][0] == "passed", judged
    finally:
        if waiter is not None:
            try:
                os.kill(waiter, signal.SIGCONT)
            except ProcessLookupError:
                pass
        worker.close()


@pytest.fixture(scope="module")
def template() -> Iterator[tuple[Sandbox, ForkServer]]:
    """One warm template for the tests whose workers need not warm themselves, as the
    plugin's do not: each such worker is a fork, not seconds of warm-up."""
    box = Sandbox()
    server = ForkServer(box, OPTIONS)
    server.start()
    try:
        yield box, server
    finally:
        server.close()


EXAMPLE = "toolnexus_ref.examples:toolkit"


def _forked_example(template: tuple[Sandbox, ForkServer]) -> TargetWorker:
    """The example toolkit's worker, forked from the module's template (not loaded yet)."""
    box, server = template
    return TargetWorker(
        EXAMPLE, EXAMPLE, base_dir=None, options=OPTIONS, sandbox=box, forkserver=server
    )


@pytest.fixture
def example_worker(
    template: tuple[Sandbox, ForkServer],
) -> Iterator[tuple[TargetWorker, str]]:
    """The example toolkit's worker, forked and loaded, and the name of its first tool."""
    worker = _forked_example(template)
    try:
        worker.load(60)
        yield worker, asyncio.run(load_target(parse_target(EXAMPLE))).tools[0].name
    finally:
        worker.close()


def test_a_worker_that_dies_as_a_tool_is_sent_to_it_runs_that_tool_when_started_again(
    monkeypatch: pytest.MonkeyPatch, example_worker: tuple[TargetWorker, str]
) -> None:
    """A neighbour kills the worker between this tool's request and its fork: the tool
    never ran, so it is neither blamed nor left to a kit failure; it runs on a new worker."""
    worker, name = example_worker
    send = worker._send
    killed: list[int] = []

    def dies_first(data: bytes, fds: Sequence[int] = ()) -> None:
        process, group = worker._process, worker._group
        if not killed and process is not None:
            killed.append(process.pid)
            # The worker itself: forked from the template, it is the group outside the
            # process the session holds (which ends as the worker did).
            os.killpg(group if group is not None else process.pid, signal.SIGKILL)
            process.wait(10)
        send(data, fds)

    monkeypatch.setattr(worker, "_send", dies_first)
    judged = worker.explore(0, name, ["TN606"])
    assert killed, "the worker was not killed"
    assert judged.error is None, judged.error
    assert judged.ended is None, judged.ended
    assert judged.results["TN606"][0] == "passed"
    assert worker._process is not None
    assert worker._process.pid != killed[0]


def test_a_request_the_worker_refuses_is_sent_again_not_a_kit_failure(
    monkeypatch: pytest.MonkeyPatch, example_worker: tuple[TargetWorker, str]
) -> None:
    """The worker's socket refused the request (it was going): the process the session
    holds may still run (a sandbox's holder ends after the worker), so the send's
    failure itself says the tool never reached it."""
    worker, name = example_worker
    send = worker._send
    refused: list[bytes] = []

    def refuses_first(data: bytes, fds: Sequence[int] = ()) -> None:
        if not refused:
            refused.append(data)
            raise WorkerError("the worker process is gone ([Errno 111] Connection refused)")
        send(data, fds)

    monkeypatch.setattr(worker, "_send", refuses_first)
    judged = worker.explore(0, name, ["TN606"])
    assert refused
    assert judged.error is None, judged.error
    assert judged.results["TN606"][0] == "passed"


def test_arguments_too_large_for_an_explore_request_are_refused_clearly(
    template: tuple[Sandbox, ForkServer],
) -> None:
    from toolnexus_conformance._options import ToolArguments
    from toolnexus_conformance.process._isolation import ARGUMENTS_MAX

    worker = _forked_example(template)
    try:
        worker.load(60)
        name = asyncio.run(load_target(parse_target(EXAMPLE))).tools[0].name
        small = ToolArguments(({"x": "y"},))
        judged = worker.explore(0, name, ["TN606"], small)
        assert judged.error is None
        assert judged.results["TN606"][0] == "passed"
        large = ToolArguments(({"x": "y" * ARGUMENTS_MAX},))
        refused = worker.explore(0, name, ["TN606"], large)
        assert refused.error is not None
        assert "the arguments given for this tool take" in refused.error
        assert worker.explore(0, name, ["TN606"]).error is None  # the worker is still there
    finally:
        worker.close()


SLOW_CHECKS = """
import time

time.sleep({seconds})  # a custom check module slow to import: the warm-up imports it
"""

SLOW_TOOLKIT = """
import time

from toolnexus_ref.examples import toolkit

time.sleep(0.2)
"""


def _namespaces(group: int) -> tuple[str, str]:
    """The PID and mount namespaces of the worker the process ``group`` forked."""
    [worker] = Path(f"/proc/{group}/task/{group}/children").read_text().split()
    return os.readlink(f"/proc/{worker}/ns/pid"), os.readlink(f"/proc/{worker}/ns/mnt")


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_workers_are_forked_from_one_warm_template_each_in_its_own_sandbox(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up runs once, in the template, and never counts against a load timeout."""
    from toolnexus_conformance.process._sandbox import probe

    if mode == "auto" and not probe().available:
        pytest.skip(probe().why)
    # A warm-up of 2.5 s against a load timeout of 2 s: a worker forked from the warm
    # template imports the example toolkit in a twentieth of a second, even at a load
    # of 4 per core, so only a warm-up counted against the timeout makes it miss. The
    # target's own import takes 0.2 s: a load answered within the first look at its
    # deadline would pass however late that deadline was.
    (tmp_path / "slow_checks.py").write_text(SLOW_CHECKS.format(seconds=2.5))
    (tmp_path / "slow_toolkit.py").write_text(SLOW_TOOLKIT)
    monkeypatch.syspath_prepend(str(tmp_path))
    box = Sandbox(mode=mode)
    template = ForkServer(box, OPTIONS, ["slow_checks"])
    template.start()
    spec = "slow_toolkit:toolkit"
    workers = [
        TargetWorker(
            spec, spec, base_dir=tmp_path, options=OPTIONS, sandbox=box, forkserver=template
        )
        for _ in range(2)
    ]
    try:
        for worker in workers:
            assert worker.load(2) == 4  # the 2.5 s warm-up is not the target's load time
            assert worker._forked
            assert worker._group is not None
        assert template.spawned == 2
        assert template.broken is None
        spaces = [_namespaces(w._group) for w in workers if w._group is not None]
        ours = (os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/mnt"))
        if mode == "auto":  # each worker in its own target's sandbox, none in ours
            assert len({*spaces, ours}) == 3, spaces
        else:
            assert spaces == [ours, ours]
        name = asyncio.run(load_target(parse_target(spec))).tools[0].name
        judged = workers[0].explore(0, name, ["TN601", "TN606"])
        assert judged.error is None, judged
        assert judged.results["TN601"][0] == "passed", judged
        assert judged.calls is not None
        assert judged.calls > 0
    finally:
        for worker in workers:
            worker.close()
        template.close()
    assert not template.scratch.exists()
    assert all(not w.scratch.exists() for w in workers)


GATED_CHECKS = """
import time
from pathlib import Path

# A custom check module whose import (the warm-up's) waits until the test opens the gate.
end = time.monotonic() + 60
while not Path({gate!r}).exists() and time.monotonic() < end:
    time.sleep(0.02)
"""


def test_a_fresh_worker_says_loaded_before_it_warms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a template the worker warms itself, after its load, outside the load timeout.

    The warm-up waits for a gate the test opens only once the load has returned: the
    load cannot have waited for it, however fast or slow the machine.
    """
    gate = tmp_path / "gate"
    (tmp_path / "slow_checks.py").write_text(GATED_CHECKS.format(gate=str(gate)))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "toolnexus_ref.examples:toolkit"
    worker = TargetWorker(spec, spec, base_dir=None, options=OPTIONS, modules=["slow_checks"])
    try:
        # The gate, not this bound, shows the load did not wait for the warm-up: 30 s
        # only gives a fresh sandboxed interpreter room to start on a busy machine (it
        # took longer than 4 s once under -n 4 on two cores).
        assert worker.load(30) == 4
        assert not worker._forked
        assert not worker._warmed.is_set()  # still warming: the load did not wait for it
        gate.touch()
        name = asyncio.run(load_target(parse_target(spec))).tools[0].name
        judged = worker.explore(0, name, ["TN606"])  # waits for the warm-up, then runs
        assert judged.error is None, judged
        assert judged.results["TN606"][0] == "passed", judged
        assert worker._warmed.is_set()
    finally:
        worker.close()


def _explored_alone(
    template: tuple[Sandbox, ForkServer], folder: Path, source: str, index: int, name: str
) -> ToolJudgement:
    """Tool ``index`` of the module ``source`` (its ``tools``), explored for TN601 as
    ``name`` by a worker of its own, forked from the module's template."""
    (folder / "mine.py").write_text(source)
    box, server = template
    worker = TargetWorker(
        "mine:tools", "mine", base_dir=folder, options=OPTIONS, sandbox=box, forkserver=server
    )
    try:
        worker.load(20)
        return worker.explore(index, name, ["TN601"])
    finally:
        worker.close()


#: A tool whose name takes 3 s to read, in a bounded read (the kit's reader thread),
#: in any process but the one that loaded it.
SLOW_ELSEWHERE = """
import os
import threading
import time

from toolnexus_ref import ToolResult

READ_IN = {os.getpid()}


class Lookup:
    description = "Answer ok."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    @property
    def name(self):
        bounded = threading.current_thread().name == "toolnexus-read"
        if bounded and os.getpid() not in READ_IN:  # as a starved fork would read it
            READ_IN.add(os.getpid())
            time.sleep(3)
        return "lookup"

    def execute(self, args, ctx=None):
        return ToolResult.ok("ok")


tools = [Lookup()]
"""


def test_a_tools_process_judges_the_declaration_its_worker_read_at_load(
    tmp_path: Path, template: tuple[Sandbox, ForkServer]
) -> None:
    """Read again in the tool's process, forked on a busy machine, a plain attribute
    once missed the one-second bound (a load of 4 per core): the tool was "tool[0]"
    there and the exploration failed as if the target gave other tools each time."""
    judged = _explored_alone(template, tmp_path, SLOW_ELSEWHERE, 0, "lookup")
    assert judged.error is None, judged
    assert judged.results["TN601"][0] == "passed", judged


TWINS = """
from toolnexus_ref import ToolResult


class Lookup:
    name = "lookup"
    description = "Answer ok."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        return ToolResult.ok("ok")


tools = [Lookup(), Lookup()]
"""


def test_the_second_of_two_tools_of_one_name_is_explored_as_itself(
    tmp_path: Path, template: tuple[Sandbox, ForkServer]
) -> None:
    """The session calls it "lookup#2", and so does the declaration its worker read."""
    judged = _explored_alone(template, tmp_path, TWINS, 1, "lookup#2")
    assert judged.error is None, judged
    assert judged.results["TN601"][0] == "passed", judged


STOPS_ITSELF = """
import os
import signal

from toolnexus_ref import ToolResult


class Stops:
    name = "stops"
    description = "Stops its own process (SIGSTOP): it freezes, heartbeat and all."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        os.kill(os.getpid(), signal.SIGSTOP)
        return ToolResult.ok("unreachable")


tools = [Stops()]
"""


def _stopped_descendants() -> list[int]:
    """Processes under this one (any depth) stopped by a signal (state ``T``)."""
    parents: dict[int, int] = {}
    states: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        states[int(entry.name)], parents[int(entry.name)] = fields[0], int(fields[1])
    ours = os.getpid()

    def under(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == ours:
                return True
        return False

    return [pid for pid, state in states.items() if state == "T" and under(pid)]


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_frozen_tool_is_killed_in_its_own_sandbox(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool's process is numbered in its sandbox's PID namespace: the same number out
    here is another process (the user's), so the kill must happen in the sandbox."""
    from toolnexus_conformance.process._sandbox import probe

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    if mode == "auto" and not probe().available:
        pytest.skip(probe().why)
    (tmp_path / "stopping_tools.py").write_text(STOPS_ITSELF)
    monkeypatch.syspath_prepend(str(tmp_path))
    worker = TargetWorker(
        "stopping_tools:tools",
        "stopping_tools:tools",
        base_dir=tmp_path,
        options=FREEZES,
        sandbox=Sandbox(mode=mode),
    )
    try:
        assert worker.load(30) == 1
        judged = worker.explore(0, "stops", ["TN601", "TN606"])
        assert judged.ended is not None, judged
        assert "the tool froze its process" in judged.ended
        assert "it was killed" in judged.ended
        assert _stopped_descendants() == []  # killed, not left stopped until the worker ends
    finally:
        worker.close()


def test_a_suspended_worker_leaves_no_scratch_and_starts_again_with_a_new_one(
    template: tuple[Sandbox, ForkServer],
) -> None:
    """A worker stopped to free its pool slot (or because its target has nothing left to
    explore) keeps no folder: a session killed outright could not remove it."""
    worker = _forked_example(template)
    try:
        assert worker.load(30) == 4
        first = worker.scratch
        assert (first / "declarations.pickle").exists()
        worker.suspend()
        assert not first.exists()
        name = asyncio.run(load_target(parse_target(EXAMPLE))).tools[0].name
        judged = worker.explore(0, name, ["TN601"])  # its next use starts it again
        assert judged.error is None, judged
        assert judged.results["TN601"][0] == "passed", judged
        assert worker.scratch != first
        assert worker.scratch.is_dir()
    finally:
        worker.close()
    assert not worker.scratch.exists()


def test_a_closed_worker_starts_no_process(tmp_path: Path) -> None:
    """A load or restart that comes after the session closed the worker starts nothing
    (nothing would stop it, nor end its sandbox)."""
    worker = TargetWorker("targets:tools", "targets", base_dir=tmp_path, options=OPTIONS)
    worker.close()
    with pytest.raises(WorkerError, match="the worker was closed"):
        worker.load(10.0)
    assert worker._process is None


#: A tool that kills its worker once its three neighbours run, and three neighbours whose
#: replays (each on a worker of its own) meet: each waits for the others' to begin.
MEETS_IN_REPLAY = """
import os
import signal
import time
from pathlib import Path

from toolnexus_ref import ToolResult

MARKS = Path({marks!r})
WAITERS = ("a", "b", "c")


def _until(names, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if all((MARKS / name).exists() for name in names):
            return True
        time.sleep(0.02)
    return False


class Kills:
    name = "kills"
    description = "Kills the worker (its parent) once its three neighbours are running."
    source = "custom"
    input_schema = {{"type": "object", "properties": {{}}, "additionalProperties": False}}

    def execute(self, args, ctx=None):
        _until([f"first-{{w}}" for w in WAITERS], 30)
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(5)
        return ToolResult.ok("unreachable")


class Waits:
    description = "Runs until the worker dies; replayed, waits for the other replays to begin."
    source = "custom"
    input_schema = {{"type": "object", "properties": {{}}, "additionalProperties": False}}

    def __init__(self, name):
        self.name = name

    def execute(self, args, ctx=None):
        first = MARKS / f"first-{{self.name}}"
        if not first.exists():
            first.touch()
            time.sleep(30)  # killed with the worker long before
        (MARKS / f"replay-{{self.name}}").touch()
        if not _until([f"replay-{{w}}" for w in WAITERS], 8):
            os._exit(3)  # replayed one at a time: the others' never began
        return ToolResult.ok("met")


tools = [Kills(), *(Waits(w) for w in WAITERS)]
"""


def test_tools_running_when_their_worker_died_are_replayed_side_by_side(tmp_path: Path) -> None:
    """Each replay is alone on a worker of its own, so they need not wait for each other:
    three that each wait for the others' replays to begin all meet, and the culprit's
    replay still kills its own worker, and is blamed, alone."""
    from concurrent.futures import ThreadPoolExecutor

    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "meeting_tools.py").write_text(MEETS_IN_REPLAY.format(marks=str(marks)))
    options = RunOptions(execute=ExecuteMode.ALL, examples=2, depth=0, grace=0.3, call_timeout=40.0)
    spec = "meeting_tools:tools"
    # Off: the tools meet in a folder of the test's. Forked from a template, as the
    # plugin's workers are: a replica is a fork that imports the target, not a warm-up.
    box = Sandbox(mode="off")
    template = ForkServer(box, options)
    template.start()
    worker = TargetWorker(
        spec, spec, base_dir=tmp_path, options=options, sandbox=box, forkserver=template
    )
    try:
        assert worker.load(30) == 4
        names = ["kills", "a", "b", "c"]
        with ThreadPoolExecutor(4) as pool:
            judged = list(pool.map(lambda i: worker.explore(i, names[i], ["TN606"]), range(4)))
    finally:
        worker.close()
        template.close()
    kills, *waiters = judged
    assert kills.ended is not None, kills
    assert "killed the worker process that ran it" in kills.ended
    for name, judgement in zip("abc", waiters, strict=True):
        assert judgement.error is None, (name, judgement)
        assert judgement.ended is None, (name, judgement)
        assert judgement.results["TN606"][0] == "passed", (name, judgement)
    assert not worker._replicas


def test_replicas_of_every_target_share_one_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each replica is a worker process and an import of its target, outside the pool's
    bound: three targets whose workers died with four tools running each still have at
    most ``REPLAYS`` replicas alive at once, not four each. (No process is started: the
    replica's load and run are stood in for, so only the bound is measured.)"""
    from concurrent.futures import ThreadPoolExecutor

    alive, most = [0], [0]
    count = threading.Lock()
    close = TargetWorker.close

    def load(self: TargetWorker, timeout: float | None = None) -> int:
        with count:
            alive[0] += 1
            most[0] = max(most[0], alive[0])
        time.sleep(0.05)  # long enough for every thread to be waiting on a slot
        return 4

    def closed(self: TargetWorker) -> None:  # only replicas: the targets' own close below
        with count:
            alive[0] -= 1
        close(self)

    monkeypatch.setattr(TargetWorker, "load", load)
    monkeypatch.setattr(TargetWorker, "_started", lambda self, *args: ToolJudgement())
    monkeypatch.setattr(TargetWorker, "_tool_output", lambda self, index, since: None)
    monkeypatch.setattr(TargetWorker, "close", closed)
    workers = [
        TargetWorker(f"target_{n}:tools", f"target {n}", base_dir=None, options=OPTIONS)
        for n in range(3)
    ]
    jobs = [(worker, index) for worker in workers for index in range(4)]
    try:
        with ThreadPoolExecutor(len(jobs)) as pool:
            replayed = list(
                pool.map(lambda job: job[0]._replay(job[1], "t", ["TN606"], None, None), jobs)
            )
    finally:
        for worker in workers:
            close(worker)
    assert all(judgement.error is None for judgement, _ in replayed), replayed
    assert alive[0] == 0
    assert most[0] == REPLAYS


def test_a_kit_process_keeps_hypothesiss_tables_in_the_kit_cache_not_its_scratch() -> None:
    """Left to hypothesis, a process started in a scratch folder builds its unicode tables
    there, seconds of CPU each time, and loses them with the folder: ``None`` (the
    user's profile, which such a process never loads) keeps them in the kit's cache."""
    from toolnexus_conformance.process._sandbox import kit_cache

    options = RunOptions(execute=ExecuteMode.ALL, examples=3)
    assert options.example_database is None
    template = ForkServer(Sandbox(mode="off"), options)
    template.start()
    try:
        assert template.ready(), template.broken
        assert not (template.scratch / ".hypothesis").exists()
        assert list(kit_cache().glob("unicode_data/*/charmap.json.gz"))
    finally:
        template.close()
    spec = "toolnexus_ref.examples:toolkit"
    worker = TargetWorker(spec, spec, base_dir=None, options=options)
    try:
        assert worker.options.example_database is False
    finally:
        worker.close()


#: A tool whose call never returns, in a target that reports the machine loaded
#: (``os.getloadavg``, read by every stretched bound, replaced at import, so in each
#: tool's process forked from the worker too).
HANGS_ON_A_LOADED_MACHINE = """
import os
import time

from toolnexus_ref import ToolResult

LOAD = {load!r}
os.getloadavg = lambda: (LOAD * (os.cpu_count() or 1),) * 3


class Hang:
    name = "hang"
    description = "Sleeps for a minute and ignores its context."
    source = "custom"
    input_schema = {{"type": "object", "properties": {{}}, "additionalProperties": False}}

    def execute(self, args, ctx=None):
        time.sleep(60)
        return ToolResult.ok("never")


tools = [Hang()]
"""


def test_a_hanging_calls_second_chance_on_a_loaded_machine_is_not_a_stuck_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, template: tuple[Sandbox, ForkServer]
) -> None:
    """The call that did not answer is made again with its bound stretched by the load;
    the session watching the tool's process stretches its own bounds as much, or it
    killed that second call as a stuck process (a TN606 on a tool that only hangs)."""
    load = 7.5  # the second call's bound, 0.5 s times this, outlasts the bounds unstretched
    monkeypatch.setattr(os, "getloadavg", lambda: (load * (os.cpu_count() or 1),) * 3)
    (tmp_path / "loaded_tools.py").write_text(HANGS_ON_A_LOADED_MACHINE.format(load=load))
    options = RunOptions(execute=ExecuteMode.ALL, examples=3, depth=0, grace=0.3, call_timeout=0.5)
    box, server = template
    spec = "loaded_tools:tools"
    worker = TargetWorker(
        spec, spec, base_dir=tmp_path, options=options, sandbox=box, forkserver=server
    )
    try:
        assert worker.load(30) == 1
        judged = worker.explore(0, "hang", ["TN606", "TN803"])
    finally:
        worker.close()
    assert judged.ended is None, judged.ended
    assert judged.error is None, judged.error
    # What a quiet machine says of it: the hang is TN803, and TN606 is not judged.
    assert judged.results["TN803"][0] == "failed", judged.results
    assert judged.results["TN606"][:2] == (
        "skipped",
        "not judged: the tool did not answer within 0.5s (TN803)",
    ), judged.results


#: Signals its parent (the worker), then waits to be adopted and says by whom: the
#: moment it would signal whoever that is, were it the tool above.
SIGNALS_ITS_PARENT = """
import os
import signal
import sys
import time

from toolnexus_ref import ToolResult


class SignalsItsParent:
    name = "signals_its_parent"
    description = "Signals the process that started it, then goes on answering."
    source = "custom"
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args, ctx=None):
        parent = os.getppid()
        os.kill(parent, signal.SIGTERM)
        end = time.monotonic() + 5
        while os.getppid() == parent and time.monotonic() < end:
            time.sleep(0.001)
        print(f"adopted by {os.getppid()}", file=sys.stderr, flush=True)
        return ToolResult.ok("still here")


tools = [SignalsItsParent()]
"""


def test_a_tools_process_ends_with_the_worker_it_killed(
    tmp_path: Path, template: tuple[Sandbox, ForkServer]
) -> None:
    """Had it outlived the worker, its next call would signal whoever adopted it: the
    sandbox's first process or, outside one, the machine's init (as root, a
    container's). On Linux it is killed with the worker (``PR_SET_PDEATHSIG``)."""
    judgement = _explored_alone(template, tmp_path, SIGNALS_ITS_PARENT, 0, "signals_its_parent")
    assert judgement.ended is not None, judgement
    assert "killed the worker process that ran it" in judgement.ended
    if sys.platform.startswith("linux"):
        assert "adopted by" not in judgement.ended, judgement.ended


#: Plays a worker whose word that a tool's process started is slow to leave it
#: (``argv[2]``: ``said`` says it after 0.3 s, ``dies`` ends the worker instead):
#: each event is a line of ``argv[1]``, the tool's run included.
SLOW_TO_SAY_STARTED = """
import os
import socket
import sys
import time

from toolnexus_conformance.process import _worker

log, how = sys.argv[1], sys.argv[2]


def note(what):
    with open(log, "a") as out:
        out.write(what + "\\n")


def tool(worker, fd, job, *request):
    note("ran")


class SlowToSay(_worker._Worker):
    def reply(self, *message):
        if message[0] == "started":
            time.sleep(0.3)
            if how == "dies":
                note(f"died {message[2]}")
                os._exit(1)
            note("started")


_worker._child = tool
control, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
ours, theirs = socket.socketpair()
SlowToSay(control).fork((1, 0, "tool", []), [theirs.detach()])
os.waitpid(-1, 0)
"""


@pytest.mark.parametrize("how", ["said", "dies"])
def test_a_tools_process_runs_the_tool_only_once_its_start_is_said(
    tmp_path: Path, how: str
) -> None:
    """A tool that kills its worker the moment it runs could do so before the worker
    said it started: taken for never started, it was sent to the next worker, and
    killed that one too, until its neighbours were given up ("the worker process died
    3 times before it started this tool", seen under load). Its process now waits for
    the word to leave; if the worker ends first, the tool never runs."""
    log = tmp_path / "events.txt"
    script = tmp_path / "slow_worker.py"
    script.write_text(SLOW_TO_SAY_STARTED)
    subprocess.run([sys.executable, str(script), str(log), how], check=False, timeout=30)
    if how == "said":
        assert log.read_text().split() == ["started", "ran"]
        return
    died, child = log.read_text().split()[:2]
    assert died == "died"
    wait_ended(int(child))
    assert log.read_text().split() == ["died", child]


def test_a_tool_that_used_up_its_process_fails_every_check_whichever_way_it_is_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool that uses up its process's memory is found two ways: the exploration says
    so in its results (every check fails), or the kit's own next allocation fails first
    and the process's last word is only "exhausted". That word once made TN606 fail and
    every other check skip as not judged (a serial run of this suite, where the memory
    bomb ran out a moment later than usual): both ways now fail every check, as the
    docs say, with what ran out and the call in flight."""

    def said_exhausted(self: TargetWorker, index: int, *args: object) -> ToolJudgement:
        ours, theirs = socket.socketpair()
        with ours, theirs:
            channel = Channel(theirs)
            channel.send(("calling", "{'size': 8}"))
            channel.send(("exhausted", "it ran out of memory (MemoryError)"))
            return self._watch(_Job(), FrameReader(ours), index)

    monkeypatch.setattr(TargetWorker, "_started", said_exhausted)
    worker = TargetWorker("bomb:tools", "bomb", base_dir=None, options=OPTIONS)
    worker.tools = 1  # as loaded: nothing is started
    loaded = asyncio.run(load_target(parse_target(EXAMPLE)))
    subjects = read_subjects(loaded.tools[:1], "bomb")
    isolated = IsolatedExplorations(OPTIONS, prefetch=False)
    isolated.add("bomb", worker, subjects)
    checks = applicable_checks(select=["TN601", "TN606", "TN701"])
    plan(isolated, subjects[0], checks, group="bomb")
    try:
        verdicts = {
            c.code: run_check(c, subjects[0], OPTIONS, explorations=isolated) for c in checks
        }
    finally:
        isolated.close()
        worker.close()
    assert {code: v.outcome for code, v in verdicts.items()} == {
        "TN601": Outcome.FAILED,
        "TN606": Outcome.FAILED,
        "TN701": Outcome.FAILED,
    }, {code: v.message for code, v in verdicts.items()}
    for verdict in verdicts.values():
        [finding] = verdict.findings
        assert finding.message == "exploring the tool, it ran out of memory (MemoryError)"
        assert finding.sent == "{'size': 8}"
