"""Real pytest sessions started once for a whole module, as ``runpytest_subprocess`` starts them.

pytester is per test; a session that several tests assert on (one report, read by
each for its own part) is started by a module-scoped fixture through ``run_session``,
in a folder of its own and with the environment pytester would give it. A session
that mostly waits is started with ``start_session`` instead, as its module begins
(``START_EARLY``), and runs beside the module's other tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Hashable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pytest

#: Installed plugins that no session our tests start uses, blocked in each of them:
#: langsmith's (langchain-core, a test dependency, brings it) roughly doubles every
#: pytest start (about 1.5 s of CPU); respx's imports httpx for a fixture nobody asks
#: for (the fakes mount their own routers).
UNUSED_PLUGINS = "-p no:langsmith_plugin -p no:respx"


@dataclass(frozen=True)
class Session:
    """What a finished session left: its exit status, its output, the folder it ran in."""

    ret: int
    stdout: pytest.LineMatcher
    stderr: str
    path: Path

    def report(self, name: str = "report.json") -> dict[str, Any]:
        """The JSON report the session wrote (``--toolnexus-report NAME``)."""
        found: dict[str, Any] = json.loads((self.path / name).read_text())
        return found

    def text(self) -> str:
        """Everything it printed, for assertion messages."""
        return "\n".join(self.stdout.lines) + "\n" + self.stderr


def run_session(
    path: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> Session:
    """``python -m pytest ARGS`` in ``path``, with pytester's isolation.

    As ``Pytester.runpytest_subprocess``: ``path`` is the working directory, the
    first entry of ``PYTHONPATH`` and ``HOME``; the outer session's ``PYTEST_ADDOPTS``
    is replaced by the unused plugins' blocks; ``--basetemp`` lies inside ``path``.
    """
    return start_session(path, *args, env=env, timeout=timeout).result()


def start_session(
    path: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> RunningSession:
    """``run_session``, returning at once: the session runs while the caller goes on.

    For a session that mostly waits (a blocked server, a hung import, a call timeout):
    a module-scoped fixture named in the module's ``START_EARLY`` starts it as the
    module's first test begins, so it runs beside the module's other tests.
    """
    environment = dict(os.environ)
    environment.update(
        HOME=str(path),
        USERPROFILE=str(path),
        PY_COLORS="0",
        PYTEST_ADDOPTS=UNUSED_PLUGINS,
        PYTHONPATH=os.pathsep.join(filter(None, [str(path), os.environ.get("PYTHONPATH")])),
    )
    environment.pop("TOX_ENV_DIR", None)
    environment.update(env or {})
    command = [sys.executable, "-m", "pytest", f"--basetemp={path / 'runpytest-0'}", *args]
    return RunningSession(command, path, timeout, env=environment)


class RunningSession:
    """A command running in ``path`` in the background, a session ``start_session``
    started or another whose output is read as one's: ``result()`` waits for its end.

    ``env`` is its whole environment (this process's when ``None``).
    """

    def __init__(
        self,
        command: list[str],
        path: Path,
        timeout: float,
        *,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._process = subprocess.Popen(
            command,
            cwd=path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._path = path
        self._ended: Future[Session] = Future()
        threading.Thread(
            target=self._wait, args=(timeout,), name=f"session in {path.name}", daemon=True
        ).start()

    def _wait(self, timeout: float) -> None:
        try:
            out, err = self._process.communicate(timeout=timeout)
        except BaseException as exc:  # the timeout's TimeoutExpired: the test fails on it
            self.stop()
            self._process.communicate()
            self._ended.set_exception(exc)
            return
        lines = pytest.LineMatcher(out.splitlines())
        self._ended.set_result(Session(self._process.returncode, lines, err, self._path))

    def result(self) -> Session:
        """The finished session (raises ``TimeoutExpired`` if it outlived its timeout)."""
        return self._ended.result()

    def stop(self) -> None:
        """Kill it if it still runs (its module ended without waiting for it)."""
        if self._process.poll() is None:
            self._process.kill()


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


Key = TypeVar("Key", bound=Hashable)


class SessionsByKey(Generic[Key]):
    """Sessions of one module, each started once, in a folder of its own, by ``start``:
    its module-scoped fixture starts those it can as the module begins (``START_EARLY``),
    a test the one it reads if that has not started yet."""

    def __init__(
        self, folders: pytest.TempPathFactory, start: Callable[[Path, Key], RunningSession]
    ) -> None:
        self._folders = folders
        self._start = start
        self._started: dict[Key, RunningSession] = {}

    def start(self, key: Key) -> RunningSession:
        if key not in self._started:
            self._started[key] = self._start(self._folders.mktemp(str(key)), key)
        return self._started[key]

    def stop(self) -> None:
        for running in self._started.values():
            running.stop()
