"""The agents the A2A tests talk to: one that behaves, and one per defect the checks name."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from toolnexus_ref import ToolAnnotations, ToolResult, tool
from toolnexus_ref.a2a import agent_app, agent_card
from toolnexus_ref.a2a._server import ToolsExecutor

READ_ONLY = ToolAnnotations(read_only=True, destructive=False)


def good_tools() -> list[Any]:
    @tool(annotations=READ_ONLY)
    def echo(message: str) -> str:
        """Repeat the message back, unchanged."""
        return message

    @tool(annotations=READ_ONLY)
    async def ponder(message: str) -> str:
        """Think about an empty message for a moment, then say how long the message is."""
        if not message:
            # The cancel probes send the simplest arguments (an empty message): long
            # enough that a cancel 0.05 s in lands while it works. Only that call is
            # slow, so the search's seventy-odd edge values do not each wait 0.3 s.
            await asyncio.sleep(0.3)
        return f"{len(message)} characters"

    return [echo, ponder]


def more_tools() -> list[Any]:
    """Tools whose answers are not plain successes, and one that takes structured input."""

    @tool(annotations=READ_ONLY)
    def refuse(message: str) -> ToolResult:
        """Always refuse: this agent cannot do that."""
        return ToolResult.error(f"cannot do {message!r}")

    @tool(annotations=READ_ONLY)
    def clarify(message: str) -> ToolResult:
        """Ask which city is meant before answering."""
        return ToolResult.error("Which city do you mean?", {"pending": {"question": "city"}})

    @tool(annotations=READ_ONLY)
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool(annotations=READ_ONLY)
    async def nap(message: str) -> str:
        """Sleep for ten seconds, then wake."""
        await asyncio.sleep(10)
        return "awake"

    return [refuse, clarify, add, nap]


def _slow_tool(seconds: float) -> Any:
    @tool(annotations=READ_ONLY)
    async def work(message: str) -> str:
        """Work on an empty message for a while, then say it is done."""
        if not message:  # what the cancel probe sends; the search's other calls are quick
            await asyncio.sleep(seconds)
        return "done"

    return work


def ignores_cancel(url: str, seconds: float = 1.0) -> Any:
    """An agent whose cancel_task answers 'still working' and lets the task run on; its
    tool works ``seconds`` on an empty message (a cancel must come before that)."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.types import GetTaskRequest

    class IgnoringHandler(DefaultRequestHandler):  # type: ignore[misc]
        async def on_cancel_task(self, params: Any, context: Any) -> Any:
            return await self.on_get_task(GetTaskRequest(id=params.id), context)

    tools = [_slow_tool(seconds)]
    return agent_app(
        agent_card(tools, url=url, name="stubborn"), ToolsExecutor(tools), handler=IgnoringHandler
    )


def _card_json(url: str, tools: list[Any], name: str) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    return dict(MessageToDict(agent_card(tools, url=url, name=name)))


def invalid_card(url: str) -> Any:
    """A card that lost its version and its interfaces' protocol version: the tools still load."""
    tools = good_tools()[:1]
    raw = _card_json(url, tools, "sloppy")
    del raw["version"]
    for interface in raw["supportedInterfaces"]:
        del interface["protocolVersion"]
    return agent_app(agent_card(tools, url=url, name="sloppy"), ToolsExecutor(tools), raw_card=raw)


def duplicate_skills(url: str) -> Any:
    """Two skills of the card share one id."""
    tools = good_tools()[:2]
    raw = _card_json(url, tools, "twins")
    raw["skills"][1]["id"] = raw["skills"][0]["id"]
    return agent_app(agent_card(tools, url=url, name="twins"), ToolsExecutor(tools), raw_card=raw)


def always_fails(url: str) -> Any:
    """Every task fails (for a tool that hides it)."""

    @tool(annotations=READ_ONLY)
    def flaky(message: str) -> ToolResult:
        """Try the thing, and fail."""
        return ToolResult.error("the backend is down")

    return agent_app(agent_card([flaky], url=url, name="flaky"), ToolsExecutor([flaky]))


DEFECTS: dict[str, tuple[Callable[[str], Any], str]] = {
    "cancel-ignored": (ignores_cancel, "TN771"),
    "invalid-card": (invalid_card, "TN871"),
    "duplicate-skill-ids": (duplicate_skills, "TN171"),
}
