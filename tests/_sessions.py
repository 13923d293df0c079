"""Real pytest sessions started once for a whole module, as ``runpytest_subprocess`` starts them.

pytester is per test; a session that several tests assert on (one report, read by
each for its own part) is started by a module-scoped fixture through ``run_session``,
in a folder of its own and with the environment pytester would give it. A session
that mostly waits is started with ``start_session`` instead, by an early fixture
(``early``) before the tests that read it, and runs beside other tests; one that reads
what another wrote starts once that one ends (``SessionAfter``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

import pytest
from _warm import WarmProcess, fork_session

#: Installed plugins that no session our tests start uses, blocked in each of them:
#: langsmith's (langchain-core, a test dependency, brings it) roughly doubles every
#: pytest start (about 1.5 s of CPU); respx's imports httpx for a fixture nobody asks
#: for (the fakes mount their own routers).
UNUSED_PLUGINS = "-p no:langsmith_plugin -p no:respx"
#: What every session our tests start is given (``PYTEST_ADDOPTS``): those plugins
#: blocked, and no search past the floor of examples and the edge values
#: (``toolnexus_depth = 0``). None of these sessions asserts on what the depth finds:
#: the tests of the depth give ``--toolnexus-depth``, which outranks the ini key, and
#: the default depth is run end to end by CI's conformance job and the built wheel's
#: check. Measured serially: the suite took 340.5 s and 376 s of CPU at the default
#: depth, 315.2 s and 322 s with this.
SESSION_ADDOPTS = f"{UNUSED_PLUGINS} -o toolnexus_depth=0"


@dataclass(frozen=True)
class Session:
    """What a finished session left: its exit status, its output, the folder it ran in."""

    ret: int
    stdout: pytest.LineMatcher
    stderr: str
    path: Path
    #: What the session's ``at_end`` found the moment it ended (``None`` without one).
    at_end: Any = None

    def report(self, name: str = "report.json") -> dict[str, Any]:
        """The JSON report the session wrote (``--toolnexus-report NAME``)."""
        found: dict[str, Any] = json.loads((self.path / name).read_text())
        return found

    def text(self) -> str:
        """Everything it printed, for assertion messages."""
        return "\n".join(self.stdout.lines) + "\n" + self.stderr

    def run_result(self) -> pytest.RunResult:
        """As ``runpytest_subprocess`` returns it, for pytester's own assertions
        (``assert_outcomes``, ``parseoutcomes``, ``stdout.fnmatch_lines``)."""
        return pytest.RunResult(
            self.ret, list(self.stdout.lines), self.stderr.splitlines(), duration=0.0
        )


def run_session(
    path: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
    fresh: bool = False,
) -> Session:
    """``python -m pytest ARGS`` in ``path``, with pytester's isolation.

    As ``Pytester.runpytest_subprocess``: ``path`` is the working directory, the
    first entry of ``PYTHONPATH`` and ``HOME``; the outer session's ``PYTEST_ADDOPTS``
    is replaced by the unused plugins' blocks; ``--basetemp`` lies inside ``path``.
    The session is forked from the warm starter (``_warm``); with ``fresh``, started
    as a new interpreter.
    """
    return start_session(path, *args, env=env, timeout=timeout, fresh=fresh).result()


def start_session(
    path: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    timeout: float = 300,
    at_end: Callable[[], object] | None = None,
    fresh: bool = False,
) -> RunningSession:
    """``run_session``, returning at once: the session runs while the caller goes on.

    For a session that mostly waits (a blocked server, a hung import, a call timeout):
    an early fixture (``early``) starts it before the tests that read it. ``at_end``
    is for ``RunningSession``.
    """
    command = [sys.executable, "-m", "pytest", f"--basetemp={path / 'runpytest-0'}", *args]
    return RunningSession(
        command, path, timeout, env=session_environment(path, env), at_end=at_end, fresh=fresh
    )


def session_environment(path: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a session started in ``path`` runs with, as pytester gives it: ``path`` is
    its ``HOME`` and first import root, and its ``PYTEST_ADDOPTS`` the suite's own;
    ``env`` on top. Also for a process that runs sessions itself (an xdist host)."""
    environment = _base_environment()
    environment.update(
        HOME=str(path),
        USERPROFILE=str(path),
        PY_COLORS="0",
        PYTEST_ADDOPTS=SESSION_ADDOPTS,
        PYTHONPATH=os.pathsep.join(filter(None, [str(path), environment.get("PYTHONPATH")])),
    )
    environment.pop("TOX_ENV_DIR", None)
    environment.update(env or {})
    return environment


def _fork(
    command: list[str], path: Path, env: Mapping[str, str]
) -> tuple[WarmProcess, tuple[IO[bytes], IO[bytes]]] | None:
    """``command`` forked from the warm starter (``fork_session``), its output going to
    files, read once it ends; ``None`` where it is not forked."""
    outputs = (tempfile.TemporaryFile(), tempfile.TemporaryFile())  # noqa: SIM115 (read at its end)
    process = fork_session(
        command,
        cwd=path,
        env=env,
        stdout=outputs[0].fileno(),
        stderr=outputs[1].fileno(),
        new_session=hasattr(os, "killpg"),
    )
    if process is None:
        for output in outputs:
            output.close()
        return None
    return process, outputs


def _read_whole(output: IO[bytes]) -> bytes:
    output.seek(0)
    data = output.read()
    output.close()
    return data


class RunningSession:
    """A command running in ``path`` in the background, a session ``start_session``
    started or another whose output is read as one's: ``result()`` waits for its end.
    A ``python -m pytest`` is forked from the warm starter (``_warm``) unless ``fresh``.

    ``env`` is its whole environment (this process's when ``None``). ``at_end`` is called
    the moment it ends, and what it returns is the ``Session``'s ``at_end``: for what a
    session must not leave behind (processes, files). Looked for only when a test reads
    a session started long before, a leftover that lives a while would be gone by
    then, and the check would pass whatever the session left.
    """

    def __init__(
        self,
        command: list[str],
        path: Path,
        timeout: float,
        *,
        env: Mapping[str, str] | None = None,
        at_end: Callable[[], object] | None = None,
        fresh: bool = False,
    ) -> None:
        environment = _base_environment() if env is None else env
        forked = None if fresh else _fork(command, path, environment)
        self._outputs: tuple[IO[bytes], IO[bytes]] | None = None
        self._process: subprocess.Popen[str] | WarmProcess
        if forked is not None:
            self._process, self._outputs = forked
        else:
            self._process = subprocess.Popen(
                command,
                cwd=path,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                # A group of its own, so that ``stop`` ends what it started with it.
                start_new_session=hasattr(os, "killpg"),
            )
        self._path = path
        self._at_end = at_end
        self._ended: Future[Session] = Future()
        threading.Thread(
            target=self._wait, args=(timeout,), name=f"session in {path.name}", daemon=True
        ).start()

    def _communicate(self, timeout: float | None) -> tuple[str, str]:
        if self._outputs is None:
            assert isinstance(self._process, subprocess.Popen)
            return self._process.communicate(timeout=timeout)
        self._process.wait(timeout)
        out, err = (
            _read_whole(output).decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
            for output in self._outputs
        )
        return out, err

    def _wait(self, timeout: float) -> None:
        try:
            out, err = self._communicate(timeout)
        except BaseException as exc:  # the timeout's TimeoutExpired: the test fails on it
            self.stop()
            self._communicate(None)
            self._ended.set_exception(exc)
            return
        lines = pytest.LineMatcher(out.splitlines())
        try:
            looked = self._at_end() if self._at_end is not None else None
        except BaseException as exc:  # the test reading the session fails on it
            self._ended.set_exception(exc)
            return
        self._ended.set_result(Session(self._process.returncode, lines, err, self._path, looked))

    def result(self) -> Session:
        """The finished session (raises ``TimeoutExpired`` if it outlived its timeout)."""
        return self._ended.result()

    def done(self) -> bool:
        return self._ended.done()

    def is_running(self) -> bool:
        """Whether its process still runs: what the at-once limit of ``EarlySessions`` counts."""
        return not self._ended.done()

    def when_ended(self, callback: Callable[[Future[Session]], object]) -> None:
        """Call ``callback`` with its end (``result()``'s future) the moment it ends, in the
        thread that waited for it; at once if it has ended."""
        self._ended.add_done_callback(callback)

    def stop(self) -> None:
        """Kill it if it still runs (its module ended without waiting for it), with the
        processes of its group: killed alone, a session's servers and workers would
        outlive the run."""
        if self._process.poll() is not None:
            return
        if hasattr(os, "killpg"):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGKILL)
        self._process.kill()


class SessionAfter:
    """A session started once ``first`` has ended, by ``start(first's Session)``: for a
    run that reads what an earlier one wrote (its report, a baseline, a cache).

    An early fixture's starter returns it (beside ``first``, or alone) without waiting
    for ``first``: ``start`` is called in the thread that waited for ``first``, so the
    thread starting the other early sessions goes on meanwhile. ``start`` must be quick
    (write files, start a session) and is called whatever ``first`` ended with: the
    test reads ``first`` before this one, and its assertions there say what went wrong.
    ``start`` is not called when ``first`` did not end (its timeout) or was stopped.
    Several may follow one session: they start side by side as it ends.
    """

    def __init__(
        self, first: RunningSession | SessionAfter, start: Callable[[Session], RunningSession]
    ) -> None:
        self.first = first
        self._start = start
        # ``start`` runs on another thread, later: it starts from the environment of now
        # (in an early fixture's starter, the run's as it was before any test).
        self._environment = _base_environment()
        self._lock = threading.Lock()
        self._stopped = False
        self._following: RunningSession | None = None
        self._ended: Future[Session] = Future()
        first.when_ended(self._begin)

    def _begin(self, first_ended: Future[Session]) -> None:
        # A done-callback's exception would only be logged: the test reading this
        # session fails on it instead.
        # Called at once, in the starter's own thread, when ``first`` has already ended:
        # its environment is put back after.
        outer = getattr(_ahead, "environment", None)
        with self._lock:
            try:
                if self._stopped:
                    raise RuntimeError("stopped before the session it follows ended")
                _ahead.environment = self._environment
                self._following = self._start(first_ended.result())
            except BaseException as exc:
                self._ended.set_exception(exc)
                return
            finally:
                _ahead.environment = outer
        self._following.when_ended(self._end)

    def _end(self, following_ended: Future[Session]) -> None:
        error = following_ended.exception()
        if error is not None:
            self._ended.set_exception(error)
        else:
            self._ended.set_result(following_ended.result())

    def result(self) -> Session:
        """Its finished session, once ``first`` and then it have ended."""
        return self._ended.result()

    def done(self) -> bool:
        return self._ended.done()

    def is_running(self) -> bool:
        """Whether it runs, or is about to: from ``first``'s end to its own. While
        ``first`` runs, ``first`` is what runs."""
        return self.first.done() and not self._ended.done()

    def when_ended(self, callback: Callable[[Future[Session]], object]) -> None:
        """As ``RunningSession.when_ended``: for a session that follows this one."""
        self._ended.add_done_callback(callback)

    def stop(self) -> None:
        """Kill whichever of ``first`` and it still runs; it does not start after this."""
        with self._lock:
            self._stopped = True
            following = self._following
        self.first.stop()
        if following is not None:
            following.stop()


def verdicts_of(
    report: Mapping[str, Any], tool: str, target: str | None = None
) -> dict[str, dict[str, Any]]:
    """The tool's verdicts by check; of one target's copy of it when ``target`` is given."""
    return {
        r["check"]: r
        for r in report["results"]
        if r["tool"] == tool and target in (None, r["target"])
    }


def healthy_judged(report: Mapping[str, Any], target: str | None = None) -> None:
    """The healthy neighbour (``convert_units``) of a hostile tool was judged, and passed."""
    mine = verdicts_of(report, "convert_units", target)
    assert mine, "the healthy neighbour got no verdicts"
    assert mine["TN601"]["outcome"] == "passed", mine["TN601"]
    assert mine["TN601"]["calls"] > 0  # counted in the tool's process, carried back
    assert mine["TN601"]["seconds"] > 0  # what that process took, timed by the session
    assert all(r["outcome"] != "failed" for r in mine.values()), mine


#: xdist's modes that run each module's tests in one process ("no": without xdist).
_WHOLE_MODULES = ("no", "loadfile", "loadscope")


def _distribution(config: pytest.Config) -> str:
    """The run's ``--dist``, in a worker too (the conftest's ``pytest_configure_node``
    passes it on: a worker's own option says ``no``)."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return str(config.getoption("dist", "no"))
    return str(workerinput.get("toolnexus_tests_dist", "load"))


def whole_module_here(config: pytest.Config) -> bool:
    """Whether every test of a module runs in this process: without xdist, or under
    ``loadfile``/``loadscope``. Elsewhere any worker may get any one test, and a session
    started for all of a module's tests would be started by each worker, for one."""
    return _distribution(config) in _WHOLE_MODULES


def without_xdist(config: pytest.Config) -> bool:
    """Whether the run is one process (no xdist, or ``-n 0``)."""
    return not hasattr(config, "workerinput") and _distribution(config) == "no"


Key = TypeVar("Key", bound=Hashable)


class SessionsByKey(Generic[Key]):
    """Sessions of one module, each started once, in a folder of its own under
    ``folder``, by ``start``: a test starts the one it reads if that has not started yet.

    Returned by an early fixture's starter (``early``), it starts the ``ahead`` keys
    before their tests wherever the whole module runs in this process; elsewhere
    (xdist's ``load``) a worker starts only the sessions its own tests read.
    """

    def __init__(
        self,
        folder: Path,
        start: Callable[[Path, Key], RunningSession],
        ahead: Iterable[Key] = (),
    ) -> None:
        self._folder = folder
        self._start = start
        self._ahead = list(ahead)
        self._started: dict[Key, RunningSession] = {}

    def start_ahead(self) -> None:
        for key in self._ahead:
            self.start(key)

    def start(self, key: Key) -> RunningSession:
        if key not in self._started:
            folder = self._folder / str(key)
            folder.mkdir()
            self._started[key] = self._start(folder, key)
        return self._started[key]

    def running(self) -> list[RunningSession]:
        return list(self._started.values())

    def stop(self) -> None:
        for running in self._started.values():
            running.stop()


#: The environment sessions started ahead of their tests are given: the run's, as it was
#: before any test ran. A test may change ``os.environ`` for itself (``monkeypatch``)
#: while a session for a later test starts on another thread, and that session must
#: not inherit it.
_ahead = threading.local()


def _base_environment() -> dict[str, str]:
    frozen: Mapping[str, str] | None = getattr(_ahead, "environment", None)
    return dict(os.environ if frozen is None else frozen)


def run_environment() -> dict[str, str]:
    """The environment a session starts from (a copy): in an early fixture's starter,
    the run's as it was before any test; elsewhere this process's. For a starter that
    gives a ``RunningSession`` a whole environment of its own."""
    return _base_environment()


#: Early fixtures by (module, name): see ``early``.
_STARTERS: dict[tuple[str, str], Callable[[Path], Any]] = {}

Started = TypeVar("Started")


def early(starter: Callable[[Path], Started]) -> Any:
    """A module-scoped fixture, named after ``starter``, holding what ``starter(folder)``
    started: a ``RunningSession``, a ``SessionAfter``, a ``SessionsByKey``, or a mapping,
    tuple or dataclass holding them.

    A session a test only reads the end of can start before the test does, and run
    while other tests do. In a run without xdist, every early fixture a selected test
    uses is started ahead (``EarlySessions``), a few at a time, in the order of the tests
    that read them; where a whole module runs in one xdist worker, its early fixtures
    start as the module begins (``tests/conftest.py``); otherwise when a test first
    asks. What is still running when its module ends is killed.

    ``starter`` must only write into ``folder`` (a new one, its own) and start
    sessions there: it may run on another thread while other tests run.
    """
    key = (starter.__module__, starter.__name__)
    _STARTERS[key] = starter

    @pytest.fixture(scope="module", name=starter.__name__)
    def fixture(request: pytest.FixtureRequest) -> Iterator[Started]:
        started: Started = EarlySessions.of(request.config).take(key)
        yield started
        for running in _sessions_in(started):
            running.stop()

    fixture.__doc__ = starter.__doc__
    return fixture


def early_names(module: object) -> set[str]:
    """The early fixtures ``module`` defines."""
    name = getattr(module, "__name__", None)
    return {fixture for owner, fixture in _STARTERS if owner == name}


def _sessions_in(started: object) -> list[RunningSession | SessionAfter]:
    """The sessions an early fixture's starter started, wherever it keeps them (a
    ``SessionAfter`` with the sessions it follows)."""
    if isinstance(started, RunningSession):
        return [started]
    if isinstance(started, SessionAfter):
        return [*_sessions_in(started.first), started]
    if isinstance(started, SessionsByKey):
        return started.running()
    if dataclasses.is_dataclass(started) and not isinstance(started, type):
        started = [getattr(started, field.name) for field in dataclasses.fields(started)]
    if isinstance(started, Mapping):
        started = list(started.values())
    if isinstance(started, (list, tuple)):
        return [running for part in started for running in _sessions_in(part)]
    return []


_EARLY_KEY = pytest.StashKey["EarlySessions"]()


class EarlySessions:
    """The early fixtures' sessions of a run, each started once, some ahead of their tests.

    ``ahead(keys)`` starts those given, in their order, on a thread of their own,
    keeping no more than ``at_once`` of their sessions running: the run's other tests
    share the machine with them, and several of these sessions time what they watch.
    A test that asks for one not started yet starts it at once (``take``).
    """

    def __init__(self, folders: pytest.TempPathFactory, at_once: int, whole_modules: bool) -> None:
        self._folders = folders
        self._whole_modules = whole_modules
        self._at_once = at_once
        self._environment = dict(os.environ)
        self._lock = threading.Lock()
        self._started: dict[tuple[str, str], Any] = {}
        self._folders_ahead: dict[tuple[str, str], Path] = {}
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def install(
        cls, config: pytest.Config, folders: pytest.TempPathFactory, at_once: int
    ) -> EarlySessions:
        sessions = config.stash[_EARLY_KEY] = cls(folders, at_once, whole_module_here(config))
        return sessions

    @classmethod
    def of(cls, config: pytest.Config) -> EarlySessions:
        return config.stash[_EARLY_KEY]

    def take(self, key: tuple[str, str]) -> Any:
        """What the early fixture ``key`` started, starting it now if it has not been."""
        with self._lock:
            if key not in self._started:
                folder = self._folders_ahead.get(key) or self._folders.mktemp(key[1])
                self._started[key] = self._start(key, folder)
            return self._started[key]

    def ahead(self, keys: list[tuple[str, str]]) -> None:
        """Start ``keys`` ahead of their tests, in their order (see the class)."""
        self._folders_ahead = {key: self._folders.mktemp(key[1]) for key in keys}
        self._thread = threading.Thread(
            target=self._start_ahead,
            args=(dict(self._folders_ahead),),
            name="early sessions",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Start nothing more, and kill what still runs (the run ends)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            for started in self._started.values():
                for running in _sessions_in(started):
                    running.stop()

    def _start_ahead(self, folders: dict[tuple[str, str], Path]) -> None:
        for key, folder in folders.items():
            while self._running() >= self._at_once:
                if self._stopping.wait(0.05):
                    return
            with self._lock:
                if self._stopping.is_set():
                    return
                if key not in self._started:
                    try:
                        self._started[key] = self._start(key, folder)
                    except Exception:
                        # Asked for by its test (``take``), it starts again in a folder
                        # of its own and fails there, for that test to report; the
                        # others still start ahead.
                        self._folders_ahead.pop(key, None)

    def _running(self) -> int:
        with self._lock:
            started = list(self._started.values())
        # Once each: a session that others follow is held by each of them.
        sessions = {id(running): running for part in started for running in _sessions_in(part)}
        return sum(running.is_running() for running in sessions.values())

    def _start(self, key: tuple[str, str], folder: Path) -> Any:
        _ahead.environment = self._environment
        try:
            started = _STARTERS[key](folder)
            if isinstance(started, SessionsByKey) and self._whole_modules:
                started.start_ahead()
            return started
        finally:
            _ahead.environment = None
