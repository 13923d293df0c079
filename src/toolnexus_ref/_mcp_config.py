"""Reading ``mcp.json``: the server map every MCP host writes a little differently.

Outside ``toolnexus_ref.mcp``, which imports the MCP SDK: reading the file needs
none of it, and the pytest plugin starts a file's stdio servers before the SDK is
imported, so that their start-ups and the import overlap.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from . import secrets
from ._secret import Secret

__all__ = [
    "DEFAULT_TIMEOUT",
    "McpConfigError",
    "ServerConfig",
    "load_mcp_json",
    "parse_mcp_config",
]

DEFAULT_TIMEOUT = 30.0
#: Keys that hosts put beside the server map; never servers themselves.
RESERVED_KEYS = frozenset({"builtins", "agents", "a2a", "mcpServer"})
_CONTAINER_KEYS = ("mcpServers", "servers", "mcp")
_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
#: Variables every stdio server is given anyway (the mcp SDK's inherited set, and ``PWD``):
#: masking ``${HOME}`` would hide every path in a report and protect nothing.
_NOT_SECRET = frozenset(
    {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "PWD", "TMPDIR", "LANG"}
)

Transport = Literal["stdio", "http"]


class McpConfigError(ValueError):
    """The configuration cannot be used; the message names the file, the server and the key."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One server, ready to start. Environment and header values are ``Secret``s."""

    name: str
    type: Transport
    command: tuple[str, ...] = ()
    env: Mapping[str, Secret] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    headers: Mapping[str, Secret] = field(default_factory=dict)
    enabled: bool = True
    #: Seconds for each phase: start, handshake, listing.
    timeout: float = DEFAULT_TIMEOUT
    #: Why this entry cannot be used (an unset ``${VAR}``, a bad key); the server then fails
    #: alone, with this as its reason, and the file's other servers still load.
    problem: str | None = None
    #: ``name`` is a stand-in (from a command line): the server's own ``serverInfo`` name
    #: replaces it once the server answers the handshake.
    named_by_server: bool = False

    def secrets(self) -> list[Secret]:
        return [*self.env.values(), *self.headers.values()]


def load_mcp_json(
    path: str | os.PathLike[str],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    isolate: bool = False,
) -> list[ServerConfig]:
    """Every server in the file, enabled or not, in file order.

    Relative ``cwd`` values resolve against ``base_dir`` (default: the file's folder).
    With ``isolate``, an entry that cannot be used comes back with its ``problem``
    set instead of raising, so one bad entry costs only its own server; a file that
    is not JSON, or not an object of servers, still raises ``McpConfigError``.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise McpConfigError(f"{file}: cannot read the MCP config: {exc.strerror or exc}") from None
    base = Path(base_dir) if base_dir is not None else file.parent
    return parse_mcp_config(text, source=str(file), base_dir=base, environ=environ, isolate=isolate)


def parse_mcp_config(
    text: str,
    *,
    source: str = "<mcp.json>",
    base_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    isolate: bool = False,
) -> list[ServerConfig]:
    """The servers of an ``mcp.json`` text; ``isolate`` as for ``load_mcp_json``.

    Every value expanded from ``${VAR}`` is registered with ``toolnexus_ref.secrets``,
    so reports mask it wherever it turns up.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise McpConfigError(
            f"{source}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
        ) from None
    reader = _Reader(text, source, base_dir, os.environ if environ is None else environ)
    return reader.servers(data, isolate=isolate)


@dataclass(slots=True)
class _Reader:
    text: str
    source: str
    base_dir: Path | None
    environ: Mapping[str, str]

    # -- locating problems ------------------------------------------------------------
    def where(self, server: str | None, key: str | None = None) -> str:
        """``file:line`` of the key inside the server's entry, best effort."""
        offset = 0
        if server is not None:
            found = self.text.find(json.dumps(server))
            offset = max(found, 0)
        if key is not None:
            found = self.text.find(json.dumps(key), offset)
            offset = found if found >= 0 else offset
        line = self.text.count("\n", 0, offset) + 1
        return f"{self.source}:{line}"

    def fail(self, server: str | None, key: str | None, message: str) -> McpConfigError:
        at = self.where(server, key)
        subject = f"server {server!r}" if server is not None else "the config"
        if key is not None:
            subject += f", key {key!r}"
        return McpConfigError(f"{at}: {subject}: {message}")

    # -- structure --------------------------------------------------------------------
    def servers(self, data: Any, *, isolate: bool = False) -> list[ServerConfig]:
        if not isinstance(data, dict):
            raise self.fail(None, None, f"the top level must be a JSON object, got {_kind(data)}")
        table = self.server_map(data)
        if not isolate:
            return [self.server(name, entry) for name, entry in table.items()]
        return [self.isolated(name, entry) for name, entry in table.items()]

    def isolated(self, name: str, entry: Any) -> ServerConfig:
        """The entry, or a stand-in that carries why it cannot be used."""
        try:
            return self.server(name, entry)
        except McpConfigError as exc:
            disabled = isinstance(entry, dict) and (
                entry.get("disabled") is True or entry.get("enabled") is False
            )
            return ServerConfig(name=name, type="stdio", enabled=not disabled, problem=str(exc))

    def server_map(self, data: dict[str, Any]) -> dict[str, Any]:
        for key in _CONTAINER_KEYS:
            if key in data:
                table = data[key]
                if not isinstance(table, dict):
                    raise self.fail(None, key, f"must be an object of servers, got {_kind(table)}")
                nested = [k for k in ("servers", "mcpServers") if isinstance(table.get(k), dict)]
                if key == "mcp" and nested:  # VS Code settings: {"mcp": {"servers": {...}}}
                    return dict(table[nested[0]])
                return dict(table)
        return {k: v for k, v in data.items() if k not in RESERVED_KEYS}

    def server(self, name: str, entry: Any) -> ServerConfig:
        if not isinstance(entry, dict):
            raise self.fail(name, None, f"must be an object, got {_kind(entry)}")
        command = self.command(name, entry)
        url = self.optional_str(name, entry, "url")
        kind = self.transport(name, entry, command, url)
        if kind == "stdio" and not command:
            raise self.fail(name, "command", "a stdio server needs a 'command'")
        if kind == "http" and not url:
            raise self.fail(name, "url", "an http server needs a 'url'")
        env_key = "env" if "env" in entry else "environment"
        cwd = self.optional_str(name, entry, "cwd")
        cwd_path = Path(cwd) if cwd is not None else None
        if cwd_path is not None and not cwd_path.is_absolute() and self.base_dir is not None:
            cwd_path = self.base_dir / cwd_path
        return ServerConfig(
            name=name,
            type=kind,
            command=command if kind == "stdio" else (),
            env=self.string_map(name, entry, env_key),
            cwd=cwd_path,
            url=url if kind == "http" else None,
            headers=self.string_map(name, entry, "headers"),
            enabled=self.enabled(name, entry),
            timeout=self.timeout(name, entry),
        )

    # -- fields -----------------------------------------------------------------------
    def command(self, name: str, entry: dict[str, Any]) -> tuple[str, ...]:
        raw = entry.get("command")
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise self.fail(name, "args", f"must be a list of strings, got {_kind(args)}")
        if raw is None:
            if args:
                raise self.fail(name, "args", "'args' without a 'command'")
            return ()
        if isinstance(raw, str):
            if not raw.strip():
                raise self.fail(name, "command", "must not be empty")
            return (raw, *args)
        if isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw):
            return (*raw, *args)
        raise self.fail(
            name, "command", f"must be a string or a non-empty list of strings, got {_kind(raw)}"
        )

    def transport(
        self, name: str, entry: dict[str, Any], command: tuple[str, ...], url: str | None
    ) -> Transport:
        declared = entry.get("type", entry.get("transport"))
        if declared is None:
            if command and url:
                raise self.fail(name, None, "has both 'command' and 'url'; add a 'type'")
            if url:
                return "http"
            if command:
                return "stdio"
            raise self.fail(name, None, "needs a 'command' (stdio) or a 'url' (streamable HTTP)")
        if declared == "stdio":
            return "stdio"
        if declared in _HTTP_TYPES:
            return "http"
        if declared == "sse":
            raise self.fail(
                name, "type", "the legacy SSE transport is not supported; use streamable HTTP"
            )
        raise self.fail(name, "type", f"unknown transport {declared!r}; expected 'stdio' or 'http'")

    def optional_str(self, name: str, entry: dict[str, Any], key: str) -> str | None:
        value = entry.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self.fail(name, key, f"must be a string, got {_kind(value)}")

    def string_map(self, name: str, entry: dict[str, Any], key: str) -> dict[str, Secret]:
        value = entry.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(name, key, f"must be an object of strings, got {_kind(value)}")
        out: dict[str, Secret] = {}
        for item, raw in value.items():
            if not isinstance(raw, str | int | float) or isinstance(raw, bool):
                raise self.fail(name, key, f"{item!r} must be a string, got {_kind(raw)}")
            out[item] = Secret(self.expand(name, f"{key}.{item}", str(raw)))
        return out

    def expand(self, name: str, key: str, value: str) -> str:
        def substitute(match: re.Match[str]) -> str:
            variable = match.group(1)
            if not variable:
                raise self.fail(name, key.split(".")[0], f"{key} has an empty '${{}}'")
            if variable not in self.environ:
                raise self.fail(
                    name,
                    key.split(".")[0],
                    f"{key} uses ${{{variable}}}, but the environment variable "
                    f"{variable} is not set",
                )
            value = self.environ[variable]
            if variable not in _NOT_SECRET:
                secrets.register(value)
            return value

        return _VARIABLE.sub(substitute, value)

    def enabled(self, name: str, entry: dict[str, Any]) -> bool:
        for key, meaning in (("enabled", True), ("disabled", False)):
            if key in entry:
                value = entry[key]
                if not isinstance(value, bool):
                    raise self.fail(name, key, f"must be true or false, got {_kind(value)}")
                if value is not meaning:
                    return False
        return True

    def timeout(self, name: str, entry: dict[str, Any]) -> float:
        value = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise self.fail(name, "timeout", f"must be a number of seconds > 0, got {value!r}")
        if value > 3600 and isinstance(value, int):  # hosts such as Gemini CLI write milliseconds
            return value / 1000.0
        return float(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
