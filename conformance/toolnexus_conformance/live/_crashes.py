"""An MCP server that exited mid-exploration: which call ended it, and only that call.

Tools of one stdio server share its process, so one tool that ends it (``os._exit``,
a segfault, an unhandled error in a handler that takes the process down) leaves
every other tool's calls failing with the same exit. The calls that were in flight
when it exited are replayed one at a time, each on a fresh process of the server,
until one ends it too: that call's tool is the culprit, with the exact arguments
and what the server wrote on stderr during that replayed call alone. A control
process left alone for as long must survive, or the server exits by itself and no
tool is blamed. The control is needed only when the replayed call ended its server
sooner than the first server had lived: a server that lived longer than that is
not one that exits on its own at that age.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import anyio

from ._calls import describe

__all__ = ["ServerCrash", "connection_of", "exited", "find_culprit"]

#: The most in-flight calls replayed to find the one that ends the server.
MAX_REPLAYS = 8
#: The most simplifications tried on the culprit's arguments (one fresh server each).
MAX_SHRINKS = 3
#: Slack added to the control's wait: a server that exits on its own does so by then.
CONTROL_SLACK = 0.5


@dataclass(frozen=True, slots=True)
class ServerCrash:
    """One call that ends a fresh process of the server, reproduced."""

    server: str
    #: The server's own name for the tool.
    tool: str
    args: Any
    exit_code: int | None
    #: What the server wrote on stderr during the replayed call alone.
    stderr: str
    #: Seconds from the fresh server being ready to its exit.
    after: float

    def describe(self) -> str:
        code = "unknown" if self.exit_code is None else str(self.exit_code)
        said = self.stderr.strip()
        words = f"its stderr:\n{said}" if said else "it wrote nothing on stderr"
        return (
            f"calling {self.tool!r} with {describe(self.args)} ended the server"
            f" {self.server!r} (exit status {code}); replayed alone on a fresh server, it"
            f" ends it again; {words}"
        )

    def short(self) -> str:
        code = "unknown" if self.exit_code is None else str(self.exit_code)
        return f"calling it with {describe(self.args)} ends its server (exit status {code})"


def connection_of(subject: Any) -> Any:
    """The MCP connection behind a tool subject, or ``None``."""
    extra = getattr(subject, "extra", {})
    return extra.get("connection", getattr(getattr(subject, "tool", None), "connection", None))


def exited(connection: Any) -> bool:
    """Whether the server's process exited on its own (not closed by us, not a flood)."""
    status = getattr(connection, "status", None)
    if status is None or getattr(status, "state", None) != "failed":
        return False
    return str(getattr(status, "reason", "")).startswith("server exited")


async def find_culprit(
    connection: Any,
    suspects: Iterable[tuple[str, Any]],
    timeout: float,
    *,
    lived: float | None = None,
) -> ServerCrash | None:
    """The first in-flight call that ends a fresh server too, or ``None`` if none does.

    ``lived``: how long the server that exited had been answering, if known.
    """
    seen: set[str] = set()
    for tool, args in suspects:
        key = tool + "\0" + json.dumps(args, sort_keys=True, default=repr)
        if key in seen:
            continue
        seen.add(key)
        if len(seen) > MAX_REPLAYS:
            return None
        crash = await _replay(connection, tool, args, timeout)
        if crash is not None:
            outlived = lived is not None and lived > crash.after + CONTROL_SLACK
            if not outlived and await _exits_alone(connection, crash.after, timeout):
                return None
            return await _shrink(connection, crash, timeout)
    return None


def _simpler(value: Any) -> Any:
    """The simplest value of the same JSON type, or the value itself when it is that."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return 0
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return value


async def _shrink(connection: Any, crash: ServerCrash, timeout: float) -> ServerCrash:
    """The crash with simpler arguments, one top-level value at a time, while it still ends
    a fresh server; a few tries at most, since each costs a server start."""
    if not isinstance(crash.args, dict):
        return crash
    tries = 0
    for key in list(crash.args):
        value = crash.args[key]
        simpler = _simpler(value)
        if simpler == value and type(simpler) is type(value):
            continue
        if tries >= MAX_SHRINKS:
            break
        tries += 1
        again = await _replay(connection, crash.tool, {**crash.args, key: simpler}, timeout)
        if again is not None:
            crash = again
    return crash


async def _replay(connection: Any, tool: str, args: Any, timeout: float) -> ServerCrash | None:
    fresh = connection.fresh()
    try:
        status = await fresh.start()
        if not status.ok:
            return None
        declared = next((t for t in fresh.tools if t.name == tool), None)
        if declared is None:
            return None
        mark = fresh.stderr_mark()
        ready = time.monotonic()
        await fresh.call(declared, args, None, timeout=timeout)
        if not exited(fresh):
            # An exit right after the answer is still this call's doing.
            await fresh.probe(min(timeout, 2.0))
        if not exited(fresh):
            return None
        after = time.monotonic() - ready
        stderr = await fresh.stderr_since(mark)
        return ServerCrash(
            connection.config.name, tool, args, fresh.status.exit_code, stderr, after
        )
    finally:
        await fresh.close()


async def _exits_alone(connection: Any, after: float, timeout: float) -> bool:
    """Whether a fresh server that nobody calls exits within ``after`` seconds too."""
    fresh = connection.fresh()
    try:
        status = await fresh.start()
        if not status.ok:
            return True
        await anyio.sleep(after + CONTROL_SLACK)
        if not exited(fresh):
            await fresh.probe(min(timeout, 2.0))
        return exited(fresh)
    finally:
        await fresh.close()
