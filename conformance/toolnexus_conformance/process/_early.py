"""MCP stdio servers started before the MCP SDK is imported, so that the two overlap.

Importing the SDK (pydantic's models of every protocol version) takes about a
second of CPU, and a server written in Python or JavaScript takes as long to
start; done one after the other they are most of a one-server run's collection.
The command line of a ``stdio:`` target, and an ``mcp.json``'s stdio entries, are
known at configure time, so their servers are started first, in their sandbox, and
the SDK is imported while they boot: the transport adopts a process
(``toolnexus_ref.mcp.StartingLauncher``) if it starts the same command line,
environment and working directory. A process nobody
adopted is ended by ``close``.

This module imports neither the SDK nor anything that does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.util import find_spec
from pathlib import Path

import anyio
import anyio.abc

__all__ = ["SDK_INHERITED", "EarlyServers", "sdk_environment", "sdk_installed"]

#: The variables the SDK's stdio client passes to a server on POSIX
#: (``mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS``); a test keeps the two the same,
#: and a difference would only cost the overlap (nothing would be adopted).
SDK_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
#: How long a process nobody adopted gets between SIGTERM and SIGKILL.
KILL_GRACE = 1.0
#: How long ``close`` waits for a start still under way (a process is one exec away).
START_WAIT = 5.0

#: ``(argv, env, cwd) -> (argv, env)``, as ``toolnexus_ref.mcp.Launcher``.
Launch = Callable[[Sequence[str], Mapping[str, str], Path | None], tuple[list[str], dict[str, str]]]
_Key = tuple[tuple[str, ...], frozenset[tuple[str, str]], str | None]


def sdk_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What ``mcp.client.stdio.get_default_environment`` gives a server, without the SDK."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name in SDK_INHERITED
        if (value := source.get(name)) is not None and not value.startswith("()")
    }


def sdk_installed() -> bool:
    """Whether the kit's MCP client can load here (mcp 2, which brings ``mcp_types``).

    Without it the target's load fails at once, and a server started for it would
    only have to be ended.
    """
    try:
        return find_spec("mcp") is not None and find_spec("mcp_types") is not None
    except (ImportError, ValueError):
        return False


def _key(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None) -> _Key:
    return tuple(argv), frozenset(env.items()), None if cwd is None else str(cwd)


class EarlyServers:
    """A launcher (``toolnexus_ref.mcp.StartingLauncher``) holding servers started early.

    ``start``, ``started`` and ``close`` run on the one event loop the target is
    loaded and closed on (the processes are bound to it); a command is started
    once however often, and from however many threads, it is asked for.
    """

    def __init__(self, launch: Launch) -> None:
        self._launch = launch
        self._starting: dict[_Key, asyncio.Task[anyio.abc.Process | None]] = {}
        #: Set by ``close``: a start asked for after it (a thread that was late) is not made.
        self._closed = False

    def __call__(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, /
    ) -> tuple[list[str], dict[str, str]]:
        return self._launch(argv, env, cwd)

    async def start(
        self, argv: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None = None
    ) -> None:
        """Start ``argv`` as the SDK's transport would, for it to adopt later.

        ``env``: the variables the transport gives the server beyond the SDK's safe
        ones (an mcp.json entry's). Returns once it is started (or, when it was asked
        for before, once that start is over). A command that cannot be started is left
        for the transport to try again and report, as it would have without this.
        """
        task = self.begin(argv, cwd, env)
        if task is not None:
            await asyncio.shield(task)

    async def start_all(
        self, starts: Iterable[tuple[Sequence[str], Path | None, Mapping[str, str]]]
    ) -> None:
        """Start each ``(argv, cwd, env)`` at once, as ``start`` does each.

        All are begun in this coroutine's first step, before it waits for any: a load
        submitted to the loop after it finds every one of them under way (``started``
        waits for it), however soon the load asks.
        """
        tasks = [t for argv, cwd, env in starts if (t := self.begin(argv, cwd, env)) is not None]
        if tasks:
            await asyncio.wait([asyncio.shield(t) for t in tasks])

    def begin(
        self, argv: Sequence[str], cwd: Path | None, env: Mapping[str, str] | None = None
    ) -> asyncio.Task[anyio.abc.Process | None] | None:
        """The start of ``argv`` under way (begun now unless it was before); on the loop."""
        if os.name != "posix" or self._closed:
            return None  # the transport starts its own (off POSIX no process group ends it)
        environment = {**sdk_environment(), **(env or {})}
        key = _key(argv, environment, cwd)
        task = self._starting.get(key)
        if task is None:
            task = self._starting[key] = asyncio.ensure_future(self._open(argv, environment, cwd))
        return task

    async def _open(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None
    ) -> anyio.abc.Process | None:
        command, environment = self._launch(argv, env, cwd)
        try:
            return await anyio.open_process(
                command, env=environment, cwd=cwd, stderr=subprocess.PIPE, start_new_session=True
            )
        except OSError:
            return None

    async def started(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, /
    ) -> anyio.abc.Process | None:
        """The process started for exactly this, handed over once; else ``None``.

        A start still under way is waited for (at most ``START_WAIT``): the transport
        asks as soon as the SDK is loaded, at once where something imported it
        before the run, and a process it did not wait for would be started twice.
        """
        key = _key(argv, env, cwd)
        task = self._starting.get(key)
        if task is None:
            return None
        if not task.done():
            await asyncio.wait([asyncio.shield(task)], timeout=START_WAIT)
        if not task.done() or task.cancelled() or task.exception() is not None:
            return None  # left for ``close``: the transport starts its own
        if self._starting.get(key) is not task:
            return None  # handed to another that asked while this one waited
        del self._starting[key]
        return task.result()

    async def close(self) -> None:
        """End every process nobody adopted: stdin closed, SIGTERM, then SIGKILL.

        Nothing is started early after this (the transport still starts its own).
        """
        self._closed = True
        while self._starting:
            _, task = self._starting.popitem()
            if not task.done():
                await asyncio.wait({task}, timeout=START_WAIT)
            if not task.done() or task.cancelled() or task.exception() is not None:
                task.cancel()
                continue
            process = task.result()
            if process is not None:
                await _end(process)


async def _end(process: anyio.abc.Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    _signal_group(process.pid, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE):
        await process.wait()
    _signal_group(process.pid, signal.SIGKILL)
    with anyio.move_on_after(KILL_GRACE):
        await process.wait()
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.aclose()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
