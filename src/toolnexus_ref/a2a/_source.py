"""The A2A source: one agent's card resolved into tools, one per skill."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._tls import tls_context
from ._card import CardReading, read_card
from ._tool import A2ATool

__all__ = ["A2ASource", "open_agent"]


@dataclass(frozen=True, slots=True)
class A2ASource:
    """An agent's tools and its card as read (with what is wrong with it, for the checks).

    Holds no connection: every call opens its own client, so the tools work from
    any event loop and there is nothing to close.
    """

    reading: CardReading
    tools: list[A2ATool]

    def conformance_extra(self) -> dict[str, Any]:
        """What target-level checks read: the card and its problems."""
        return {"a2a_card": self.reading, "a2a_card_problems": list(self.reading.problems)}


async def open_agent(
    url: str,
    *,
    timeout: float | None = 120.0,
    transport: Any = None,
    headers: Mapping[str, str] | None = None,
) -> A2ASource:
    """Resolve the card of the agent at ``url`` (its base, or the card's own ``.json`` address).

    Raises ``CardError`` when the card cannot be fetched or read at all.
    """
    import httpx

    async with httpx.AsyncClient(
        transport=transport, headers=dict(headers or {}), timeout=30.0, verify=tls_context()
    ) as http:
        reading = await read_card(url, client=http)
    skills = list(reading.card.skills) or [None]
    tools = [
        A2ATool(reading, skill, timeout=timeout, transport=transport, headers=headers)
        for skill in skills
    ]
    return A2ASource(reading, tools)
