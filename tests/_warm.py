"""The suite's pytest sessions, forked from an interpreter that has imported what they all import.

Each session a test starts is a process of its own, as a user's run is; started as
``python -m pytest``, each spent about half a second of CPU importing pytest, its
plugins, hypothesis, jsonschema and the mcp SDK before doing what the test is about
(about 140 sessions a run). A warm starter (one per test process, started on first
use) imports all that once, in a pytest session of its own through pytest's
assertion rewriting (so a forked session's pytest finds the modules rewritten, as
its own import would have left them), and forks a child for each session: the child
takes the session's working directory, environment, import path, arguments and
standard streams, runs pytest's console entry point and exits as the interpreter
would (threads joined, exit handlers run).

What a fork cannot be: a session whose interpreter start-up is what the test is
about (coverage's start-up hook, what a plugin imports at start). Those tests keep
a fresh interpreter: ``@pytest.mark.fresh_interpreter``. Where the starter cannot
run (no ``fork``, no ``AF_UNIX``, its warm-up left a thread running), sessions are
started as ``python -m pytest``; ``TOOLNEXUS_TESTS_FRESH=1`` starts them all so.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: Modules a conformance session imports on its way (the kit's and what it builds on).
WARM_MODULES = (
    "hypothesis",
    "hypothesis.strategies",
    "jsonschema",
    "pytest_toolnexus._session",
    "pytest_toolnexus._prestart",
    "toolnexus_conformance.live._explorations",
    "toolnexus_conformance.live._search",
    "toolnexus_ref.mcp",
)
#: The signals whose disposition a session takes from the test process that asks for it
#: (ignored or not), as a new process would inherit it.
INHERITED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)
#: ``TOOLNEXUS_TESTS_FRESH=1``: every session a new interpreter (to compare, or to rule
#: the starter out).
FRESH_SWITCH = "TOOLNEXUS_TESTS_FRESH"
#: Set in the environment of a session the starter forked (for the tests of this module).
FORKED_MARK = "TOOLNEXUS_TESTS_WARM_FORK"
_MAX_MESSAGE = 1 << 20


class WarmProcess:
    """A forked session as ``subprocess.Popen`` shows a process: ``pid``, ``wait``,
    ``poll``, signals. Its exit status arrives from the starter, its parent."""

    stdin = None
    stdout = None
    stderr = None

    def __init__(self, pid: int, reply: socket.socket, args: Sequence[str]) -> None:
        self.pid = pid
        self.args = list(args)
        self.returncode: int | None = None
        self._reply = reply
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        return self._status(0.0)

    def wait(self, timeout: float | None = None) -> int:
        status = self._status(timeout)
        if status is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return status

    def _status(self, timeout: float | None) -> int | None:
        # The wait is not under the lock: another thread may poll, or kill, meanwhile.
        if self.returncode is None:
            with contextlib.suppress(ValueError, OSError):  # closed by a thread that read it
                select.select([self._reply], [], [], timeout)
        with self._lock:
            if self.returncode is None:
                try:
                    data = self._reply.recv(64, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    return None  # still running
                self._reply.close()
                # Nothing said: the starter is gone (killed), and the session with it.
                self.returncode = int(data) if data else -signal.SIGKILL
            return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class WarmStarter:
    """The test process's end of the starter: one control socket, one request a session."""

    _shared: WarmStarter | None = None
    _tried = False
    _shared_lock = threading.Lock()

    def __init__(self, control: socket.socket, process: subprocess.Popen[bytes]) -> None:
        self._control = control
        self._process = process
        self._lock = threading.Lock()
        self.broken = False

    @classmethod
    def shared(cls) -> WarmStarter | None:
        """This process's starter, started on first use; ``None`` where there is none."""
        with cls._shared_lock:
            if not cls._tried:
                cls._tried = True
                cls._shared = cls._start()
            if cls._shared is not None and cls._shared.broken:
                return None
            return cls._shared

    @classmethod
    def _start(cls) -> WarmStarter | None:
        if os.environ.get(FRESH_SWITCH) == "1":
            return None
        if not hasattr(os, "fork") or not hasattr(socket, "SOCK_SEQPACKET"):
            return None
        from _sessions import SESSION_ADDOPTS

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with tempfile.TemporaryFile() as errors:
            process = subprocess.Popen(
                [sys.executable, __file__, str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                env=dict(os.environ, PYTEST_ADDOPTS=SESSION_ADDOPTS),
                cwd=tempfile.gettempdir(),
            )
            theirs.close()
            if ours.recv(64) == b"ready":
                starter = cls(ours, process)
                atexit.register(starter.close)
                return starter
            ours.close()
            process.wait()
            errors.seek(0)
            why = errors.read().decode(errors="replace").strip()
        sys.stderr.write(f"sessions start as new interpreters: the warm starter failed: {why}\n")
        return None

    def close(self) -> None:
        """End the starter (it exits as its control socket closes) and reap it, so that
        its CPU, and its sessions', is counted as this process's children's."""
        self._control.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()

    def start(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str],
        stdout: int,
        stderr: int,
        new_session: bool = False,
    ) -> WarmProcess | None:
        """Fork a session (``argv``: pytest's arguments, after ``-m pytest``); ``None``
        if the starter is gone (the caller starts a new interpreter instead)."""
        reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {
            "argv": list(argv),
            "cwd": str(cwd),
            "env": {**env, FORKED_MARK: "1"},
            "new_session": new_session,
            # What a new process inherits of this one's signals: those it ignores.
            "ignored": [int(s) for s in INHERITED if signal.getsignal(s) is signal.SIG_IGN],
        }
        try:
            with open(os.devnull, "rb") as stdin, self._lock:
                socket.send_fds(
                    self._control,
                    [json.dumps(request).encode()],
                    [theirs.fileno(), stdin.fileno(), stdout, stderr],
                )
            theirs.close()
            pid = int(reply.recv(64))
        except (OSError, ValueError):
            self.broken = True
            reply.close()
            theirs.close()
            return None
        return WarmProcess(pid, reply, [sys.executable, "-m", "pytest", *argv])


def fork_session(
    command: Sequence[str | os.PathLike[str]],
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    stdout: int,
    stderr: int,
    new_session: bool = False,
) -> WarmProcess | None:
    """``command`` forked from this process's starter if it is a ``python -m pytest`` and
    a starter runs; ``None`` otherwise (the caller starts a new interpreter)."""
    arguments = arguments_after_pytest(command)
    starter = WarmStarter.shared() if arguments is not None else None
    if arguments is None or starter is None:
        return None
    return starter.start(
        arguments, cwd=cwd, env=env, stdout=stdout, stderr=stderr, new_session=new_session
    )


def arguments_after_pytest(command: Sequence[str | os.PathLike[str]]) -> list[str] | None:
    """The arguments after ``python -m pytest`` when ``command`` runs this interpreter's pytest."""
    parts = [os.fspath(part) for part in command]
    if len(parts) < 2 or parts[0] != sys.executable:
        return None
    if parts[1] == "-mpytest":
        return parts[2:]
    if parts[1:3] == ["-m", "pytest"]:
        return parts[3:]
    return None


# --- the starter's own process -------------------------------------------------------


def _warm_up() -> None:
    """Import what sessions import, through pytest's assertion rewriting, in a session."""
    import pytest

    class Warm:
        @pytest.hookimpl(trylast=True)
        def pytest_configure(self) -> None:
            import importlib

            for name in WARM_MODULES:
                importlib.import_module(name)

    folder = Path(tempfile.mkdtemp(prefix="toolnexus-warm-"))
    try:
        (folder / "pytest.ini").write_text("[pytest]\n")  # its own root: no conftest above
        os.chdir(folder)
        pytest.main(["--co", "-q", "-p", "no:cacheprovider", str(folder)], plugins=[Warm()])
    finally:
        os.chdir(tempfile.gettempdir())
        shutil.rmtree(folder, ignore_errors=True)


def _base_path() -> list[str]:
    """The import path a fresh ``python -m pytest`` starts with, before its own entries."""
    own = {str(Path(__file__).resolve().parent)}
    own.update(filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    return [entry for entry in sys.path if entry not in own]


def _home_hypothesis_here() -> None:
    """Hypothesis takes its storage folder from the working directory it was imported in
    (the warm-up's folder, removed since); a session's is its own, as a new process's."""
    configuration = sys.modules.get("hypothesis.configuration")
    if configuration is not None:
        vars(configuration)["__hypothesis_home_directory_default"] = Path.cwd() / ".hypothesis"
        vars(configuration)["__hypothesis_home_directory"] = None


def _child(request: dict[str, Any], fds: list[int], base_path: list[str]) -> None:
    """In the forked child: become the session and end as ``python -m pytest`` ends."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for number in INHERITED:
            if number in request["ignored"]:
                signal.signal(number, signal.SIG_IGN)
            elif number == signal.SIGINT:
                signal.signal(number, signal.default_int_handler)  # as Python's start sets it
            else:
                signal.signal(number, signal.SIG_DFL)
        if request["new_session"]:
            os.setsid()
        _, stdin, stdout, stderr = fds
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        os.closerange(3, 65536)
        env: dict[str, str] = request["env"]
        os.environ.clear()
        os.environ.update(env)
        os.chdir(request["cwd"])
        extra = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        sys.path[:] = [request["cwd"], *extra, *base_path]
        sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
        sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
        _home_hypothesis_here()
        import runpy

        sys.argv = ["-m", *request["argv"]]  # as ``-m`` leaves it until runpy names the file
        try:
            runpy.run_module("pytest", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                sys.stderr.write(f"{exc.code}\n")
                code = 1
        except KeyboardInterrupt:
            code = 128 + signal.SIGINT
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        threading._shutdown()  # type: ignore[attr-defined]  # what the interpreter's exit does
        atexit._run_exitfuncs()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _serve(control: socket.socket) -> None:
    base_path = _base_path()
    replies: dict[int, socket.socket] = {}
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    while True:
        ready, _, _ = select.select([control, wake_read], [], [])
        if wake_read in ready:
            os.read(wake_read, 4096)
        while replies:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            reply = replies.pop(pid, None)
            if reply is not None:
                with contextlib.suppress(OSError):
                    reply.send(str(os.waitstatus_to_exitcode(status)).encode())
                reply.close()
        if control in ready:
            try:
                message, fds, _, _ = socket.recv_fds(control, _MAX_MESSAGE, 4)
            except OSError:
                return
            if not message:
                return  # the test process ended
            request = json.loads(message)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                control.close()
                _child(request, list(fds), base_path)
            reply = socket.socket(fileno=fds[0])
            for fd in fds[1:]:
                os.close(fd)
            reply.send(str(pid).encode())
            replies[pid] = reply


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    try:
        _warm_up()
        running = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
        if running:
            sys.stderr.write(f"its warm-up left threads running: {running}\n")
            return
    except BaseException as exc:
        sys.stderr.write(f"its warm-up failed: {exc!r}\n")
        return
    control.send(b"ready")
    _serve(control)


if __name__ == "__main__":
    sys.path.pop(0)  # this file's folder: a session's import path is its own
    main()
