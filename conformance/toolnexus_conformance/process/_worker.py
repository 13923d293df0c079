"""The worker process: a Python target imported once, each tool explored in a process of its own.

The session starts one worker per Python target (``_isolation.TargetWorker``),
forked from a warm template (``_forkserver``) or, where that cannot be had, as
``python -m toolnexus_conformance.process._worker FD``. The worker imports the
target, says so, warms the argument generator and the catalog unless the template
did, and waits. For each tool it forks
a child, which explores that one tool, judges its live checks, sends the
verdicts back over a socket of its own and ends. Whatever a tool does to its
process (``os._exit``, a segfault, a patched clock, a removed environment
variable, a changed working directory, threads or subprocesses that never end)
happens to a process that exists for that tool alone. The session only sees the
child's socket close; the worker tells it how the child ended.

Forking keeps the cost of a tool's process to a few milliseconds: the import is
paid once per target and the warm-up once per worker (once per session when forked), and the children share the worker's
memory until they write to it. The worker itself never calls a tool.

Frames on a child's socket are pickles with a four-byte length; the control
socket is a datagram socket, one message per datagram, that can carry the child's
socket as a file descriptor.
"""

from __future__ import annotations

import mmap
import os
import pickle
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _coverage
from ._frames import CONTROL_MAX, Channel, kill_group

__all__ = ["main"]

#: Judged last in a tool's process: what the tool tried beyond its scratch (``_escapes``).
ESCAPE_CHECK = "TN607"
#: How often a child says it is alive, from a thread of its own.
HEARTBEAT = 0.25
#: Address space a tool's process sets aside, untouched, and gives back to send its
#: last report: a tool that used up its memory leaves the kit none to say so with
#: (pickling the report, a new arena), and its end then read as unexplained.
REPORT_RESERVE = 4 << 20
#: The clock of the worker's own bounds, taken before any tool can replace ``time.monotonic``.
_monotonic = time.monotonic


# -- the worker ----------------------------------------------------------------------
class _Worker:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.children: dict[int, int] = {}  # pid -> job
        self.tools: list[Any] = []
        self.extras: list[Any] = []
        #: Each tool's declaration as read at load (``ToolSubject``): its process uses it.
        self.subjects: list[Any] = []
        self.label = ""
        self.options: Any = None
        self.scratch = Path.cwd()
        self.orphaned = False
        #: A pipe whose end of file says the session is gone (``None``: watch the parent only).
        self.lifeline: int | None = None

    def reply(self, *message: Any) -> None:
        try:
            self.control.send(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError:
            pass  # the session is gone; ``serve`` notices on its next read

    def serve(self) -> None:
        session = os.getppid()
        while True:
            ready, _, _ = select.select([self.control], [], [], 0.02 if self.children else 1.0)
            if os.getppid() != session or _cut(self.lifeline):
                # The session died without closing us (SIGKILL): a datagram socket gives
                # no end of file, so its death is seen here. Leave nothing behind.
                self.orphaned = True
                break
            if ready:
                try:
                    data, fds, _, _ = socket.recv_fds(self.control, CONTROL_MAX, 4)
                except OSError:
                    break
                if not data:
                    break  # the session closed its end: stop
                message = pickle.loads(data)
                if message[0] == "stop":
                    break
                if message[0] == "load":
                    self.load(*message[1:])
                elif message[0] == "explore":
                    self.fork(message[1:], fds)
                elif message[0] == "kill":
                    self.kill(message[1])
                else:  # pragma: no cover - a session of another version
                    for fd in fds:
                        os.close(fd)
            self.reap()
        for pid in list(self.children):
            kill_group(pid)
        self.reap()
        if self.orphaned:
            import shutil

            os.chdir("/")
            shutil.rmtree(self.scratch, ignore_errors=True)

    def kill(self, job: Any) -> None:
        """SIGKILL the process group of ``job``'s tool, numbered in this worker's namespace."""
        for pid, running in list(self.children.items()):
            if running == job:
                kill_group(pid)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            job = self.children.pop(pid, None)
            if job is not None:
                self.reply("exited", job, os.waitstatus_to_exitcode(status))

    def load(
        self,
        spec: str,
        label: str,
        base_dir: str | None,
        path: list[str],
        options: Any,
        modules: list[str],
        prepare: bool = True,
    ) -> None:
        """Import the target and (with ``prepare``) everything a child needs, paid once."""
        sys.path[:] = path
        self.label, self.options = label, options
        try:
            import asyncio

            # The kit's code a tool's process runs is imported before the target, so
            # that a target replacing it is caught (``_integrity``) as in pytest's process.
            from .. import _runner  # noqa: F401
            from ..live import _explorations, _search  # noqa: F401
            from ..targets import TargetKind, TargetSpec, load_target
            from . import _declared  # noqa: F401

            _coverage.start()  # the session's coverage, if it measures: from the import on
            loaded = asyncio.run(
                load_target(
                    TargetSpec(TargetKind.PYTHON, spec, label),
                    base_dir=Path(base_dir) if base_dir is not None else None,
                )
            )
            self.tools, self.extras = loaded.tools, list(loaded.extras)
            threads = threading.active_count()
            declarations = self._declare(loaded.info, options)
            _coverage.save()  # the import's lines: no tool's process carries them
        except BaseException as exc:  # SystemExit at import included: the session reports it
            from ..targets import TargetError

            if isinstance(exc, TargetError):
                self.reply("load-error", str(exc))
            else:
                self.reply("load-error", f"loading {label!r} raised {type(exc).__name__}: {exc}")
            return
        # Loaded: said before the warm-up, which is the kit's cost, not the target's, and
        # must not count against the load timeout. Explore requests wait in the socket.
        self.reply("loaded", len(self.tools), threads, declarations)
        if prepare:
            _prepare(options, modules)
        else:
            import gc

            _scan_constants()  # the target's, once here, not in each tool's process
            gc.freeze()  # the target's objects too: a tool's process does not copy them
        self.reply("warm")

    def _declare(self, info: Any, options: Any) -> str:
        """Every tool's declaration read here, as plain data in a file the session reads.

        A file, not a control message: a target's schemas can outgrow a datagram.
        """
        from .._subject import read_subjects
        from ._declared import declare, dumps

        limit = options.attribute_limit
        self.subjects = read_subjects(self.tools, self.label, self.extras or None, limit=limit)
        declared = declare(
            self.tools, self.label, self.extras or None, limit=limit, subjects=self.subjects
        )
        path = self.scratch / "declarations.pickle"
        path.write_bytes(dumps(declared, info))
        return str(path)

    def fork(self, request: tuple[Any, ...], fds: list[int]) -> None:
        job = request[0]
        if not fds:  # pragma: no cover - the session always passes the child's socket
            self.reply("fork-error", job, "no socket came with the request")
            return
        prctl, parent = _prctl(), os.getpid()  # looked up here: once, not in each child
        gate = release = -1  # the child runs the tool once "started" is said (``_released``)
        try:
            gate, release = os.pipe()
            pid = os.fork()
        except OSError as exc:
            for fd in (*fds, gate, release):
                if fd >= 0:
                    os.close(fd)
            self.reply("fork-error", job, f"fork failed: {exc}")
            return
        if pid == 0:  # the child: never returns
            status = 70
            try:
                os.close(release)
                _die_with(parent, prctl)
                if not _released(gate):
                    return  # the worker ended before it said the tool started: never run
                os.close(self.control.detach())
                signal.signal(signal.SIGINT, signal.default_int_handler)
                _child(self, fds[0], *request)
                status = 0
            finally:
                os._exit(status)
        os.close(gate)
        for fd in fds:
            os.close(fd)
        self.children[pid] = job
        self.reply("started", job, pid)
        try:
            os.write(release, b"\0")
        except OSError:  # pragma: no cover - the child is already gone (killed)
            pass
        finally:
            os.close(release)


#: Linux's ``prctl`` option: the signal a process gets when the thread that forked it ends.
PR_SET_PDEATHSIG = 1
_PRCTL: list[Callable[..., int] | None] = []


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` where there is one (Linux), found once per worker."""
    if not _PRCTL:
        found = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                found = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):  # pragma: no cover - a libc without it
                pass
        _PRCTL.append(found)
    return _PRCTL[0]


def _die_with(parent: int, prctl: Callable[..., int] | None) -> None:
    """A tool's process is killed the moment its worker ends (Linux: ``PR_SET_PDEATHSIG``).

    Else a tool that signals its parent outlives the worker it killed, and its next
    call signals whoever adopted it: the sandbox's first process or, outside a
    sandbox, the machine's init (a container's, as root). The worker forks from its
    main thread, which lives as long as it does. Elsewhere nothing changes: the
    session still kills the tool's group once it finds the worker gone.
    """
    if prctl is None:
        return
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the worker ended before the request took
        os._exit(70)


def _released(gate: int) -> bool:
    """Whether the worker said the tool's process started before the tool may run in it.

    Said first, the session knows a tool that kills its worker the moment it runs
    started, and blames it (TN606). Said after, a fast enough tool killed the worker
    before the word left it: the session then took the tool for never started and
    sent it again, to the next worker, which it killed too, until every tool sent
    with it was given up as "died 3 times before it started". An end of file is a
    worker that ended first: the tool never runs.
    """
    try:
        return os.read(gate, 1) == b"\0"
    finally:
        os.close(gate)


def _cut(lifeline: int | None) -> bool:
    """The session closed its end of the pipe: it is gone (nobody ever writes to it)."""
    if lifeline is None:
        return False
    ready, _, _ = select.select([lifeline], [], [], 0)
    return bool(ready)


def _prepare(options: Any, modules: list[str]) -> None:
    """Everything a tool's process would otherwise load or build for itself, done once.

    Runs in the worker's main thread, before any fork, and starts no thread.
    """
    import gc
    import importlib
    import linecache

    from toolnexus_ref import secrets

    secrets.register_environment()  # a tool that returns one of them is TN561

    from .. import _runner
    from .._registry import load_catalog
    from ..live import _explorations, _search

    _search.warm_generation(options)
    load_catalog()
    for module in modules:  # where custom live checks are registered
        try:
            importlib.import_module(module)
        except Exception:
            pass  # the check then skips in the tool's process, saying it is unknown there
    # Hypothesis reads the source of each search's test function (for its database key).
    for loaded in (_search, _explorations, _runner):
        linecache.getlines(loaded.__file__ or "")
    _scan_constants()  # last: it scans every module loaded by now (warm_generation searched)
    # What is loaded now is shared with every tool's process: kept out of the
    # collector's sight, a collection there does not touch (and so copy) all of it.
    gc.collect()
    gc.freeze()


def _scan_constants() -> None:
    """Hypothesis's scan of the loaded modules for constants, made here, before a fork.

    Hypothesis parses every loaded module for constants to try, at the first draw
    that wants one, and again for the modules loaded since. A search of a few
    examples (the warm-up's) may never want one, so every tool's process made the
    whole scan of its own: 0.13-0.26 s of CPU per tool, parsing the same files. The
    modules a tool's process would import first are imported here, and scanned.
    """
    from .. import _escapes  # noqa: F401  (TN607's watch, set up in each tool's process)
    from ..live import _search

    try:  # a search's target phase imports it
        import hypothesis.internal.conjecture.optimiser  # noqa: F401
    except ImportError:  # pragma: no cover - moved: each tool's process scans it alone
        pass
    _search.scan_constants()


# -- one tool's process -----------------------------------------------------------------
def _child(
    worker: _Worker,
    fd: int,
    job: int,
    index: int,
    name: str,
    codes: list[str],
    arguments: Any = None,
    settings: Any = None,
) -> None:
    """Explore tool ``index`` and send its verdicts; then end with everything it started."""
    os.setpgid(0, 0)  # a group of its own: the session kills it with whatever it spawned
    channel = Channel(socket.socket(fileno=fd))
    folder = worker.scratch / f"tool-{index}-{job}"
    folder.mkdir(parents=True, exist_ok=True)
    log = os.open(folder / "output.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    _beat(channel)
    reserve = mmap.mmap(-1, REPORT_RESERVE)  # anonymous and never touched: costs no memory
    try:
        try:
            results, calls = _judge(
                worker, channel, folder, index, name, codes, arguments, settings
            )
            _coverage.save()  # before the verdicts: once they are in, the run may end
            channel.send(("result", results, calls))
        except BaseException as exc:  # our own failure: say so, never blame the tool...
            reserve.close()  # what is left of the process's memory may not pickle a report
            from .._model import exhaustion

            ran_out = exhaustion(exc)  # ...unless the tool used up its process
            channel.send(
                ("exhausted", ran_out) if ran_out else ("error", f"{type(exc).__name__}: {exc}")
            )
    except MemoryError:  # the results did not fit in what the tool left
        reserve.close()
        channel.send(("exhausted", "it ran out of memory (MemoryError)"))
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        os.killpg(0, signal.SIGKILL)  # this process, and every process the tool left behind


def _beat(channel: Channel) -> None:
    def beat() -> None:
        wait = threading.Event().wait  # a lock's timeout: no patched clock can stop it
        while True:
            try:
                channel.send(("beat",))
            except OSError:
                return
            wait(HEARTBEAT)

    threading.Thread(target=beat, name="toolnexus-heartbeat", daemon=True).start()


def _judge(
    worker: _Worker,
    channel: Channel,
    folder: Path,
    index: int,
    name: str,
    codes: list[str],
    arguments: Any = None,
    settings: Any = None,
) -> tuple[dict[str, tuple[str, str, list[tuple[Any, ...]]]], int | None]:
    """Each check's verdict as plain data, and the calls the exploration made."""
    import tempfile

    from .._registry import load_catalog
    from .._runner import plan, run_check
    from .._subject import read_subject
    from ..live import _calls
    from ..live._explorations import Explorations
    from ..live._loop import BackgroundLoop

    os.chdir(folder)
    os.environ["PWD"] = str(folder)
    tempfile.tempdir = str(folder)
    _watch_escapes(worker)
    _calls.IN_WORKER = True
    _calls.ON_CALL = _watcher(channel)
    if index < len(worker.subjects):
        # As read at load, in bounded time: read again in a process just forked on a
        # busy machine, a plain attribute could miss the bound and pass for hung.
        subject = worker.subjects[index]
    else:
        extra = worker.extras[index] if index < len(worker.extras) else None
        subject = read_subject(
            worker.tools[index],
            worker.label,
            index=index,
            extra=extra,
            limit=worker.options.attribute_limit,
        )
    # Both may carry the "#2" that tells apart two tools of one name (``read_subjects``).
    same = subject.display_name.split("#")[0] == name.split("#")[0]
    if not same and not name.startswith("tool["):
        raise RuntimeError(
            f"tool {index} of the target is {subject.display_name!r} in the worker process but"
            f" {name!r} in the session: the target gives different tools each time it loads"
        )
    subject.display_name = name
    catalog = {c.code: c for c in load_catalog()}
    checks = [catalog[code] for code in codes if code in catalog]
    options = _with_arguments(worker.options, arguments, settings)
    loop = BackgroundLoop()
    explorations = Explorations(options, loop, prefetch=False)
    # What the tool tried beyond its scratch is judged last: every phase has run by then.
    checks.sort(key=lambda c: c.code == ESCAPE_CHECK)
    plan(explorations, subject, checks, group=worker.label)
    results: dict[str, tuple[str, str, list[tuple[Any, ...]]]] = {}
    for check in checks:
        verdict = run_check(check, subject, options, loop=loop, explorations=explorations)
        findings = [(f.message, f.path, _plain(f.sent), _plain(f.got)) for f in verdict.findings]
        results[check.code] = (verdict.outcome.value, verdict.message, findings)
    for code in codes:
        if code not in catalog:
            results[code] = ("skipped", f"check {code} is not known in the worker process", [])
    return results, explorations.calls_of(subject)


def _with_arguments(options: Any, arguments: Any, settings: Any = None) -> Any:
    """The options this one tool is explored with: the session's arguments and settings for
    it, if sent.

    The process explores one tool, so both are keyed ``*``: whichever name the
    explorer asks by, it gets these.
    """
    import dataclasses

    if settings is not None:
        options = dataclasses.replace(options, tools={"*": settings})
    if arguments is None:
        return options
    given = {"*": arguments} if arguments.examples or arguments.values else {}
    return dataclasses.replace(options, arguments=given)


def _watch_escapes(worker: _Worker) -> None:
    """Record, for TN607, what the tool does beyond the worker's scratch (``_escapes``)."""
    from .. import _escapes
    from ._sandbox import kit_storage

    # The kit's own: hypothesis keeps failing examples and its tables there. And the
    # folders the user gave as writable copies: writes there are asked for.
    allowed = [worker.scratch, *kit_storage(), *getattr(worker.options, "writable_copies", ())]
    database = getattr(worker.options, "example_database", None)
    if database:
        allowed.append(database)
    _escapes.install(allowed)


def _watcher(channel: Channel) -> Callable[[str, Any], None]:
    from ..live._calls import describe

    def watch(event: str, args: Any) -> None:
        try:
            channel.send((event, describe(args) if event == "calling" else None))
        except OSError:
            pass

    return watch


def _plain(value: Any) -> Any:
    """A finding's evidence as it can cross to the session: itself if it pickles, else its text."""
    try:
        pickle.dumps(value)
    except Exception:
        from ..live._calls import describe

        return describe(value)
    return value


def run(control: int, lifeline: int | None) -> None:
    """Serve the session on the ``control`` socket until it stops us or is gone."""
    worker = _Worker(socket.socket(fileno=control))
    worker.lifeline = lifeline
    worker.serve()


def main(argv: list[str]) -> int:
    from .._parser_lock import install

    install()  # before any thread: the heartbeat and the tool's call thread may parse
    # Ctrl-C in the terminal is the session's to handle: it stops the worker itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    run(int(argv[1]), int(argv[2]) if len(argv) > 2 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
