"""The MCP source: every configured server connected, isolated, and closed as one."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shlex
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import mcp_types

from .._mcp_config import DEFAULT_TIMEOUT, ServerConfig, load_mcp_json
from .._naming import sanitize
from .._secret import Secret
from ._connection import ServerConnection, ServerStatus
from ._stdio import Launcher
from ._tool import McpTool

__all__ = [
    "McpSource",
    "listed_servers",
    "open_http",
    "open_in_memory",
    "open_mcp_json",
    "open_servers",
    "open_stdio",
    "stdio_config",
]


class McpSource:
    """Tools from MCP servers; a server that fails is reported in ``statuses``, not raised.

    Bound to the event loop that opened it: call ``execute`` and ``close`` there.
    Also an async context manager.
    """

    def __init__(
        self,
        connections: Sequence[ServerConnection],
        *,
        listed: bool = False,
        running: Collection[str] = (),
    ) -> None:
        self.connections: dict[str, ServerConnection] = {c.config.name: c for c in connections}
        self.tools: list[McpTool] = [
            McpTool(connection, declared)
            for connection in connections
            if connection.status.ok
            for declared in connection.tools
        ]
        #: Built from another process's listing (``listed_servers``): nothing started
        #: until ``connect``.
        self.listed = listed
        #: Each listed server's start, begun at most once (``connect``).
        self._connecting: dict[str, asyncio.Task[str | None]] = {}
        #: Servers of a listed source started already, by this process's own listing of
        #: them (``listed_servers(running=...)``): ``connect`` leaves them as they are.
        self._running = frozenset(running)

    def listing(self) -> list[dict[str, Any]]:
        """Each server's name, status and ``tools/list`` result, as JSON-ready data.

        What another process needs to build the same tools without starting the
        servers (``listed_servers``); no secret is in it (statuses are redacted).
        """
        return [
            {
                "name": name,
                "status": {
                    **dataclasses.asdict(connection.status),
                    "problems": list(connection.status.problems),
                },
                "tools": [_declared(t) for t in connection.tools] if connection.status.ok else [],
            }
            for name, connection in self.connections.items()
        ]

    async def connect(self, names: Sequence[str] | None = None) -> list[str]:
        """Start the servers a listing said were connected; how their tools now differ.

        A source from ``listed_servers`` holds tools but no server: this starts each
        server named (every one, without ``names``) that was connected when it was
        listed, once however often it is asked, and says, per server, what it lists
        now that it did not then (or that it does not start). An empty list: the
        tools are the ones listed.
        """
        if not self.listed:
            return []
        wanted = [
            name
            for name in (list(self.connections) if names is None else list(names))
            if name not in self._running
        ]
        for name in wanted:
            connection = self.connections.get(name)
            if name not in self._connecting and connection is not None and connection.status.ok:
                self._connecting[name] = asyncio.ensure_future(self._start(connection))
        tasks = [self._connecting[n] for n in wanted if n in self._connecting]
        found = await asyncio.shield(asyncio.gather(*tasks))
        return [problem for problem in found if problem is not None]

    async def _start(self, connection: ServerConnection) -> str | None:
        name = connection.config.name
        expected = [_declared(t) for t in connection.tools]
        await connection.start()
        if not connection.status.ok:
            return (
                f"{name}: listed as connected, it did not start again:"
                f" {connection.status.describe()}"
            )
        difference = _difference(expected, [_declared(t) for t in connection.tools])
        if difference:
            return f"{name}: its tools differ from those listed: {difference}"
        return None

    @property
    def statuses(self) -> dict[str, ServerStatus]:
        """Each server's current status (a server that exits later turns ``failed``)."""
        return {name: c.status for name, c in self.connections.items()}

    def tool_extra(self, tool: McpTool) -> dict[str, Any]:
        return {**tool.conformance_extra(), "mcp_source": self}

    def conformance_extra(self) -> dict[str, Any]:
        """What target-level checks read: every server's status."""
        return {"statuses": self.statuses, "mcp_source": self}

    async def close(self) -> None:
        """Close every server, concurrently; each is bounded, none can block the others."""
        await asyncio.gather(*(c.close() for c in self.connections.values()))

    async def __aenter__(self) -> McpSource:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        states = ", ".join(f"{n}={s.state}" for n, s in self.statuses.items())
        return f"<McpSource {len(self.tools)} tools; {states}>"


async def open_servers(
    configs: Sequence[ServerConfig], *, launcher: Launcher | None = None
) -> McpSource:
    """Connect every enabled server concurrently; disabled ones are listed as such.

    ``launcher`` decides how stdio servers are started (``_stdio.Launcher``).
    """
    names = [c.name for c in configs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"duplicate MCP server names: {', '.join(duplicates)}")
    connections = [ServerConnection(config, launcher=launcher) for config in configs]
    await asyncio.gather(*(c.start() for c in connections))
    _keep_names_apart(connections)
    return McpSource(connections)


def listed_servers(
    configs: Sequence[ServerConfig],
    listing: Sequence[Mapping[str, Any]],
    *,
    launcher: Launcher | None = None,
    running: Mapping[str, ServerConnection] | None = None,
) -> McpSource:
    """The source another process listed (``McpSource.listing``), with no server started.

    ``configs`` are the same servers, read here (their secrets never travel); each
    takes the name it was listed under. The tools are built from the listing;
    ``McpSource.connect`` starts the servers when their tools are to be called.
    ``running``: servers this process started and listed itself (the others were
    listed elsewhere), by name; they are used as they are, never started again.
    """
    running = running or {}
    if len(configs) != len(listing):
        raise ValueError(
            f"the listing holds {len(listing)} servers and the configuration {len(configs)}"
        )
    connections = []
    for config, entry in zip(configs, listing, strict=True):
        started = running.get(str(entry["name"]))
        if started is not None:
            connections.append(started)
            continue
        named = dataclasses.replace(config, name=str(entry["name"]), named_by_server=False)
        connection = ServerConnection(named, launcher=launcher)
        status = dict(entry["status"])
        status["problems"] = tuple(status.get("problems") or ())
        connection.preset(
            [mcp_types.Tool.model_validate(tool) for tool in entry["tools"]],
            ServerStatus(**status),
        )
        connections.append(connection)
    return McpSource(connections, listed=True, running=running)


def _declared(tool: mcp_types.Tool) -> dict[str, Any]:
    return tool.model_dump(mode="json", by_alias=True, exclude_none=True)


def _difference(before: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]) -> str:
    """What changed between two ``tools/list`` results, in a line; empty if nothing did."""
    old = {str(t.get("name")): t for t in before}
    new = {str(t.get("name")): t for t in now}
    parts = []
    gone = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    changed = sorted(n for n in set(old) & set(new) if old[n] != new[n])
    if gone:
        parts.append(f"no longer lists {', '.join(map(repr, gone[:5]))}")
    if added:
        parts.append(f"now lists {', '.join(map(repr, added[:5]))}")
    if changed:
        parts.append(f"declares {', '.join(map(repr, changed[:5]))} otherwise")
    if not parts and list(old) != list(new):
        parts.append("lists the same tools in another order")
    return "; ".join(parts)


def _keep_names_apart(connections: Sequence[ServerConnection]) -> None:
    """Two servers that call themselves the same in ``serverInfo`` get ``_2``, ``_3``, ..."""
    taken: set[str] = set()
    for connection in connections:
        name, count = connection.config.name, 1
        while name in taken:
            count += 1
            name = f"{connection.config.name}_{count}"
        if name != connection.config.name:
            connection.rename(name)
        taken.add(name)


async def open_mcp_json(
    path: str | os.PathLike[str],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    launcher: Launcher | None = None,
    only: Collection[str] | None = None,
) -> McpSource:
    """Every server in an ``mcp.json``; raises ``McpConfigError`` only for a bad file.

    A bad entry (an unset ``${VAR}``, a wrong key) fails its own server, with the
    reason in its status; the others start as usual. ``only``: the servers to open,
    by name (the others are left out, as if the file did not name them).
    """
    configs = load_mcp_json(path, base_dir=base_dir, isolate=True)
    if only is not None:
        configs = [config for config in configs if config.name in only]
    return await open_servers(configs, launcher=launcher)


#: File and folder names that say nothing about which server it is (``dist/index.js``).
_GENERIC_STEMS = frozenset({"index", "main", "server", "cli", "app", "run", "__main__", "start"})
_GENERIC_DIRS = frozenset({"dist", "build", "lib", "src", "bin", "out", "esm", "cjs", "scripts"})


def _script_name(arg: str) -> str:
    """``…/server-everything/dist/index.js`` → ``server-everything``; else the file's stem."""
    path = Path(arg)
    stem = path.stem.split("@")[0]
    if stem not in _GENERIC_STEMS:
        return stem
    for parent in path.parents:
        if parent.name and parent.name not in _GENERIC_DIRS:
            return parent.name
    return stem


def _name_for(command: Sequence[str]) -> str:
    """A stand-in server name from a command line, until ``serverInfo`` names the server."""
    program = Path(command[0]).name
    rest = list(command[1:])
    if program.startswith(("python", "node", "uv", "npx", "uvx", "bun", "deno")):
        for index, arg in enumerate(rest):
            if arg == "-m" and index + 1 < len(rest):
                module = rest[index + 1].split(".")
                meaningful = [part for part in module if part not in _GENERIC_STEMS]
                return (meaningful or module)[-1]
            if not arg.startswith("-") and arg not in ("run", "x", "exec", "tool"):
                return _script_name(arg) or program
    return Path(program).stem or "server"


async def open_stdio(
    command: Sequence[str] | str,
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    launcher: Launcher | None = None,
) -> McpSource:
    """One server started as a subprocess; ``command`` is a list or a shell-style string.

    Without ``name``, the server is named by its ``serverInfo`` once it answers (a
    name taken from the command line stands in until then, and if it never does).
    """
    config = stdio_config(command, name=name, timeout=timeout, cwd=cwd, env=env)
    return await open_servers([config], launcher=launcher)


def stdio_config(
    command: Sequence[str] | str,
    *,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ServerConfig:
    """The configuration ``open_stdio`` starts (see there)."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        raise ValueError("an MCP stdio command needs at least a program")
    return ServerConfig(
        name=name or sanitize(_name_for(argv)),
        named_by_server=name is None,
        type="stdio",
        command=tuple(argv),
        env={k: Secret(v) for k, v in (env or {}).items()},
        cwd=Path(cwd) if cwd is not None else None,
        timeout=timeout,
    )


async def open_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    name: str | None = None,
) -> McpSource:
    """One streamable-HTTP server; header values are kept as secrets.

    Without ``name``, the server is named by its ``serverInfo`` (never by its host:
    ``127.0.0.1`` says nothing); ``server`` stands in until it answers.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    config = ServerConfig(
        name=name or "server",
        named_by_server=name is None,
        type="http",
        url=url,
        headers={k: Secret(v) for k, v in (headers or {}).items()},
        timeout=timeout,
    )
    return await open_servers([config])


async def open_in_memory(
    server: Any, *, name: str = "memory", timeout: float = DEFAULT_TIMEOUT
) -> McpSource:
    """A source around an in-process SDK server (``Server`` or ``MCPServer``), for tests."""
    config = ServerConfig(name=name, type="stdio", command=("<in-memory>",), timeout=timeout)
    connection = ServerConnection(config, client_factory=lambda: server)
    await connection.start()
    return McpSource([connection])
