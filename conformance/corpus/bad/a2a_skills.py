"""A2A tools from a card whose skills share an id.

Duck-typed stand-ins for ``toolnexus_ref.a2a.A2ATool``: the naming checks read only
the declaration and ``conformance_extra()``, never the agent.
"""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.corpus import Entry
from toolnexus_ref import ToolResult, sanitize


class RemoteSkill:
    source = "a2a"
    description = "A skill of a remote agent."
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    }

    def __init__(self, agent: str, skill: str, card_ids: list[str]) -> None:
        self.skill_id = skill
        self.card_ids = card_ids
        self.name = f"{sanitize(agent)}_{sanitize(skill)}"

    def conformance_extra(self) -> dict[str, Any]:
        return {"a2a_skill_id": self.skill_id, "a2a_skill_ids": self.card_ids}

    async def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok("ok")


_IDS = ["search", "search", "summarise"]

CORPUS = [
    Entry(
        RemoteSkill("research agent", "search", _IDS),
        frozenset({"TN171"}),
        "two skills of one card share the id 'search'",
        siblings=(RemoteSkill("research agent", "summarise", _IDS),),
    ),
]
