"""What a run starts first: its event loop, its sandbox, and the ``stdio:`` targets' servers.

Made in ``pytest_configure`` before the session's own modules are imported (the
suites' catalog, the live engine: half a second or more), so that an MCP server's
start-up overlaps that import as well as the MCP SDK's, which the load does next
(``toolnexus_conformance.process._early``: the load adopts the process). Imports
only what starting needs: no suite, no SDK.
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
from toolnexus_conformance.live._loop import BackgroundLoop, LoopBlocked
from toolnexus_conformance.process._early import EarlyServers, sdk_installed
from toolnexus_conformance.process._sandbox import (
    Sandbox,
    SandboxError,
    kit_cache,
    parse_limits,
)

from ._options import Settings

__all__ = ["Prestart", "example_database", "prestart"]

#: How long starting one server may hold the loop (a process is one exec away).
START_LIMIT = 30.0


@dataclass(frozen=True, slots=True)
class Prestart:
    """The session's loop and sandbox, and the launcher holding the servers started early."""

    loop: BackgroundLoop
    sandbox: Sandbox
    early: EarlyServers

    def close(self) -> None:
        """End the servers started early and the loop: for a session that never began."""
        try:
            self.loop.run(self.early.close(), timeout=START_LIMIT)
        except Exception:
            pass
        self.loop.close()
        self.sandbox.close()


def prestart(config: pytest.Config, settings: Settings, *, serial: bool) -> Prestart:
    """The loop and the sandbox, and, in a ``serial`` run, its stdio servers being started.

    Under xdist a worker may take another's listing of a target rather than start
    its server, so its loads start their own (``ConformanceSession._load``).
    """
    loop = BackgroundLoop()
    sandbox = make_sandbox(config, settings)
    early = EarlyServers(sandbox.launcher())
    commands = stdio_commands(settings.targets) if serial else []
    if commands and sdk_installed():
        cwd = Path(str(config.rootpath))
        threading.Thread(
            target=_start_all,
            args=(loop, early, commands, cwd),
            name="toolnexus-start",
            daemon=True,
        ).start()
    return Prestart(loop, sandbox, early)


def stdio_commands(targets: tuple[str, ...]) -> list[list[str]]:
    """The command lines of the ``stdio:`` targets given (those that can be split)."""
    commands = []
    for target in targets:
        text = target.strip()
        if not text.startswith("stdio:"):
            continue
        try:
            argv = shlex.split(text[len("stdio:") :])
        except ValueError:
            continue  # the load says why
        if argv:
            commands.append(argv)
    return commands


def _start_all(
    loop: BackgroundLoop, early: EarlyServers, commands: list[list[str]], cwd: Path
) -> None:
    for argv in commands:
        try:
            loop.run(early.start(argv, cwd), timeout=START_LIMIT)
        except (LoopBlocked, RuntimeError):
            return  # the loads start them, as without this


def make_sandbox(config: pytest.Config, settings: Settings) -> Sandbox:
    """The sandbox the settings ask for; a usage error when it is required and cannot be had."""
    database = example_database(config)
    sandbox = Sandbox(
        mode=settings.sandbox,
        network=settings.allow_network,
        env_names=settings.env,
        limits=parse_limits(settings.limits),
        readable=(Path(str(config.rootpath)), Path(str(config.invocation_params.dir))),
        writable=(database,) if database else _kit_cache(),
    )
    try:
        sandbox.check()
    except SandboxError as exc:
        raise pytest.UsageError(str(exc)) from None
    return sandbox


def _kit_cache() -> tuple[Path, ...]:
    """The kit's user cache, made now so that it can be bound into the sandbox."""
    cache = kit_cache()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return ()
    return (cache,)


def example_database(config: pytest.Config) -> Path | Literal[False]:
    """Hypothesis's failing examples live under pytest's cache, and nowhere without it."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return False
    return Path(cache.mkdir("toolnexus-hypothesis"))
