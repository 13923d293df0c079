"""Live checks of a Python target, made in a worker process the session owns.

In-process, a tool that calls ``os._exit(0)`` ends the session with status 0 (a
green build), a tool that holds the GIL stops every bound, and a tool that
replaces ``time.monotonic`` or removes an environment variable changes the run
for every tool after it. So the live calls of a Python target are made in a
worker process (``_worker``): it imports the target once and forks one process
per tool, which explores the tool and judges its live checks there.

The session watches each tool's process with its own clock, which no tool can
reach. A process that ends before it answers is a finding on its tool (TN606),
with the call that was in flight; one that stops saying it is alive (the GIL
held, every thread stopped) or stops making calls (a call that never returns,
even past its bound, as a frozen clock does) is killed with its process group,
and that is a finding too. The worker and everything it wrote live in one
scratch directory, removed when the session closes the worker.
"""

from __future__ import annotations

import errno
import itertools
import os
import pickle
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._model import Finding, KitFailure, Skip
from .._options import RunOptions, ToolArguments, ToolSettings
from .._subject import ToolSubject
from ..live._explorations import batch_of
from ._forkserver import (
    JOIN_FAILED,
    SPAWN_LIMIT,
    ForkError,
    ForkServer,
    namespaces_of,
    scratch_options,
)
from ._frames import CONTROL_MAX, FrameReader, kill_group
from ._pool import WorkerPool, default_workers
from ._sandbox import Sandbox

__all__ = ["PROCESS_CHECK", "IsolatedExplorations", "TargetWorker", "ToolJudgement"]

#: The check that a tool's process survives its calls: judged only here.
PROCESS_CHECK = "TN606"
#: How long the worker may take to fork a tool's process, and a dead one to be reported,
#: on a quiet machine: stretched by the load per core, as the searches' budgets are.
START_LIMIT = 10.0
#: How long a loaded worker may take to warm before its first tool (the kit's cost).
WARM_LIMIT = 300.0
EXIT_WAIT = 5.0
#: How long to wait for the worker to say how a tool's process ended, once its socket
#: closed (the verdict, TN606, quotes it). The worker reaps it at once and a worker
#: that dies says so at once (its jobs are all let go), so the wait ends early; only
#: a starved machine (load 40 on two cores) takes seconds, and an end left unknown
#: was a kit failure, not a verdict. A process the session killed is not waited for.
REPORT_WAIT = 60.0
#: A tool's process that sends nothing, not even its heartbeat, for the call timeout
#: plus this is frozen (a tool holding the GIL, or stopping every thread).
SILENCE_SLACK = 2.0
#: A call still in flight this long past its bound (and its unwinding) never returns:
#: its process is stuck (a replaced clock stops every bound of the process).
STUCK_SLACK = 2.0
#: Between calls the kit only builds strategies and searches (each bounded by
#: ``BUILD_LIMIT`` of CPU, ``WALL_FACTOR`` times that of wall-clock time on a busy
#: machine); a process making no call for two of those plus this is stuck too.
IDLE_SLACK = 10.0
#: The most times a worker that died (not a tool's process: the worker itself) is restarted.
RESTARTS = 3
#: The most tools replayed at once in this process, across all targets, each on a
#: worker of its own, after their worker died while they ran (``TargetWorker._replay``):
#: each replica costs a worker process and an import of its target, outside the pool's
#: bound, so twenty targets whose workers die together must not start eighty.
REPLAYS = 4
#: The replicas' slots. A replica never replays in turn (it calls ``_started``, not
#: ``explore``), so a holder never waits for another slot: one bound cannot deadlock.
_REPLAY_SLOTS = threading.BoundedSemaphore(REPLAYS)
#: The largest explore request, the user's arguments for the tool included: one
#: datagram on the control socket, read whole by the worker.
ARGUMENTS_MAX = CONTROL_MAX - 1024
#: The tail of a dead process's output quoted in its finding.
OUTPUT_TAIL = 1500

#: The shell around a sandboxed worker: removes its emptied scratch, ends as the worker did.
_KEEPER = (
    '"$@"; s=$?; rmdir -- "$0" 2>/dev/null;'
    ' if [ "$s" -gt 128 ] && [ "$s" -lt 160 ]; then trap - $((s - 128)); kill -$((s - 128)) $$; fi;'
    " exit $s"
)
#: The process a forked worker's sandbox holds (``_forkserver``): it says it is ready,
#: then ends as the worker did, which the process outside, waiting for it, writes here.
_HOLDER = (
    'echo; read s || s=70; case "$s" in ""|*[!0-9]*) s=70;; esac;'
    ' if [ "$s" -gt 128 ] && [ "$s" -lt 160 ]; then trap - $((s - 128)); kill -$((s - 128)) $$; fi;'
    ' exit "$s"'
)
_monotonic = time.monotonic  # the session's clock: no tool runs in this process


def _new_scratch() -> Path:
    """A worker's scratch folder: made with the worker, and again when it restarts."""
    return Path(tempfile.mkdtemp(prefix="toolnexus-worker-"))


class WorkerError(Exception):
    """The worker could not load the target or start; the message says why."""


class WorkerGone(WorkerError):
    """The worker's end of its control socket is closed: the worker process has ended."""


#: What a send to a datagram socket whose peer has closed raises: refused at first, then
#: not connected (a full queue times out instead, and says nothing of the worker's end).
_PEER_CLOSED = (errno.ECONNREFUSED, errno.ENOTCONN, errno.EPIPE, errno.ECONNRESET)


@dataclass(frozen=True, slots=True)
class ToolJudgement:
    """What a tool's process sent back, or why it sent nothing."""

    #: ``{code: (outcome, message, [(message, path, sent, got), ...])}`` from the process.
    results: Mapping[str, tuple[str, str, list[tuple[Any, ...]]]] = field(default_factory=dict)
    #: The tool ended, froze or wedged its process before it answered (TN606).
    ended: str | None = None
    #: The tool used up its process's memory, threads or processes, and the kit ran
    #: out with it before it could say more: a finding on every check, as when the
    #: exploration itself says so (``Observation.exhausted``), never a skip.
    exhausted: str | None = None
    #: The arguments of the call in flight when it did.
    last_call: str | None = None
    #: Our own failure, never held against the tool.
    error: str | None = None
    #: The worker process died while this tool's process ran (how it ended), and how
    #: many tools' processes were running then (one: this tool is the culprit).
    worker_died: str | None = None
    running: int = 0
    #: The calls the tool's exploration made there (``Verdict.calls``), when it answered.
    calls: int | None = None
    #: The worker died before it started the tool's process (another tool killed it):
    #: nothing of this tool ran, and it is sent again to a worker started afresh.
    unstarted: bool = False


@dataclass(slots=True)
class _Job:
    #: What the worker knows the job by.
    key: int = 0
    started: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)
    pid: int | None = None
    status: int | None = None
    error: str | None = None
    #: The worker process (its start count) the job was sent to.
    generation: int = 0
    #: Set when that worker process is gone.
    gone: threading.Event | None = None
    #: That worker process, polled where its listener may not have seen it end yet.
    worker: subprocess.Popen[bytes] | None = None

    def worker_gone(self) -> bool:
        """Whether the job's worker is known to have ended (its listener said so)."""
        return self.gone is not None and self.gone.is_set()

    def worker_died(self) -> bool:
        """Whether the job's worker ended (then waiting, bounded, for its listener to say how).

        A tool's process outlives a worker it killed (it has a group of its own) and may
        answer before the listener, polling, sees the worker gone: its results would
        then hide that it killed the worker.
        """
        if self.gone is None:
            return False
        if not self.gone.is_set():
            if self.worker is None or self.worker.poll() is None:
                return False
            self.gone.wait(REPORT_WAIT)
        return True


class TargetWorker:
    """One worker process for one Python target: load it once, explore each tool apart."""

    def __init__(
        self,
        spec: str,
        label: str,
        *,
        base_dir: Path | None,
        options: RunOptions,
        modules: Sequence[str] = (),
        sandbox: Sandbox | None = None,
        forkserver: ForkServer | None = None,
    ) -> None:
        self.spec, self.label = spec, label
        #: Where the worker is forked from, warm (``None``, or broken: started afresh).
        self.forkserver = forkserver
        #: The group of the process that forked the worker, outside its sandbox.
        self._group: int | None = None
        #: The running worker was forked from the template (so it is warm already).
        self._forked = False
        #: How the worker is started: environment, limits, and the sandbox when there is one.
        self.sandbox = sandbox if sandbox is not None else Sandbox()
        self._lifeline: int | None = None
        # The worker runs in a directory of its own: a relative base means this one's.
        self.base_dir = Path(base_dir).resolve() if base_dir is not None else None
        self.options = scratch_options(options)
        self.modules = list(modules)
        self.scratch = _new_scratch()
        self.tools = 0
        #: Each tool's declaration as the worker read it (``_declared``), and the target's info.
        self.declared: list[dict[str, Any]] = []
        self.info: dict[str, Any] = {}
        #: Threads the worker had after the import: a fork copies only the forking one.
        self.threads = 1
        self._ids = itertools.count()
        self._jobs: dict[int, _Job] = {}
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._loaded = threading.Event()
        self._warmed = threading.Event()
        self._load_reply: tuple[Any, ...] | None = None
        self._gone = threading.Event()
        self._restarts = 0
        self._closed = False
        self._load_timeout = 60.0
        self._generation = 0
        #: The worker process (its start count) whose socket refused a send: ended,
        #: though the process the session holds for it may not have yet.
        self._refused: int | None = None
        #: Warm the worker for its tools' processes at load (``_worker._prepare``): a
        #: worker loaded only for the target's declarations, and stopped, skips it.
        self.prepare = True
        #: Stopped to free its slot in the pool (``suspend``), not dead: its next use
        #: starts it again without counting a restart.
        self._suspended = False
        #: Deaths of the worker blamed on the tool that caused them: not counted as restarts.
        self._blamed = 0
        #: Per worker process that died: how it ended, and the tools' processes then running.
        self._deaths: dict[int, tuple[int | None, int]] = {}
        #: Replicas replaying tools that were running when the worker died (``_replay``).
        self._replicas: set[TargetWorker] = set()

    # -- the worker process --------------------------------------------------------------
    def start(self) -> None:
        if self._closed:  # a late load or restart: nothing would stop this process
            raise WorkerError("the worker was closed: the session is ending")
        if not self.scratch.is_dir():  # removed when the worker was suspended
            self.scratch = _new_scratch()
        server = self.forkserver
        if server is not None and server.broken is None:
            try:
                self._start_forked(server)
                return
            except ForkError:
                pass  # started afresh below: slower, and the same verdicts
        self._start_fresh()

    def _start_fresh(self) -> None:
        self._forked = False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        # The worker watches this pipe: its end of file says the session is gone, even
        # when the worker cannot see its parent (a sandbox's process namespace).
        lifeline, self._lifeline = os.pipe()
        log = (self.scratch / "worker.log").open("wb")
        argv, env = self.sandbox.wrap(
            [
                sys.executable,
                "-m",
                "toolnexus_conformance.process._worker",
                str(theirs.fileno()),
                str(lifeline),
            ],
            self.sandbox.environment({"PWD": str(self.scratch)}),
            self.scratch,
            die_with_parent=False,
            # The target is imported from its base folder, wherever that is.
            readable=[self.base_dir] if self.base_dir is not None else [],
        )
        if self.sandbox.active:
            # Inside, the scratch is a mount point the worker cannot remove: a worker that
            # finds its session gone empties it, and this shell, outside, removes it. It
            # ends as the worker did (bubblewrap reports a signal as 128 + its number).
            argv = ["/bin/sh", "-c", _KEEPER, str(self.scratch), *argv]
        try:
            self._process = subprocess.Popen(
                argv,
                pass_fds=(theirs.fileno(), lifeline),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.scratch,
                env=env,
                start_new_session=True,
            )
        finally:
            theirs.close()
            os.close(lifeline)
            log.close()
        self._listen_to(ours)

    def _listen_to(self, control: socket.socket) -> None:
        assert self._process is not None
        self._control = control
        # Fresh events per worker process: a listener of an earlier one, seeing it
        # gone, must not mark this one gone.
        self._loaded, self._gone = threading.Event(), threading.Event()
        self._warmed = threading.Event()
        self._generation += 1
        threading.Thread(
            target=self._listen,
            args=(control, self._process, self._loaded, self._gone, self._generation),
            name="toolnexus-worker",
            daemon=True,
        ).start()

    def _start_forked(self, server: ForkServer) -> None:
        """The worker forked from the warm template, inside a sandbox of this target's own.

        The sandbox (bubblewrap, with this target's binds) holds a shell that ends as
        the worker does; the template's forked process joins its namespaces and forks
        the worker there (``_forkserver``). ``ForkError`` if any step fails.
        """
        if not server.ready():
            raise ForkError(server.broken or "not warm")
        active = self.sandbox.active
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        lifeline, self._lifeline = os.pipe()
        status_in, status_out = os.pipe()
        info_in, info_out = os.pipe() if active else (-1, -1)
        env = self.sandbox.environment({"PWD": str(self.scratch)})
        argv, env = self.sandbox.wrap(
            ["/bin/sh", "-c", _HOLDER],
            env,
            self.scratch,
            die_with_parent=False,
            readable=[self.base_dir] if self.base_dir is not None else [],
            limited=False,
            info_fd=info_out if active else None,
        )
        if active:
            argv = ["/bin/sh", "-c", _KEEPER, str(self.scratch), *argv]
        opened: list[int] = []
        process: subprocess.Popen[bytes] | None = None
        log = (self.scratch / "worker.log").open("ab")
        try:
            process = subprocess.Popen(
                argv,
                pass_fds=(info_out,) if active else (),
                stdin=status_in,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=self.scratch,
                env=env,
                start_new_session=True,
            )
            os.close(status_in)
            status_in = -1
            if active:
                os.close(info_out)
                info_out = -1
                child = _sandbox_pid(info_in)
            assert process.stdout is not None
            _await_line(process.stdout)
            if active:
                opened = namespaces_of(child)
            self._group = server.spawn(
                env,
                self.scratch,
                worker=theirs.fileno(),
                lifeline=lifeline,
                status=status_out,
                namespaces=opened,
            )
        except (OSError, ValueError, ForkError) as exc:
            if process is not None:
                kill_group(process.pid)
                process.wait()
            ours.close()
            os.close(self._lifeline)
            self._lifeline = None
            raise ForkError(str(exc)) from None
        finally:
            for fd in (status_in, info_in, info_out, status_out, lifeline, *opened):
                if fd >= 0:
                    os.close(fd)
            theirs.close()
            log.close()
            if process is not None and process.stdout is not None:
                process.stdout.close()
        self._process = process
        self._forked = True
        self._listen_to(ours)

    def load(self, timeout: float) -> int:
        """Import the target in the worker; its number of tools, or ``WorkerError`` saying why not."""
        if self._process is None:
            self.start()
        self._load_timeout = timeout
        # The worker runs elsewhere: this process's relative entries ("" is its working
        # directory, where a project's own modules are found) are made absolute.
        path = [str(Path(p or os.curdir).resolve()) for p in sys.path]
        base = str(self.base_dir) if self.base_dir is not None else None
        message = (
            "load",
            self.spec,
            self.label,
            base,
            path,
            self.options,
            self.modules,
            self.prepare and not self._forked,  # forked: warm already
        )
        self._send(pickle.dumps(message))
        end = _monotonic() + timeout
        while not self._loaded.wait(0.05):
            if self._gone.is_set() or _monotonic() > end:
                timed_out = not self._gone.is_set()
                status = self._stop_process()
                if self._forked and JOIN_FAILED in self._output() and self.forkserver:
                    # Our failure, not the target's: fork no more, start this one afresh.
                    self.forkserver.broken = self._output().strip()
                    self._start_fresh()
                    return self.load(timeout)
                if timed_out:
                    raise WorkerError(
                        f"importing {self.spec!r} took longer than {timeout:g}s in a worker"
                        f" process{self._output()}"
                    )
                raise WorkerError(
                    f"importing {self.spec!r} ended the process that imported it"
                    f" ({_ending(status)}){self._output()}"
                )
        reply = self._load_reply or ("load-error", "no answer")
        if reply[0] != "loaded":
            self._stop_process()
            raise WorkerError(str(reply[1]))
        self.tools = int(reply[1])
        self.threads = int(reply[2]) if len(reply) > 2 else 1
        if len(reply) > 3:
            self._read_declarations(str(reply[3]))
        return self.tools

    def _read_declarations(self, path: str) -> None:
        from ._declared import loads

        try:
            self.declared, self.info = loads(Path(path).read_bytes())
        except Exception as exc:
            self._stop_process()
            raise WorkerError(
                f"the worker's declarations of {self.spec!r} cannot be read: {exc}"
            ) from None
        if len(self.declared) != self.tools:
            self._stop_process()
            raise WorkerError(
                f"the worker declared {len(self.declared)} tools of {self.spec!r} but holds"
                f" {self.tools}"
            )

    def subjects(self, target: str | None = None) -> list[ToolSubject]:
        """The tools as the worker read their declarations: plain data, no code of the target."""
        from ._declared import subjects_from

        return subjects_from(self.declared, target or self.label)

    def _send(self, data: bytes, fds: Sequence[int] = ()) -> None:
        control = self._control
        if control is None:
            raise WorkerError("the worker process is not running")
        try:
            socket.send_fds(control, [data], list(fds))
        except OSError as exc:
            kind = WorkerGone if exc.errno in _PEER_CLOSED else WorkerError
            raise kind(f"the worker process is gone ({exc})") from None

    def _listen(
        self,
        control: socket.socket,
        process: subprocess.Popen[bytes],
        loaded: threading.Event,
        gone: threading.Event,
        generation: int,
    ) -> None:
        # A datagram socket has no end of file: a worker that died is seen by polling it.
        control.settimeout(0.1)
        while True:
            try:
                data = control.recv(CONTROL_MAX)
            except TimeoutError:
                if process.poll() is None:
                    continue
                data = b""
            except OSError:
                data = b""
            if not data:
                break
            message = pickle.loads(data)
            kind = message[0]
            if kind in ("loaded", "load-error"):
                self._load_reply = message
                loaded.set()
                continue
            if kind == "warm":
                self._warmed.set()
                continue
            job = self._jobs.get(message[1])
            if job is None:
                continue
            if kind == "started":
                job.pid = message[2]
                job.started.set()
            elif kind == "exited":
                job.status = message[2]
                job.exited.set()
            elif kind == "fork-error":
                job.error = message[2]
                job.started.set()
                job.exited.set()
        jobs = [job for job in list(self._jobs.values()) if job.generation == generation]
        running = sum(1 for job in jobs if job.pid is not None and not job.exited.is_set())
        self._deaths[generation] = (process.poll(), running)
        # Gone first: a tool's watcher woken by its job's end reads ``gone`` to tell the
        # worker's death (the tool's process went with it) from the tool's own end.
        gone.set()
        for job in jobs:  # nobody will say how they ended now
            job.started.set()
            job.exited.set()

    def _ensure(self) -> None:
        """A worker that died (not a tool's process: the worker) is started and loaded again."""
        with self._lock:
            if self._closed:
                raise WorkerError("the worker was closed")
            alive = self._process is not None and self._process.poll() is None
            refused = self._refused == self._generation
            if alive and not self._gone.is_set() and not refused:
                return
            if alive and refused:
                # The worker ended, but the process the session holds for it (a forked
                # worker's holder, told by the process that waited for the worker) ends
                # a moment later, which a loaded machine stretches to seconds. Waited
                # for, bounded, so that its listener says how the worker ended; ended
                # by ``_stop_process`` past that. Restarting only once it had ended
                # used to spend the restarts on sends refused at once, and give the
                # next tool up unstarted ("died 3 times").
                from ..live._search import stretch

                self._gone.wait(EXIT_WAIT * stretch())
            if not self._suspended:
                if self._restarts - self._blamed >= RESTARTS:
                    raise WorkerError(f"the worker process died {RESTARTS} times; not restarted")
                self._restarts += 1
            self._suspended = False
            self.prepare = True
            self._stop_process()
            self.start()
            self.load(self._load_timeout)

    def suspend(self) -> None:
        """Stop the worker process to free its slot in the pool; its next use starts it again.

        Its scratch goes with it, made afresh at the next start: nothing reads a stopped
        worker's files, and a session killed outright (SIGKILL) could not remove them
        (a running worker removes its own when it finds its session gone). A run of
        many targets would otherwise keep one folder per target until it ends.
        """
        with self._lock:
            if self._closed or self._process is None:
                return
            self._suspended = True
            try:
                self._send(pickle.dumps(("stop",)))
            except WorkerError:
                pass
            self._stop_process()
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _stop_process(self) -> int | None:
        process, self._process = self._process, None
        control, self._control = self._control, None
        if control is not None:
            control.close()
        lifeline, self._lifeline = self._lifeline, None
        if lifeline is not None:
            os.close(lifeline)
        group, self._group = self._group, None
        if group is not None:
            kill_group(group)  # the forked worker, and the process that waits for it
        if process is None:
            return None
        kill_group(process.pid)
        try:
            return process.wait(EXIT_WAIT)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was ignored?
            return None

    def _output(self) -> str:
        try:
            text = (self.scratch / "worker.log").read_bytes()[-OUTPUT_TAIL:]
        except OSError:
            return ""
        shown = text.decode("utf-8", "replace").strip()
        return f"; its output ends:\n{shown}" if shown else ""

    def close(self) -> None:
        """Stop the worker and every tool process still running; remove its scratch."""
        with self._lock:
            self._closed = True
            if self._control is not None:
                try:
                    self._send(pickle.dumps(("stop",)))
                except WorkerError:
                    pass
            for job in list(self._jobs.values()):
                if not job.exited.is_set():
                    self._kill_tool(job)
            self._stop_process()
            replicas = list(self._replicas)
        for replica in replicas:
            replica.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- one tool -------------------------------------------------------------------------
    def explore(
        self,
        index: int,
        name: str,
        codes: Sequence[str],
        arguments: ToolArguments | None = None,
        settings: ToolSettings | None = None,
    ) -> ToolJudgement:
        """Explore tool ``index`` in a process of its own and judge ``codes`` there. Never raises.

        A tool that kills the worker (its parent) kills every tool's process running
        in it. The tool whose process alone was running then is the culprit; when
        several were, each is explored again alone, on a worker of its own
        (``_replay``), and the one whose run kills that worker is. Those replays run
        side by side, and beside this worker's other tools: one at a time, a culprit
        among slow neighbours made every one of them wait for all the others.

        ``arguments`` are the user's for this tool, known only after the worker loaded
        (a conftest hook answers at collection): they travel with the request, and
        replace the load-time options' in the tool's process. ``None`` keeps those.
        ``settings`` are the user's for this tool (``RunOptions.settings_for``): its
        call timeout bounds its calls here and there, its ``call`` decides there.
        """
        judgement = self._started(index, name, codes, arguments, settings)
        output: str | None = None
        if judgement.worker_died is not None and judgement.running > 1:
            judgement, output = self._replay(index, name, codes, arguments, settings)
        if judgement.worker_died is None:
            return judgement
        self._blamed += 1
        if output is None:
            output = self._tool_output(index, None)
        return ToolJudgement(
            ended=f"the tool killed the worker process that ran it ({judgement.worker_died}):"
            " a tool's process must never signal its parent; its process was killed with it"
            f"{output}",
            last_call=judgement.last_call,
        )

    def _started(
        self,
        index: int,
        name: str,
        codes: Sequence[str],
        arguments: ToolArguments | None,
        settings: ToolSettings | None,
    ) -> ToolJudgement:
        """Sent again while the worker dies before it starts the tool's process.

        A neighbour that kills the worker (TN606) can do it between this tool's
        request and its fork: the tool never ran, so neither blame nor a kit
        failure is due. Bounded by the worker's restarts (``_ensure`` refuses past
        ``RESTARTS``).
        """
        for _ in range(RESTARTS):
            judgement = self._explore_once(index, name, codes, arguments, settings)
            if not judgement.unstarted:
                return judgement
        return ToolJudgement(
            error=f"the worker process died {RESTARTS} times before it started this tool"
        )

    def _replay(
        self,
        index: int,
        name: str,
        codes: Sequence[str],
        arguments: ToolArguments | None,
        settings: ToolSettings | None,
    ) -> tuple[ToolJudgement, str | None]:
        """The tool explored again on a worker of its own, its only tool: its verdict alone.

        The replica is this worker's twin (target, options, sandbox, template), loaded
        afresh and closed after; at most ``REPLAYS`` at once across the process's
        targets, each a worker process and an import of the target more. Also
        returned: the tail of the tool's output there, where a culprit's last words are.
        """
        with _REPLAY_SLOTS:
            replica = TargetWorker(
                self.spec,
                self.label,
                base_dir=self.base_dir,
                options=self.options,
                modules=self.modules,
                sandbox=self.sandbox,
                forkserver=self.forkserver,
            )
            with self._lock:
                if self._closed:
                    replica.close()
                    return ToolJudgement(error="the worker was closed: the session is ending"), None
                self._replicas.add(replica)
            try:
                try:
                    replica.load(self._load_timeout)
                except WorkerError as exc:
                    return ToolJudgement(
                        error=f"the worker process that would replay this tool alone cannot"
                        f" run it: {exc}"
                    ), None
                judgement = replica._started(index, name, codes, arguments, settings)
                return judgement, replica._tool_output(index, None)
            finally:
                with self._lock:
                    self._replicas.discard(replica)
                replica.close()

    def _explore_once(
        self,
        index: int,
        name: str,
        codes: Sequence[str],
        arguments: ToolArguments | None = None,
        settings: ToolSettings | None = None,
    ) -> ToolJudgement:
        try:
            self._ensure()
        except WorkerError as exc:
            return ToolJudgement(error=f"the worker process cannot run this tool: {exc}")
        job_id = next(self._ids)
        request = pickle.dumps(("explore", job_id, index, name, list(codes), arguments, settings))
        if len(request) > ARGUMENTS_MAX:
            return ToolJudgement(
                error=f"the arguments given for this tool take {len(request)} bytes to send;"
                f" at most {ARGUMENTS_MAX} cross to the process that calls it"
            )
        # A worker says it is loaded before it warms (the warm-up is not the target's
        # load time): its first tool waits for the warm-up, bounded apart.
        warmed, gone = self._warmed, self._gone
        end = _monotonic() + WARM_LIMIT
        while not warmed.wait(0.05) and not gone.is_set() and _monotonic() < end:
            pass
        ours, theirs = socket.socketpair()
        try:
            try:
                # The job is the worker's it is sent to: a restart (``_ensure``, under the
                # same lock) cannot come between, and a worker that died since is not sent it.
                with self._lock:
                    job = _Job(
                        job_id, generation=self._generation, gone=self._gone, worker=self._process
                    )
                    if job.worker_gone():
                        return ToolJudgement(unstarted=True)
                    self._jobs[job_id] = job
                    try:
                        self._send(request, [theirs.fileno()])
                    except WorkerGone:
                        # Not received: the worker went (its socket refuses) before it saw
                        # the tool, though the process the session holds, a sandbox's
                        # holder, may not have ended yet. Sent again: ``_ensure`` starts
                        # another worker (this one is known gone), or says why it cannot.
                        self._refused = job.generation
                        return ToolJudgement(unstarted=True)
                    except WorkerError:  # not received, for another reason: sent again
                        return ToolJudgement(unstarted=True)
            finally:
                theirs.close()
            from ..live._search import stretch

            limit = START_LIMIT * stretch()
            end = _monotonic() + limit
            # The listener wakes the jobs it knows of when the worker dies; one sent as it
            # died may not be among them, so the worker's end is watched here too.
            while not job.started.wait(0.05) and not job.worker_gone() and _monotonic() < end:
                pass
            if job.pid is None:
                if job.error is None and job.worker_gone():
                    return ToolJudgement(unstarted=True)
                why = job.error or (
                    f"the worker process did not start a process for the tool within {limit:g}s"
                )
                return ToolJudgement(error=why)
            return self._watch(job, FrameReader(ours), index, settings)
        except WorkerError as exc:
            return ToolJudgement(error=str(exc))
        finally:
            ours.close()
            self._jobs.pop(job_id, None)

    def _watch(
        self, job: _Job, reader: FrameReader, index: int, settings: ToolSettings | None = None
    ) -> ToolJudgement:
        from ..live._calls import UNWIND
        from ..live._explorations import tool_limit
        from ..live._loop import blocked_within
        from ..live._search import BUILD_LIMIT, stretch
        from ..live._workers import WALL_FACTOR

        options = self.options
        if settings is not None and settings.call_timeout is not None:
            options = replace(options, call_timeout=settings.call_timeout)
        silence = options.call_timeout + options.grace + SILENCE_SLACK
        # A call that did not answer is asked again with its bound stretched by the
        # machine's load (``stretch``): the call's bound here stretches by the most load
        # seen, or on a loaded machine that second chance was killed as a process stuck.
        # Only the bound does: the slack past it is the same, so a frozen clock is found
        # as soon as a call outlasts what its process may allow it: the call's bound and
        # its unwinding, or the time the process takes to find its event loop blocked
        # (``_loop.blocked_within``), which must be the one to blame a blocking tool.
        idle = 2 * WALL_FACTOR * BUILD_LIMIT + options.grace + IDLE_SLACK
        started = _monotonic()
        total = tool_limit(options)
        heard = progressed = started
        in_flight: list[float] = []  # when each call still running began, oldest first
        last_call: str | None = None
        slower = 1.0
        while True:
            if job.gone is not None and job.gone.is_set():
                return self._worker_gone(job, last_call)
            now = _monotonic()
            slower = max(slower, stretch())
            allowed = options.call_timeout * slower
            overdue = (
                max(allowed + UNWIND + options.grace, blocked_within(allowed + options.grace))
                + STUCK_SLACK
            )
            if now - heard > silence:
                return self._kill(
                    job,
                    last_call,
                    f"the tool froze its process: no sign of life for {silence:g}s"
                    " (it holds the GIL, or stopped every thread)",
                )
            if (in_flight and now - in_flight[0] > overdue) or now - progressed > idle:
                waited = now - in_flight[0] if in_flight else now - progressed
                bound = f"{options.call_timeout:g}s" + (
                    f", {slower:.1f} times that on this loaded machine" if slower > 1 else ""
                )
                return self._kill(
                    job,
                    last_call,
                    f"the tool's process stopped making progress: a call"
                    f" still running after {waited:.1f}s, past its bound of"
                    f" {bound} (a replaced clock, such as a frozen"
                    " time.monotonic, stops every bound of a process)"
                    if in_flight
                    else f"the tool's process made no call for {waited:.1f}s (a replaced clock"
                    " stops every bound of a process)",
                )
            if now - started > total:
                return self._kill(
                    job, last_call, f"exploring the tool took longer than {total:g}s in all"
                )
            try:
                frame = reader.next(0.25)
            except TimeoutError:
                continue
            except EOFError:
                job.exited.wait(REPORT_WAIT)
                if job.status is None and job.worker_died():
                    return self._worker_gone(job, last_call)
                return self._ended(job, last_call, index)
            heard = _monotonic()
            kind = frame[0]
            if kind == "calling":
                progressed, last_call = heard, frame[1]
                in_flight.append(heard)
            elif kind == "called":
                progressed = heard
                if in_flight:
                    in_flight.pop(0)
            elif kind == "result":
                if job.worker_died():
                    return self._worker_gone(job, last_call)
                return ToolJudgement(results=frame[1], calls=frame[2] if len(frame) > 2 else None)
            elif kind == "exhausted":
                return ToolJudgement(
                    exhausted=f"exploring the tool, {frame[1]}", last_call=last_call
                )
            elif kind == "error":
                return ToolJudgement(error=f"exploring the tool failed: {frame[1]}")

    def _worker_gone(self, job: _Job, last_call: str | None) -> ToolJudgement:
        """The worker died while this tool's process ran: that process goes with it."""
        self._kill_tool(job)
        status, running = self._deaths.get(job.generation, (None, 2))
        return ToolJudgement(worker_died=_ending(status), running=running, last_call=last_call)

    def _ended(self, job: _Job, last_call: str | None, index: int) -> ToolJudgement:
        job.exited.wait(REPORT_WAIT)
        if job.status is None:
            return ToolJudgement(
                error="the tool's process closed its socket and its end is unknown"
            )
        return ToolJudgement(
            ended=f"the tool ended its process ({_ending(job.status)}){self._tool_output(index, job)}",
            last_call=last_call,
        )

    def _kill(self, job: _Job, last_call: str | None, why: str) -> ToolJudgement:
        self._kill_tool(job)
        job.exited.wait(EXIT_WAIT)  # the verdict is ours, whatever its status says
        if self.threads > 1:
            # Honest about our share: a lock one of those threads held at the fork stays
            # held in the tool's process, and would stop it just the same.
            why += (
                f" (the target started {self.threads - 1} thread(s) at import, which a tool's"
                " forked process does not have: a lock one of them held would stop it too)"
            )
        return ToolJudgement(ended=f"{why}; it was killed", last_call=last_call)

    def _kill_tool(self, job: _Job) -> None:
        """SIGKILL the tool's process group, where its number means that process.

        In a sandbox the worker numbers its tools' processes in the sandbox's own PID
        namespace: out here the same number is some other process, perhaps the
        user's, so the worker is asked to kill it. A worker that is gone took its
        sandbox, and every process in it, with it.
        """
        if job.pid is None:
            return
        if not self.sandbox.active:
            kill_group(job.pid)
            return
        try:
            self._send(pickle.dumps(("kill", job.key)))
        except WorkerError:
            pass

    def _tool_output(self, index: int, job: _Job | None) -> str:
        for log in self.scratch.glob(f"tool-{index}-*/output.log"):
            try:
                text = log.read_bytes()[-OUTPUT_TAIL:].decode("utf-8", "replace").strip()
            except OSError:
                continue
            if text:
                return f"; its output ends:\n{text}"
        return ""


def _sandbox_pid(info: int) -> int:
    """The sandbox's first process, from what bubblewrap writes to its ``--info-fd``."""
    import json

    data = b""
    end = _monotonic() + SPAWN_LIMIT
    while _monotonic() < end:
        ready, _, _ = select.select([info], [], [], 0.1)
        if ready:
            chunk = os.read(info, 4096)
            data += chunk
            try:  # whole once it parses (the shell around bubblewrap keeps the pipe open)
                return int(json.loads(data)["child-pid"])
            except ValueError:
                if not chunk:
                    break
    raise ValueError(f"bubblewrap did not say its sandbox's process: {data!r}")


def _await_line(stream: Any) -> None:
    """The sandbox's holder said it is ready (its mounts are in place): ``ValueError`` if not."""
    ready, _, _ = select.select([stream], [], [], SPAWN_LIMIT)
    if not ready or not stream.readline():
        raise ValueError("the sandbox did not start")


def _ending(status: int | None) -> str:
    if status is None:
        return "how is unknown"
    if status >= 0:
        return f"exit status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"killed by {name}"


# -- the observations of isolated targets -------------------------------------------------
@dataclass(slots=True)
class _Plan:
    subject: ToolSubject
    group: str
    index: int
    codes: set[str] = field(default_factory=set)


class IsolatedExplorations:
    """What ``Explorations`` is to in-process tools, for tools explored in a worker process.

    The first ask starts exploring every planned tool (with prefetch), of every
    target, in the order they were planned: ``RunOptions.concurrency`` tools at
    once, each in a process its target's worker forks, the workers alive at once
    bounded by the pool. A target's worker is stopped once its last planned tool is
    explored, so its slot goes to the next target.
    """

    def __init__(
        self,
        options: RunOptions,
        *,
        prefetch: bool | Callable[[], set[int]] = True,
        pool: WorkerPool | None = None,
    ) -> None:
        self.options = options
        self.prefetch = prefetch
        self.pool = pool or WorkerPool(default_workers(options.concurrency))
        self._workers: dict[str, TargetWorker] = {}
        self._indexes: dict[int, int] = {}
        self._plans: dict[int, _Plan] = {}
        self._futures: dict[int, Future[ToolJudgement]] = {}
        #: Seconds each tool's process took to explore it, from the worker's fork on.
        self._seconds: dict[int, float] = {}
        #: Planned tools of each target not explored yet: at none, its worker stops.
        self._left: dict[str, int] = {}
        self._lock = threading.Lock()
        self._runner: ThreadPoolExecutor | None = None

    def add(self, group: str, worker: TargetWorker, subjects: Sequence[ToolSubject]) -> None:
        self._workers[group] = worker
        for index, subject in enumerate(subjects):
            self._indexes[id(subject)] = index

    def handles(self, group: str) -> bool:
        return group in self._workers

    def plan(
        self, subject: ToolSubject, phases: Iterable[Any], codes: Iterable[str], *, group: str
    ) -> None:
        key = id(subject)
        entry = self._plans.get(key)
        if entry is None:
            entry = self._plans[key] = _Plan(subject, group, self._indexes.get(key, -1))
            with self._lock:
                self._left[group] = self._left.get(group, 0) + 1
        entry.codes.update(codes)

    def planned(self) -> None:
        """Planning is over: the workers of targets with nothing to explore give up their slot."""
        for group, worker in self._workers.items():
            if not self._left.get(group):
                self.pool.drop(worker)

    def judge(self, check: Any, subject: ToolSubject) -> tuple[Finding, ...]:
        """The check's findings, read from what the tool's process sent (``Skip`` if none)."""
        judgement = self._judgement(subject)
        if judgement.error is not None:
            raise KitFailure(judgement.error)
        if judgement.exhausted is not None:
            return (Finding(judgement.exhausted, sent=judgement.last_call),)
        if judgement.ended is not None:
            if check.code == PROCESS_CHECK:
                return (Finding(judgement.ended, sent=judgement.last_call),)
            raise Skip(f"not judged: {_first_line(judgement.ended)} ({PROCESS_CHECK})")
        found = judgement.results.get(check.code)
        if found is None:
            raise Skip(f"check {check.code} was not planned for this tool's process")
        outcome, message, findings = found
        if outcome == "skipped":
            raise Skip(message)
        return tuple(Finding(*f) for f in findings)

    def calls_of(self, subject: ToolSubject) -> int | None:
        """Calls the tool's process made exploring it, once it answered (as ``Explorations``)."""
        future = self._futures.get(id(subject))
        if future is None or not future.done():
            return None
        return future.result().calls

    def seconds_of(self, subject: ToolSubject) -> float | None:
        """Seconds the tool's process took, once it answered (as ``Explorations``); not the
        time it waited for a worker, nor its worker's start."""
        future = self._futures.get(id(subject))
        if future is None or not future.done():
            return None
        return self._seconds.get(id(subject))

    def close(self) -> None:
        """Stop exploring what was not asked for yet (the session is ending)."""
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.shutdown(wait=False, cancel_futures=True)

    def _judgement(self, subject: ToolSubject) -> ToolJudgement:
        key = id(subject)
        if key not in self._futures:
            if key not in self._plans:
                raise KeyError(f"no exploration was planned for {subject.display_name!r}")
            self._submit(batch_of(key, self._plans, self._futures, self.prefetch))
        return self._futures[key].result()

    def _submit(self, batch: list[_Plan]) -> None:
        if self._runner is None:
            width = max(1, self.options.concurrency)
            self._runner = ThreadPoolExecutor(width, thread_name_prefix="toolnexus-watch")
        for plan in batch:
            key = id(plan.subject)
            if key not in self._futures:
                self._futures[key] = self._runner.submit(self._explore, plan)

    def _explore(self, plan: _Plan) -> ToolJudgement:
        worker = self._workers[plan.group]
        held = False
        try:
            if plan.index < 0 or plan.index >= worker.tools:
                return ToolJudgement(
                    error=f"the target gave {worker.tools} tools in the worker process: this"
                    " tool has no counterpart there"
                )
            subject = plan.subject
            name = subject.name if isinstance(subject.name, str) else subject.display_name
            arguments = self.options.arguments_for(plan.group, name)
            settings = self.options.settings_for(plan.group, name) if self.options.tools else None
            self.pool.acquire(worker)
            held = True
            started = time.monotonic()
            try:
                return worker.explore(
                    plan.index, subject.display_name, sorted(plan.codes), arguments, settings
                )
            finally:
                self._seconds[id(subject)] = time.monotonic() - started
        except Exception as exc:  # our own failure: say so, never blame the tool
            return ToolJudgement(error=f"exploring the tool failed: {type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._left[plan.group] -= 1
                last = self._left[plan.group] <= 0
            if held:
                self.pool.release(worker, keep=not last)
            elif last:
                self.pool.drop(worker)


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].split("; its output ends:")[0]
