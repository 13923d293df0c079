"""What a run starts first: its event loop, its sandbox, and its targets' stdio servers.

Made in ``pytest_configure`` before the session's own modules are imported (the
suites' catalog, the live engine: half a second or more), so that an MCP server's
start-up overlaps that import as well as the MCP SDK's, which the load does next
(``toolnexus_conformance.process._early``: the load adopts the process). The
servers are those of ``stdio:`` targets and the stdio entries of ``mcp.json``
targets (read without the SDK). Imports only what starting needs: no suite, no SDK.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest
from toolnexus_conformance.live._loop import BackgroundLoop, LoopBlocked
from toolnexus_conformance.process._early import EarlyServers, sdk_installed
from toolnexus_conformance.process._sandbox import (
    Sandbox,
    SandboxError,
    kit_storage,
    parse_limits,
)
from toolnexus_conformance.targets import TargetError, TargetKind, TargetSpec, parse_target

from ._coverage import ToolCoverage
from ._distribution import is_xdist_controller
from ._options import Settings

if TYPE_CHECKING:
    from toolnexus_ref._mcp_config import ServerConfig

__all__ = [
    "Prestart",
    "ServerStart",
    "config_start",
    "example_database",
    "mcp_json_entries",
    "prestart",
    "server_starts",
    "spec_of",
    "spec_starts",
    "target_key",
]

#: How long starting one server may hold the loop (a process is one exec away).
START_LIMIT = 30.0


@dataclass(frozen=True, slots=True)
class Prestart:
    """The session's loop and sandbox, and the launcher holding the servers started early."""

    loop: BackgroundLoop
    sandbox: Sandbox
    early: EarlyServers
    #: The command line's targets this run loads: under ``--toolnexus-shard``, its share
    #: (``_shard_targets``), an mcp.json shared out given as its ``TargetSpec``.
    targets: list[Any] = field(default_factory=list)
    #: Coverage carried into the processes the kit starts, when this process measures.
    coverage: ToolCoverage | None = None

    def close(self) -> None:
        """End the servers started early and the loop: for a session that never began."""
        try:
            self.loop.run(self.early.close(), timeout=START_LIMIT)
        except Exception:
            pass
        self.loop.close()
        self.sandbox.close()
        if self.coverage is not None:
            self.coverage.close()


def prestart(config: pytest.Config, settings: Settings, *, serial: bool) -> Prestart:
    """The loop and the sandbox, and, in a ``serial`` run, its stdio servers being started.

    Under xdist a worker may take another's listing of a target rather than start
    its server, so its loads start their own (``ConformanceSession._load``).
    """
    loop = BackgroundLoop()
    sandbox = make_sandbox(config, settings)
    coverage = None if is_xdist_controller(config) else ToolCoverage.start(config)
    if coverage is not None:  # before any process starts: the servers started here too
        coverage.apply(sandbox)
    early = EarlyServers(sandbox.launcher())
    base_dir = Path(str(config.rootpath))
    targets: list[Any] = list(settings.targets)
    from ._distribution import read_shard, read_shard_costs

    shard = read_shard(config)
    if shard is not None:  # only this shard's servers start, here and at the loads
        from ._shard_targets import shard_targets

        costs = read_shard_costs(config)
        measured = costs.tools if costs else None
        targets = shard_targets(targets, base_dir, *shard, measured, settings.concurrency).kept
    if serial and sdk_installed():
        starts = server_starts(targets, base_dir)
        if starts:
            # Submitted, not waited for: the loop begins every start before any load
            # submitted after this one (it runs what it is given in order), so a load
            # never misses a server started for it, however soon it asks.
            asyncio.run_coroutine_threadsafe(early.start_all(_commands(starts)), loop.loop)
    return Prestart(loop, sandbox, early, targets, coverage)


@dataclass(frozen=True, slots=True)
class ServerStart:
    """A stdio server as its target's load will start it, for the load to adopt.

    The transport adopts a process only if it would start the very same command line,
    in the same folder, with the same environment (``EarlyServers.started``).
    """

    argv: list[str]
    cwd: Path | None
    #: The variables the server gets beyond the SDK's safe ones (an mcp.json's ``env``).
    env: dict[str, str] = field(default_factory=dict)


def server_starts(targets: Iterable[Any], base_dir: Path) -> list[ServerStart]:
    """The stdio servers the targets will start; what cannot be read is left to the loads."""
    starts: list[ServerStart] = []
    for target in targets:
        try:
            spec = spec_of(target, base_dir)
        except TargetError:
            continue  # reported at collection, with the others
        starts.extend(spec_starts(spec, base_dir))
    return starts


def spec_of(target: Any, base_dir: Path) -> TargetSpec:
    """A target as given, parsed; a shard's share of an mcp.json is parsed already."""
    if isinstance(target, TargetSpec):
        return target
    return parse_target(target, base_dir=base_dir)


def target_key(spec: TargetSpec) -> tuple[str, Any]:
    """What makes two targets the same one: a server given twice is started once."""
    if spec.kind is TargetKind.OBJECT:
        return (spec.kind.value, id(spec.obj))
    return (spec.kind.value, " ".join(spec.value.split()))


def spec_starts(spec: TargetSpec, base_dir: Path) -> list[ServerStart]:
    """A ``stdio:`` target's server, or every enabled stdio server of an ``mcp.json``.

    The file is read as its load reads it (``toolnexus_ref._mcp_config``, which needs
    no SDK); an entry that cannot be used, or a file that cannot be read, starts
    nothing here, and the load says why.
    """
    if spec.kind is TargetKind.STDIO:
        try:
            argv = shlex.split(spec.value)
        except ValueError:
            return []
        return [ServerStart(argv, base_dir)] if argv else []
    configs = mcp_json_entries(spec, base_dir) if spec.kind is TargetKind.MCP_JSON else None
    if configs is None:
        return []
    return [start for config in configs if (start := config_start(config)) is not None]


def mcp_json_entries(spec: TargetSpec, base_dir: Path) -> list[ServerConfig] | None:
    """An ``mcp.json`` target's entries, read as its load reads them (with no SDK);
    ``None`` for a file that cannot be read, which the load reports."""
    from toolnexus_ref._mcp_config import load_mcp_json

    path = Path(spec.value)
    if not path.is_absolute():
        path = base_dir / path
    try:
        configs = load_mcp_json(path, base_dir=path.parent, isolate=True)
    except Exception:
        return None
    if spec.only is not None:  # a shard's share of the servers
        return [config for config in configs if config.name in spec.only]
    return configs


def config_start(config: ServerConfig) -> ServerStart | None:
    """An mcp.json entry's server as its transport will start it; ``None`` for an entry
    that starts no process (disabled, unusable, not stdio)."""
    if config.type != "stdio" or not config.enabled or config.problem is not None:
        return None
    if not config.command:
        return None
    env = {name: value.reveal() for name, value in config.env.items()}
    return ServerStart(list(config.command), config.cwd, env)


def start_all(
    loop: BackgroundLoop,
    early: EarlyServers,
    starts: Iterable[ServerStart],
    limit: float = START_LIMIT,
) -> None:
    """Start the servers, for a load to adopt, and wait until they are started."""
    try:
        loop.run(early.start_all(_commands(starts)), timeout=limit)
    except (LoopBlocked, RuntimeError):
        return  # the loads start them, as without this


def _commands(starts: Iterable[ServerStart]) -> list[tuple[list[str], Path | None, dict[str, str]]]:
    """What ``EarlyServers.start_all`` takes: each start's command line, folder and variables."""
    return [(start.argv, start.cwd, start.env) for start in starts]


def make_sandbox(config: pytest.Config, settings: Settings) -> Sandbox:
    """The sandbox the settings ask for; a usage error when it is required and cannot be had."""
    database = example_database(config)
    sandbox = Sandbox(
        mode=settings.sandbox,
        network=settings.allow_network,
        env_names=settings.env,
        limits=parse_limits(settings.limits),
        readable=(Path(str(config.rootpath)), Path(str(config.invocation_params.dir))),
        writable=_kit_storage(database or None),
        copies=settings.writable_copies,
    )
    try:
        sandbox.check()
    except SandboxError as exc:
        raise pytest.UsageError(str(exc)) from None
    return sandbox


def _kit_storage(database: Path | None) -> tuple[Path, ...]:
    """Where hypothesis writes in the kit's processes, made now so that it can be bound
    into the sandbox (a folder that cannot be made is left out)."""
    made = []
    for folder in kit_storage(database):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        made.append(folder)
    return tuple(made)


def example_database(config: pytest.Config) -> Path | Literal[False]:
    """Hypothesis's failing examples live under pytest's cache, and nowhere without it."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return False
    return Path(cache.mkdir("toolnexus-hypothesis"))
