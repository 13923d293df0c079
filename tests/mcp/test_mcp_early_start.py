"""A server started before the SDK is imported, adopted by the transport (``process._early``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio.abc
import pytest
from _mcp_testing import START, server_command
from toolnexus_conformance.process._early import EarlyServers, sdk_environment

from toolnexus_ref.mcp import open_stdio
from toolnexus_ref.mcp._stdio import StartingLauncher, _group_lives


def _as_given(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path | None
) -> tuple[list[str], dict[str, str]]:
    return list(argv), dict(env)


def _server_pid(source: object) -> int | None:
    [connection] = source.connections.values()  # type: ignore[attr-defined]
    return connection._process.pid  # type: ignore[no-any-return]


def test_the_environment_is_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.client.stdio import get_default_environment

    monkeypatch.setenv("SHELL", "() { :; }")  # a shell function: neither passes it
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("LOGNAME", raising=False)
    monkeypatch.setenv("NOT_INHERITED", "1")
    assert sdk_environment() == get_default_environment()
    assert "SHELL" not in sdk_environment()
    assert "NOT_INHERITED" not in sdk_environment()


@pytest.mark.anyio
async def test_the_transport_adopts_the_server_started_early(tmp_path: Path) -> None:
    early = EarlyServers(_as_given)
    assert isinstance(early, StartingLauncher)
    command = server_command("good.py")
    await early.start(command, tmp_path)
    await early.start(command, tmp_path)  # asked again: started once
    [started] = [task.result() for task in early._starting.values()]
    assert started is not None
    async with await open_stdio(command, cwd=tmp_path, launcher=early, timeout=START) as source:
        assert source.statuses["good"].state == "connected", source.statuses["good"].describe()
        assert _server_pid(source) == started.pid
        assert await early.started(command, sdk_environment(), tmp_path) is None  # given once
    assert started.returncode is not None


class _SlowToStart(EarlyServers):
    """Its starts wait for ``gate``: a machine busy enough that the exec takes a while."""

    def __init__(self) -> None:
        super().__init__(_as_given)
        self.gate = asyncio.Event()
        self.opened: list[anyio.abc.Process | None] = []

    async def _open(
        self, argv: Sequence[str], env: Mapping[str, str], cwd: Path | None
    ) -> anyio.abc.Process | None:
        await self.gate.wait()
        self.opened.append(await super()._open(argv, env, cwd))
        return self.opened[-1]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_start_still_under_way_is_waited_for_not_made_again(tmp_path: Path) -> None:
    """The transport asks before the early start is done (the SDK was imported before the
    run, so the load comes at once): it adopts that process, and nothing starts twice."""
    early = _SlowToStart()
    command = server_command("good.py")
    starting = asyncio.ensure_future(early.start(command, tmp_path))
    await asyncio.sleep(0)  # begun, not done
    asyncio.get_running_loop().call_later(0.3, early.gate.set)
    async with await open_stdio(command, cwd=tmp_path, launcher=early, timeout=START) as source:
        assert source.statuses["good"].state == "connected", source.statuses["good"].describe()
        await starting
        [opened] = early.opened
        assert opened is not None
        assert _server_pid(source) == opened.pid
        assert not early._starting  # handed over: nothing left for ``close`` to end
    await early.close()


@pytest.mark.anyio
async def test_another_command_starts_its_own_and_the_early_one_is_ended(tmp_path: Path) -> None:
    early = EarlyServers(_as_given)
    command = server_command("good.py")
    await early.start(command, tmp_path)
    [started] = [task.result() for task in early._starting.values()]
    assert started is not None
    other = tmp_path / "other"
    other.mkdir()
    async with await open_stdio(command, cwd=other, launcher=early, timeout=START) as source:
        assert source.statuses["good"].state == "connected"
        assert _server_pid(source) != started.pid
    assert not _ended(started)  # nobody adopted it: it waits for close
    await early.close()
    assert _ended(started)
    assert not _group_lives(started.pid)


def _ended(process: anyio.abc.Process) -> bool:
    return process.returncode is not None


@pytest.mark.anyio
async def test_a_command_that_cannot_start_is_left_to_the_transport(tmp_path: Path) -> None:
    early = EarlyServers(_as_given)
    await early.start([str(tmp_path / "no-such-server")], tmp_path)
    assert [task.result() for task in early._starting.values()] == [None]
