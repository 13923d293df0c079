"""A warmed template process that every worker is forked from: the warm-up paid once a session.

A worker that starts as a new interpreter pays for the kit's imports and its
warm-up (jsonschema, hypothesis's tables and engine, the catalog: seconds of CPU)
before it imports its target. A thousand targets paid it a thousand times. So the
session starts one template process (``python -m
toolnexus_conformance.process._forkserver``), which warms once and then forks a
worker per target on request. The template runs the kit's code only, never a
target's.

Each target stays contained as when its worker was started through bubblewrap:
the session still starts a bubblewrap sandbox per target, with that target's
binds, whose only process is a small holder shell. The template forks a process
that joins the holder's namespaces (user, mount, PID, network, IPC, UTS, cgroup:
``setns(2)``) and its root, applies the limits and the environment, and forks the
worker, which so is born inside the target's PID namespace and sees only that
sandbox's file system. The joining process stays outside, out of the sandbox's
sight, waits for the worker and writes how it ended to the holder, which ends the
same way: the session watches the holder as it watched the worker, and stopping
the holder ends the sandbox with everything in it. Without a sandbox the same
steps run without joining.

Where joining fails (a kernel or container refusing ``setns``), or the template
cannot warm, the session starts workers as before (``_isolation``), and says
nothing more: the verdicts are the same, only slower.
"""

from __future__ import annotations

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ._frames import CONTROL_MAX, kill_group
from ._sandbox import Sandbox, kit_cache

__all__ = ["JOIN_FAILED", "NAMESPACES", "ForkError", "ForkServer", "main", "scratch_options"]


def scratch_options(options: Any) -> Any:
    """The options as a process the kit starts in a scratch folder must read them.

    ``example_database=None`` leaves hypothesis's files where hypothesis puts them: a
    ``.hypothesis`` folder in the working directory. A template's or worker's is its
    scratch, removed with it, so every such process built hypothesis's unicode tables
    anew (in every ``check_target`` call) and kept its
    examples nowhere. There ``None`` is ``False``: no example database (none survived
    anyway), and the tables in the kit's user cache, built once per machine.
    """
    import dataclasses

    if getattr(options, "example_database", False) is None:
        return dataclasses.replace(options, example_database=False)
    return options


#: Joined in this order: the user namespace first, which gives the rights to join the rest.
NAMESPACES = ("user", "mnt", "pid", "net", "ipc", "uts", "cgroup")
#: How long the template may take to warm (the kit's cost, never a target's load timeout).
WARM_LIMIT = 300.0
#: How long forking a worker, or a sandbox saying it is ready, may take.
SPAWN_LIMIT = 20.0
#: Written to the worker's log when the forked process could not enter the sandbox.
JOIN_FAILED = "toolnexus: the forked worker could not enter its sandbox"
_monotonic = time.monotonic


class ForkError(Exception):
    """No worker can be forked from the template; the message says why."""


# -- the session's half -----------------------------------------------------------------
class ForkServer:
    """The session's handle on the template: started once, warmed once, asked to fork."""

    def __init__(
        self,
        sandbox: Sandbox,
        options: Any,
        modules: Sequence[str] = (),
    ) -> None:
        self.sandbox = sandbox
        self.options = scratch_options(options)
        self.modules = list(modules)
        self.scratch = Path(tempfile.mkdtemp(prefix="toolnexus-template-"))
        self._process: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._lifeline: int | None = None
        self._lock = threading.Lock()
        self._warmed = threading.Event()
        #: Why no worker can be forked (``None``: it can, once warm).
        self.broken: str | None = None
        #: Workers forked, for the benchmarks and tests.
        self.spawned = 0

    def start(self) -> None:
        """Start the template and ask it to warm; returns at once (the warm-up runs there)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        lifeline, self._lifeline = os.pipe()
        env = self.sandbox.environment({"PWD": str(self.scratch)})
        # The kit's cache where the session keeps it, whatever HOME a worker gets.
        env.setdefault("XDG_CACHE_HOME", str(kit_cache().parents[1]))
        log = (self.scratch / "template.log").open("wb")
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "toolnexus_conformance.process._forkserver",
                    str(theirs.fileno()),
                    str(lifeline),
                ],
                pass_fds=(theirs.fileno(), lifeline),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.scratch,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            self.broken = f"the template process cannot start: {exc}"
            ours.close()
            return
        finally:
            theirs.close()
            os.close(lifeline)
            log.close()
        self._control = ours
        path = [str(Path(p or os.curdir).resolve()) for p in sys.path]
        try:
            ours.send(pickle.dumps(("warm", path, self.options, self.modules)))
        except OSError as exc:
            self.broken = f"the template process is gone: {exc}"
            return
        threading.Thread(target=self._await_warm, name="toolnexus-template", daemon=True).start()

    def _await_warm(self) -> None:
        reply = self._receive(WARM_LIMIT)
        if reply is None or reply[0] != "warm":
            self.broken = f"the template process did not warm: {reply}{self._output()}"
        self._warmed.set()

    def _receive(self, timeout: float) -> tuple[Any, ...] | None:
        control = self._control
        process = self._process
        if control is None or process is None:
            return None
        end = _monotonic() + timeout
        while _monotonic() < end:
            ready, _, _ = select.select([control], [], [], 0.1)
            if ready:
                try:
                    data = control.recv(CONTROL_MAX)
                except OSError:
                    return None
                return pickle.loads(data) if data else None
            if process.poll() is not None:
                return None
        return None

    def ready(self) -> bool:
        """Whether workers can be forked: waits for the warm-up (never a target's timeout)."""
        if self.broken is None and not self._warmed.wait(WARM_LIMIT):
            self.broken = f"the template process did not warm within {WARM_LIMIT:g}s"
        return self.broken is None

    def spawn(
        self,
        env: dict[str, str],
        scratch: Path,
        *,
        worker: int,
        lifeline: int,
        status: int,
        namespaces: Sequence[int] = (),
    ) -> int:
        """Fork a worker serving the ``worker`` socket; the id of the group to kill it by.

        ``namespaces``: the sandbox's root folder then its namespaces, as open files,
        which the forked process joins; none: it runs where the template does.
        """
        if not self.ready():
            raise ForkError(self.broken or "not warm")
        request = ("spawn", env, str(scratch), self.sandbox.limits.pairs(), len(namespaces))
        with self._lock:
            control = self._control
            if control is None:
                raise ForkError("the template process was stopped")
            try:
                socket.send_fds(
                    control, [pickle.dumps(request)], [worker, lifeline, status, *namespaces]
                )
            except OSError as exc:
                self.broken = f"the template process is gone ({exc})"
                raise ForkError(self.broken) from None
            reply = self._receive(SPAWN_LIMIT)
        if reply is None or reply[0] != "spawned":
            self.broken = f"the template process did not fork a worker: {reply}{self._output()}"
            raise ForkError(self.broken)
        self.spawned += 1
        return int(reply[1])

    def _output(self) -> str:
        try:
            text = (self.scratch / "template.log").read_bytes()[-1500:]
        except OSError:
            return ""
        shown = text.decode("utf-8", "replace").strip()
        return f"; its output ends:\n{shown}" if shown else ""

    def close(self) -> None:
        """Stop the template (workers forked from it go on until their sessions stop them)."""
        with self._lock:
            control, self._control = self._control, None
            process, self._process = self._process, None
            lifeline, self._lifeline = self._lifeline, None
        if control is not None:
            try:
                control.send(pickle.dumps(("stop",)))
            except OSError:
                pass
            control.close()
        if lifeline is not None:
            os.close(lifeline)
        if process is not None:
            kill_group(process.pid)
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL ignored?
                pass
        self._warmed.set()
        self.broken = self.broken or "the template process was stopped"
        shutil.rmtree(self.scratch, ignore_errors=True)


def namespaces_of(pid: int) -> list[int]:
    """``pid``'s root folder and each of its namespaces that differs from ours, opened.

    The caller closes them. ``OSError`` if the process is gone or cannot be read.
    """
    opened = [os.open(f"/proc/{pid}/root", os.O_RDONLY | os.O_DIRECTORY)]
    try:
        for name in NAMESPACES:
            path = f"/proc/{pid}/ns/{name}"
            if not os.path.exists(path):
                continue
            if os.stat(path).st_ino == os.stat(f"/proc/self/ns/{name}").st_ino:
                continue  # not unshared (cgroup namespaces are only tried)
            opened.append(os.open(path, os.O_RDONLY))
    except OSError:
        for fd in opened:
            os.close(fd)
        raise
    return opened


# -- the template's half ----------------------------------------------------------------
def _serve(control: socket.socket, lifeline: int) -> None:
    # The joining processes are the template's children: the kernel reaps them.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    while True:
        ready, _, _ = select.select([control.fileno(), lifeline], [], [], 1.0)
        if lifeline in ready:
            return  # the session is gone
        if control.fileno() not in ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(control, CONTROL_MAX, 16)
        except OSError:
            return
        if not data:
            return
        message = pickle.loads(data)
        if message[0] == "stop":
            return
        if message[0] == "warm":
            _warm(control, *message[1:])
        elif message[0] == "spawn":
            _fork(control, lifeline, message[1:], fds)
        else:  # pragma: no cover - a session of another version
            for fd in fds:
                os.close(fd)


def _reply(control: socket.socket, *message: Any) -> None:
    try:
        control.send(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:
        pass


def _warm(control: socket.socket, path: list[str], options: Any, modules: list[str]) -> None:
    sys.path[:] = path
    try:
        import asyncio  # noqa: F401 - what a worker's load imports, imported once here

        from .. import _runner  # noqa: F401
        from ..live import _explorations, _search  # noqa: F401
        from ..targets import load_target  # noqa: F401
        from . import _declared  # noqa: F401
        from ._worker import _prepare

        _prepare(options, modules)
    except BaseException as exc:
        _reply(control, "warm-error", f"{type(exc).__name__}: {exc}")
        return
    _reply(control, "warm")


def _fork(control: socket.socket, lifeline: int, request: tuple[Any, ...], fds: list[int]) -> None:
    try:
        pid = os.fork()
    except OSError as exc:
        for fd in fds:
            os.close(fd)
        _reply(control, "spawn-error", f"fork failed: {exc}")
        return
    if pid == 0:  # the joining process: never returns
        try:
            os.close(control.detach())
            os.close(lifeline)
            env, scratch, limits, joined = request
            _join_and_serve(env, scratch, limits, joined, fds)
        finally:
            os._exit(70)
    for fd in fds:
        os.close(fd)
    _reply(control, "spawned", pid)


def _join_and_serve(
    env: dict[str, str],
    scratch: str,
    limits: list[tuple[str, int]],
    joined: int,
    fds: list[int],
) -> None:
    """Enter the target's sandbox, fork the worker there, and report how it ended."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this process waits for the worker
    os.setsid()  # a group of its own: the session kills it, and the worker, by it
    worker, lifeline, status, *spaces = fds
    keep = {worker, lifeline, status, *spaces}
    for name in os.listdir("/proc/self/fd"):  # nothing of the template's reaches the worker
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    try:
        if joined:
            root, *namespaces = spaces
            for fd in namespaces:
                _setns(fd)
            os.fchdir(root)
            os.chroot(".")
            for fd in spaces:
                os.close(fd)
        os.chdir(scratch)
        log = os.open("worker.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError as exc:
        os.write(status, b"70\n")
        with open(os.path.join(scratch, "worker.log"), "a") as text:
            text.write(f"{JOIN_FAILED}: {exc}\n")
        os._exit(70)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.environ.clear()
    os.environ.update(env)
    _limit(limits)
    pid = os.fork()
    if pid == 0:  # the worker
        code = 70
        try:
            os.close(status)
            from ._worker import run

            run(worker, lifeline)
            code = 0
        finally:
            os._exit(code)
    os.close(worker)
    os.close(lifeline)
    _, waited = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(waited)
    try:
        # The holder ends as the worker did (a shell reports a signal as 128 + it).
        os.write(status, f"{code if code >= 0 else 128 - code}\n".encode())
    except OSError:
        pass  # the sandbox was stopped first
    os._exit(0)


def _setns(fd: int) -> None:
    """Join the namespace open as ``fd`` (``setns(2)``; the standard library has it from 3.12)."""
    join = getattr(os, "setns", None)
    if join is not None:  # pragma: no cover - Python 3.12+
        join(fd, 0)
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns: {os.strerror(errno)}")


def _limit(limits: list[tuple[str, int]]) -> None:
    """The sandbox's limits (``_sandbox.Limits``), as its shim applies them to a started process."""
    import resource

    for name, value in limits:
        which = getattr(resource, name)
        _soft, hard = resource.getrlimit(which)
        try:
            resource.setrlimit(which, (value if hard < 0 else min(value, hard), hard))
        except (ValueError, OSError):
            pass


def main(argv: list[str]) -> int:
    from .._parser_lock import install

    install()  # before any thread: the workers forked from here inherit it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the session's to handle
    control = socket.socket(fileno=int(argv[1]))
    lifeline = int(argv[2])
    try:
        _serve(control, lifeline)
    finally:
        if Path.cwd().name.startswith("toolnexus-template-"):
            cwd = Path.cwd()
            os.chdir("/")
            shutil.rmtree(cwd, ignore_errors=True)  # the session's, were it killed
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
