"""Fixtures for the fake-LLM tests."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest
from _sample_tools import Add, Echo

from toolnexus_ref import BaseTool


@pytest.fixture
def tools() -> list[BaseTool]:
    return [Add(), Echo()]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _loopback(host: Any) -> bool:
    if host in ("localhost", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def escapes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every non-loopback host a client tried to resolve or reach, each refused."""
    tried: list[str] = []
    resolve, connect = socket.getaddrinfo, socket.socket.connect

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not _loopback(host):
            tried.append(str(host))
            raise OSError(f"test guard: no network ({host})")
        return resolve(host, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and not _loopback(address[0]):
            tried.append(str(address[0]))
            raise OSError(f"test guard: no network ({address[0]})")
        return connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    return tried
