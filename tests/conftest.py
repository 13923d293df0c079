"""Our own suite is deterministic: hypothesis derandomized, no database writes in CI."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest
from _sessions import (
    SESSION_ADDOPTS,
    EarlySessions,
    early_names,
    whole_module_here,
    without_xdist,
)
from _warm import fork_session
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=50,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=50)
settings.load_profile(os.environ.get("TOOLNEXUS_HYPOTHESIS_PROFILE", "ci"))

#: The sessions our tests start in subprocesses do not load the plugins none of them
#: uses (the suite's own session skips langsmith's through addopts), and search no
#: deeper than the floor of examples (``SESSION_ADDOPTS``).
os.environ["PYTEST_ADDOPTS"] = " ".join(
    filter(None, [os.environ.get("PYTEST_ADDOPTS", ""), SESSION_ADDOPTS])
)

#: The sessions our tests start are not the CI job's: under GitHub Actions they would
#: append their summaries to the job's (tests that check that output set these).
#: Nor are they this xdist worker's: run under ``-n``, a session a test starts would
#: inherit the worker's variables and look like a worker itself.
for _name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
    os.environ.pop(_name, None)
_OWN_XDIST = {
    name: os.environ.pop(name)
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")
    if name in os.environ
}


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish() -> Iterator[None]:
    """The worker's own variables again, once no test starts a session any more.

    syrupy tells an xdist worker by ``PYTEST_XDIST_WORKER`` as the session ends:
    without it a worker kept its snapshot report to itself, and the run said "received
    0 of N xdist worker snapshot reports; unused snapshot detection skipped".
    """
    os.environ.update(_OWN_XDIST)
    return (yield)


@pytest.fixture(autouse=True, scope="session")
def _user_cache_outside_projects(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[None]:
    """pytester points ``HOME`` at each test's project; the kit's user cache must not land there.

    One cache for the run, so hypothesis's unicode table is built once, not per
    session: under xdist the workers share their controller's
    base folder (hypothesis writes a table whole, then renames it into place).
    """
    base = tmp_path_factory.getbasetemp()
    if hasattr(pytestconfig, "workerinput"):  # an xdist worker: its base is the run's/popen-gwN
        base = base.parent
    cache = base / "user-cache"
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous


def _reads_an_early_session(item: pytest.Item) -> bool:
    early = early_names(getattr(item, "module", None))
    return any(name in early for name in getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """In each module, the tests that read a session started early run last.

    The module's other tests then run while that session does: a test reading it
    first would only wait for it. Modules keep their order, and tests their order
    otherwise.
    """
    modules: dict[object, int] = {}
    for item in items:
        modules.setdefault(getattr(item, "module", None), len(modules))
    items.sort(
        key=lambda item: (modules[getattr(item, "module", None)], _reads_an_early_session(item))
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Each xdist worker is told the run's ``--dist``: its own option says ``no``."""
    node.workerinput["toolnexus_tests_dist"] = node.config.getoption("dist")


@pytest.fixture(autouse=True, scope="session")
def _early_sessions(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    _user_cache_outside_projects: None,
) -> Iterator[None]:
    """The early fixtures' sessions (``_sessions.early``): in a run without xdist, all
    that the selected tests read start now, ahead of them, a few at a time
    (``TOOLNEXUS_TESTS_AT_ONCE``; by default one fewer than the cores, at least one),
    while the run goes on.

    Most of the suite's time without xdist was spent waiting for sessions one after
    another, each on one core, while the others idled. The run's own tests keep a
    core: on two cores, two sessions at a time beside them made the whole run slower
    (369 s) than one at a time (332 s).
    """
    default = max(1, (os.cpu_count() or 1) - 1)
    at_once = int(os.environ.get("TOOLNEXUS_TESTS_AT_ONCE", default))
    sessions = EarlySessions.install(request.config, tmp_path_factory, at_once)
    if without_xdist(request.config) and at_once > 0:
        keys: dict[tuple[str, str], None] = {}
        for item in request.session.items:
            module = getattr(item, "module", None)
            early = early_names(module)
            for name in getattr(item, "fixturenames", ()):
                if name in early:
                    keys[(module.__name__, name)] = None  # type: ignore[union-attr]
        sessions.ahead(list(keys))
    yield
    sessions.stop()


@pytest.fixture(autouse=True, scope="module")
def _sessions_started_early(request: pytest.FixtureRequest, _early_sessions: None) -> None:
    """The module's early fixtures (``_sessions.early``), set up as it begins.

    Each starts sessions that mostly wait: set up as the module's first test begins,
    they run beside the module's other tests, and the tests that read them run last
    (``pytest_collection_modifyitems``). Only the fixtures a selected test of the
    module uses are set up, and only where the whole module runs in this process:
    xdist's ``load`` and ``worksteal`` hand a module's tests to any worker, and each
    worker would start the sessions that only one of them reads.
    """
    early = early_names(request.module)
    if not early or not whole_module_here(request.config):
        return
    used = {
        name
        for item in request.session.items
        if getattr(item, "module", None) is request.module
        for name in getattr(item, "fixturenames", ())
    }
    for name in sorted(early & used):
        # One that fails to start errors the tests that read it, not the module's others.
        with contextlib.suppress(Exception):
            request.getfixturevalue(name)


@pytest.fixture
def tls_contexts_built(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every TLS context built from now on (``ssl.create_default_context``), by anyone."""
    import ssl

    built: list[object] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    return built


@pytest.fixture
def pytester(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> pytest.Pytester:
    """pytester's, with the unused plugins blocked and the depth 0 in the sessions it
    starts (``SESSION_ADDOPTS``).

    pytester clears ``PYTEST_ADDOPTS`` (the outer session's options must not leak in),
    which would let every ``runpytest_subprocess`` load them again.
    """
    monkeypatch.setenv("PYTEST_ADDOPTS", SESSION_ADDOPTS)
    if request.node.get_closest_marker("fresh_interpreter") is None:
        monkeypatch.setattr(pytester, "popen", _forked_popen(pytester.popen))
    return pytester


def _forked_popen(popen: Any) -> Any:
    """pytester's ``popen``, forking a ``python -m pytest`` from the warm starter (``_warm``)."""

    def popen_or_fork(
        cmdargs: Any, stdout: Any = None, stderr: Any = None, stdin: Any = None, **kw: Any
    ) -> Any:
        if (
            stdin is pytest.Pytester.CLOSE_STDIN
            and set(kw) <= {"close_fds"}
            and hasattr(stdout, "fileno")
            and hasattr(stderr, "fileno")
        ):
            env = os.environ.copy()
            path = filter(None, [os.getcwd(), env.get("PYTHONPATH", "")])  # as pytester's
            env["PYTHONPATH"] = os.pathsep.join(path)
            stdout.flush()
            stderr.flush()
            forked = fork_session(
                cmdargs, cwd=os.getcwd(), env=env, stdout=stdout.fileno(), stderr=stderr.fileno()
            )
            if forked is not None:
                return forked
        return popen(cmdargs, stdout=stdout, stderr=stderr, stdin=stdin, **kw)

    return popen_or_fork
