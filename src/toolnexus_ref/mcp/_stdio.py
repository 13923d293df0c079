"""A stdio transport that keeps what the SDK's throws away: stderr, the exit code, the tree.

``mcp.client.stdio.stdio_client`` writes the server's stderr to ours and kills the
process group only when the leader outlives its grace period. A checker needs the
stderr tail and the exit code to explain a failure, and must not leave behind a
grandchild whose parent exited politely, so this transport owns the process. What
the server writes is read within the bounds of ``_framing``; a server that breaks
one is stopped, and ``ServerProcess.fault`` says which.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio
import anyio.abc
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from ._framing import (
    MAX_MESSAGE_BYTES,
    MAX_STDERR_BYTES,
    LineReader,
    LineTooLong,
    NotificationRate,
    StderrTail,
    StdoutNoise,
)

__all__ = ["Launcher", "ServerProcess", "StartingLauncher", "stdio_transport"]

#: The most of the server's stdout taken at once. A read that takes this much found at
#: least as much waiting: the server is ahead of the kit (``NotificationRate``).
READ_SIZE = 65536

#: Turns a server's command line, environment and working directory into what is
#: started (a sandbox around it, limits): ``(argv, env, cwd) -> (argv, env)``.
Launcher = Callable[
    [Sequence[str], Mapping[str, str], "Path | None"], tuple[list[str], dict[str, str]]
]


@runtime_checkable
class StartingLauncher(Protocol):
    """A launcher that may have started a server already: its process is adopted.

    Importing the SDK takes about a second, and so does a server's own start-up:
    a caller that knows the command before the SDK is loaded starts the server
    first (``toolnexus_conformance.process._early``), and the transport takes that
    process over rather than start another. ``started`` gives it up at most once,
    and only for the same command line, environment and working directory; a start
    still under way is waited for.
    """

    def __call__(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, /
    ) -> tuple[list[str], dict[str, str]]: ...

    async def started(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None, /
    ) -> anyio.abc.Process | None: ...


#: How long a server may take to exit once its stdin closes, before its group is signalled.
EXIT_GRACE = 1.0
#: How long the group gets between SIGTERM and SIGKILL.
KILL_GRACE = 1.0
#: How long a status waits for the last of a dead server's stderr to be read.
STDERR_DRAIN = 1.0


@dataclass(slots=True)
class ServerProcess:
    """What we know of one server process, readable from any task at any time."""

    command: tuple[str, ...]
    stderr: StderrTail = field(default_factory=StderrTail)
    pid: int | None = None
    process: anyio.abc.Process | None = None
    #: Set when the server's stdout reached end of file (it exited or closed it).
    stdout_closed: anyio.Event | None = None
    #: Set when the server's stderr reached end of file (or the kit stopped reading it).
    stderr_closed: anyio.Event | None = None
    closing: bool = False
    #: Ended without its grace (``_end_tree``): it answers nothing, so waits for nothing.
    unresponsive: bool = False
    #: What the server wrote on stdout that is not JSON-RPC.
    noise: StdoutNoise = field(default_factory=StdoutNoise)
    #: Why the kit stopped reading the server's stdout, when it did (a flood, an endless line).
    fault: str | None = None
    #: ``time.monotonic()`` when the process exited, stamped off the event loop
    #: (``_stamp_exit``); ``None`` while it runs, or where the platform cannot tell.
    exited_at: float | None = None

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    def stderr_size(self) -> int:
        """How many bytes the server has written to stderr so far (a mark for ``stderr_tail``)."""
        return self.stderr.total

    def stderr_tail(self, lines: int = 20, *, since: int = 0) -> str:
        """The last lines the server wrote to stderr after byte ``since`` (decoded leniently).

        A crash is explained by what the server wrote while it crashed, not by a
        traceback an earlier call left: pass the ``stderr_size()`` taken before the call.
        """
        return self.stderr.text(lines, since=since)

    async def stderr_read(self, timeout: float = STDERR_DRAIN) -> None:
        """Wait (bounded) until everything a dead server wrote to stderr has been read."""
        if self.stderr_closed is not None:
            with anyio.move_on_after(timeout):
                await self.stderr_closed.wait()

    async def wait_exit(self, timeout: float) -> int | None:
        """The exit code once the process is reaped, or ``None`` if it is still alive."""
        deadline = time.monotonic() + timeout
        while self.returncode is None and time.monotonic() < deadline:
            await anyio.sleep(0.01)
        return self.returncode


def _kill_group(pid: int, sig: int) -> bool:
    """Signal the whole process group; ``False`` once no member is left."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _group_lives(pgid: int) -> bool:
    """Whether a process of the group still runs: a zombie is over, whoever reaps it.

    A member whose parent exited first (bubblewrap's process in the sandbox's
    namespace, a grandchild) is reparented to the system's init, and a container's
    init may take a second or more to reap it, or never reap it: ``killpg`` still
    finds the group meanwhile. Where ``/proc`` cannot be read, any member counts.
    """
    if not _kill_group(pgid, 0):
        return False
    states = group_states(pgid)
    if states is None:
        return True
    return any(state not in (b"Z", b"X") for state in states.values())


def group_states(pgid: int) -> dict[int, bytes] | None:
    """The processes of a process group and their states (``R``, ``S``, ``Z``...), read
    from ``/proc``; ``None`` where it cannot be read."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    group = str(pgid).encode()
    states: dict[int, bytes] = {}
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # gone meanwhile
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and fields[2] == group:
            states[int(entry)] = fields[0]
    return states


async def _end_tree(info: ServerProcess) -> None:
    """Close stdin, give the server its grace (none if it answers nothing), then end
    every process in its group."""
    process = info.process
    assert process is not None
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    if not info.unresponsive:
        await info.wait_exit(EXIT_GRACE)
    # Even when the leader exited by itself, children it started may live on in its group.
    if _kill_group(process.pid, signal.SIGTERM):
        deadline = time.monotonic() + KILL_GRACE
        while time.monotonic() < deadline and _group_lives(process.pid):
            _ = process.returncode  # reap the leader so the group can disappear
            await anyio.sleep(0.01)
        _kill_group(process.pid, signal.SIGKILL)
    await info.wait_exit(KILL_GRACE)
    await info.stderr_read()  # the last words of the server, for its status
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):  # an asyncio subprocess transport warns at GC unless closed
        with contextlib.suppress(Exception):
            close()


def _stamp_exit(info: ServerProcess) -> None:
    """Note when the server exits, off the event loop (``_ExitStamps``).

    The loop notices an exit when it reads the end of the server's stdout, which on
    a busy session is seconds late; the culprit search compares servers' ages at
    exit (``toolnexus_conformance.live._crashes``), and a late age made a server
    that exits on its own look older than it was. Linux only (``os.pidfd_open``);
    elsewhere the age is when the loop noticed.
    """
    opener = getattr(os, "pidfd_open", None)
    if opener is None or info.pid is None or not hasattr(select, "epoll"):
        return
    try:
        fd = opener(info.pid)
    except OSError:  # gone already, or not ours to watch: noticed by the loop
        return
    try:
        _ExitStamps.of_this_process().watch(fd, info)
    except OSError:
        os.close(fd)


class _ExitStamps:
    """One thread that waits on every server's pidfd (readable once it exited) and
    stamps ``ServerProcess.exited_at``: one epoll, however many servers a run starts.
    """

    _current: _ExitStamps | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._epoll = select.epoll()
        self._watched: dict[int, ServerProcess] = {}
        threading.Thread(target=self._serve, name="toolnexus-exits", daemon=True).start()

    @classmethod
    def of_this_process(cls) -> _ExitStamps:
        """The watcher of this process: a forked child has the epoll but not the thread."""
        with cls._lock:
            if cls._current is None or cls._current._pid != os.getpid():
                cls._current = cls()
            return cls._current

    def watch(self, fd: int, info: ServerProcess) -> None:
        with self._lock:
            self._watched[fd] = info
        try:
            self._epoll.register(fd, select.EPOLLIN)  # epoll_ctl is safe while it waits
        except OSError:
            with self._lock:
                self._watched.pop(fd, None)
            raise

    def _serve(self) -> None:
        while True:
            try:
                ready = self._epoll.poll()
            except InterruptedError:
                continue
            except OSError:
                return
            now = time.monotonic()
            for fd, _ in ready:
                with self._lock:
                    info = self._watched.pop(fd, None)
                if info is not None:
                    info.exited_at = now
                with contextlib.suppress(OSError):
                    self._epoll.unregister(fd)
                os.close(fd)


@contextlib.asynccontextmanager
async def stdio_transport(
    info: ServerProcess,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    launcher: Launcher | None = None,
) -> AsyncIterator[TransportStreams]:
    """Start ``info.command`` in a new session and yield the MCP message streams.

    The server inherits only the SDK's safe environment variables plus ``env``:
    an untrusted server does not get the user's credentials by default. A
    ``launcher`` decides how the command is started (a caller's sandbox).
    """
    argv = list(info.command)
    environment = {**get_default_environment(), **(env or {})}
    process = None
    if isinstance(launcher, StartingLauncher):
        process = await launcher.started(argv, environment, cwd)
    if process is None:
        if launcher is not None:
            argv, environment = launcher(argv, environment, cwd)
        process = await anyio.open_process(
            argv,
            env=environment,
            cwd=cwd,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    info.process = process
    info.pid = process.pid
    _stamp_exit(info)
    info.stdout_closed = anyio.Event()
    info.stderr_closed = anyio.Event()
    notifications = NotificationRate()

    def stop(fault: str) -> None:
        """Record why the kit stopped reading the server, and end it: nobody listens any more."""
        if info.fault is None:
            info.fault = fault
        _kill_group(process.pid, signal.SIGTERM)

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        reader = LineReader(MAX_MESSAGE_BYTES)
        try:
            async with read_writer:
                while True:
                    try:
                        chunk = await process.stdout.receive(READ_SIZE)
                    except anyio.EndOfStream:
                        break
                    # A full read: the server had written more than the kit had read.
                    behind = len(chunk) >= READ_SIZE
                    if not behind:
                        notifications.caught_up()
                    for line in reader.feed(chunk):
                        message = _parse(line)
                        if message is not None:
                            flood = (
                                notifications.record(time.monotonic(), behind=behind)
                                if _is_notification(message)
                                else None
                            )
                            if flood is not None:
                                stop(f"notifications flooded: {flood}")
                                return
                            await read_writer.send(message)
                        elif line.strip():
                            info.noise.record(line)
                            if info.noise.flooding:
                                stop(f"stdout flooded: {info.noise.describe()}")
                                return
        except LineTooLong as exc:
            stop(
                f"the server sent a line of more than {MAX_MESSAGE_BYTES // 2**20} MiB"
                f" ({exc.args[0]} bytes) without ending it; a JSON-RPC message over stdio is"
                " one line"
            )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            assert info.stdout_closed is not None
            info.stdout_closed.set()

    async def stderr_reader() -> None:
        assert process.stderr is not None
        try:
            async for chunk in process.stderr:
                info.stderr.feed(chunk)
                if info.stderr.flooding:
                    stop(f"stderr flooded: more than {MAX_STDERR_BYTES // 2**20} MiB written")
                    return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            assert info.stderr_closed is not None
            info.stderr_closed.set()

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((data + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session must see the end, not wait forever

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stderr_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            info.closing = True
            with anyio.CancelScope(shield=True):
                write_stream.close()
                read_stream.close()
                await _end_tree(info)
                for stream in (read_writer, write_reader):
                    await stream.aclose()
            group.cancel_scope.cancel()


def _is_notification(message: SessionMessage) -> bool:
    return isinstance(message.message, mcp_types.JSONRPCNotification)


def _parse(line: bytes) -> SessionMessage | None:
    """The line as a JSON-RPC message, or ``None`` when it is something else (noise)."""
    if not line.lstrip().startswith(b"{"):
        return None
    try:
        message: Any = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None
    return SessionMessage(message)
