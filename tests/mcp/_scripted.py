"""A fresh server for the culprit search's replays, scripted: what each start does and
when it exits, without a process (the search's logic alone, in milliseconds)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any


class ScriptedServer:
    """One fresh server, noted in ``log`` as it is made. ``on_call`` runs at each call;
    ``ends`` decides from the tools called so far whether that call ends it."""

    def __init__(
        self,
        log: list[Any],
        tools: Sequence[str] = ("echo",),
        ends: Callable[[list[str]], bool] | None = None,
        last_words: str = "",
    ) -> None:
        self.tools = [SimpleNamespace(name=name) for name in tools]
        self.status = SimpleNamespace(ok=True, state="connected", reason="", exit_code=None)
        self.lived: float | None = None
        self.on_call: Any = None
        self.sent: list[str] = []
        self.ends = ends
        self.last_words = last_words
        log.append(self)

    def exit(self, lived: float, code: int = 2) -> None:
        self.status = SimpleNamespace(
            ok=False, state="failed", reason="server exited", exit_code=code
        )
        self.lived = lived

    async def start(self) -> Any:
        return self.status

    def stderr_mark(self) -> int:
        return 0

    async def stderr_since(self, mark: int) -> str:
        return self.last_words if self.lived is not None else ""

    async def call(self, tool: Any, args: Any, ctx: Any, *, timeout: float) -> None:
        self.sent.append(tool.name)
        if self.on_call is not None:
            self.on_call()
        if self.ends is not None and self.ends(self.sent):
            self.exit(0.1, code=7)

    async def probe(self, timeout: float) -> None:
        return None

    async def stop_if_silent(self, timeout: float, *, silent_since: float) -> bool:
        return False

    async def close(self) -> None:
        return None
