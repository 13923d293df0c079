"""A stdio transport that keeps what the SDK's throws away: stderr, the exit code, the tree.

``mcp.client.stdio.stdio_client`` writes the server's stderr to ours and kills the
process group only when the leader outlives its grace period. A checker needs the
stderr tail and the exit code to explain a failure, and must not leave behind a
grandchild whose parent exited politely, so this transport owns the process.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
import mcp_types
from mcp.client._transport import TransportStreams
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from ._framing import MAX_MESSAGE_BYTES, LineReader, LineTooLong, StdoutNoise

__all__ = ["ServerProcess", "stdio_transport"]

#: How long a server may take to exit once its stdin closes, before its group is signalled.
EXIT_GRACE = 1.0
#: How long the group gets between SIGTERM and SIGKILL.
KILL_GRACE = 1.0
_TAIL_BYTES = 4096


@dataclass(slots=True)
class ServerProcess:
    """What we know of one server process, readable from any task at any time."""

    command: tuple[str, ...]
    stderr_file: IO[bytes] = field(default_factory=lambda: tempfile.TemporaryFile())  # noqa: SIM115
    pid: int | None = None
    process: anyio.abc.Process | None = None
    #: Set when the server's stdout reached end of file (it exited or closed it).
    stdout_closed: anyio.Event | None = None
    closing: bool = False
    #: What the server wrote on stdout that is not JSON-RPC.
    noise: StdoutNoise = field(default_factory=StdoutNoise)
    #: Why the kit stopped reading the server's stdout, when it did (a flood, an endless line).
    fault: str | None = None

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    def stderr_size(self) -> int:
        """How many bytes the server has written to stderr so far (a mark for ``stderr_tail``)."""
        try:
            return self.stderr_file.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return 0

    def stderr_tail(self, lines: int = 20, *, since: int = 0) -> str:
        """The last lines the server wrote to stderr after byte ``since`` (decoded leniently).

        A crash is explained by what the server wrote while it crashed, not by a
        traceback an earlier call left: pass the ``stderr_size()`` taken before the call.
        """
        try:
            handle = self.stderr_file
            handle.flush()
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(since, size - _TAIL_BYTES, 0))
            data = handle.read()
        except (OSError, ValueError):
            return ""
        text = data.decode("utf-8", errors="replace")
        return "\n".join(text.rstrip().splitlines()[-lines:])

    async def wait_exit(self, timeout: float) -> int | None:
        """The exit code once the process is reaped, or ``None`` if it is still alive."""
        deadline = time.monotonic() + timeout
        while self.returncode is None and time.monotonic() < deadline:
            await anyio.sleep(0.01)
        return self.returncode

    def close_files(self) -> None:
        with contextlib.suppress(OSError):
            self.stderr_file.close()


def _kill_group(pid: int, sig: int) -> bool:
    """Signal the whole process group; ``False`` once no member is left."""
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def _end_tree(info: ServerProcess) -> None:
    """Close stdin, give the server its grace, then end every process in its group."""
    process = info.process
    assert process is not None
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    await info.wait_exit(EXIT_GRACE)
    # Even when the leader exited by itself, children it started may live on in its group.
    if _kill_group(process.pid, signal.SIGTERM):
        deadline = time.monotonic() + KILL_GRACE
        while time.monotonic() < deadline and _kill_group(process.pid, 0):
            _ = process.returncode  # reap the leader so the group can disappear
            await anyio.sleep(0.01)
        _kill_group(process.pid, signal.SIGKILL)
    await info.wait_exit(KILL_GRACE)
    if process.stdout is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdout.aclose()
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):  # an asyncio subprocess transport warns at GC unless closed
        with contextlib.suppress(Exception):
            close()


@contextlib.asynccontextmanager
async def stdio_transport(
    info: ServerProcess,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> AsyncIterator[TransportStreams]:
    """Start ``info.command`` in a new session and yield the MCP message streams.

    The server inherits only the SDK's safe environment variables plus ``env``:
    an untrusted server does not get the user's credentials by default.
    """
    command: Sequence[str] = info.command
    process = await anyio.open_process(
        list(command),
        env={**get_default_environment(), **(env or {})},
        cwd=cwd,
        stderr=info.stderr_file,
        start_new_session=True,
    )
    info.process = process
    info.pid = process.pid
    info.stdout_closed = anyio.Event()
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def stdout_reader() -> None:
        assert process.stdout is not None
        reader = LineReader(MAX_MESSAGE_BYTES)
        try:
            async with read_writer:
                async for chunk in process.stdout:
                    for line in reader.feed(chunk):
                        message = _parse(line)
                        if message is not None:
                            await read_writer.send(message)
                        elif line.strip():
                            info.noise.record(line)
                            if info.noise.flooding:
                                info.fault = f"stdout flooded: {info.noise.describe()}"
                                _kill_group(process.pid, signal.SIGTERM)
                                return
        except LineTooLong as exc:
            info.fault = (
                f"the server sent a line of more than {MAX_MESSAGE_BYTES // 2**20} MiB"
                f" ({exc.args[0]} bytes) without ending it; a JSON-RPC message over stdio is"
                " one line"
            )
            _kill_group(process.pid, signal.SIGTERM)  # nobody reads it any more
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            assert info.stdout_closed is not None
            info.stdout_closed.set()

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


def _parse(line: bytes) -> SessionMessage | None:
    """The line as a JSON-RPC message, or ``None`` when it is something else (noise)."""
    if not line.lstrip().startswith(b"{"):
        return None
    try:
        message: Any = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        return None
    return SessionMessage(message)
