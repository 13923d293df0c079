"""The record of one loop run: every turn, every call with its result, and why it stopped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from toolnexus_ref._result import ToolResult
from toolnexus_ref.wire import Message, ToolCallPart, Turn

__all__ = ["CallRecord", "StopReason", "Transcript"]

#: ``final``: the model answered; ``max_turns``: the limit was hit; ``cancelled``: the context ended.
StopReason = Literal["final", "max_turns", "cancelled"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call as the model asked for it and the result that went back."""

    turn: int
    call: ToolCallPart
    result: ToolResult
    #: The id sent back to the model; differs from ``call.id`` when the model's was
    #: empty or a duplicate.
    sent_id: str = ""


@dataclass(slots=True)
class Transcript:
    messages: list[Message] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    stop_reason: StopReason = "final"
    retries: int = 0

    @property
    def final_text(self) -> str | None:
        """The last turn's text when the model gave a final answer, else ``None``."""
        if self.stop_reason != "final" or not self.turns:
            return None
        return self.turns[-1].text

    @property
    def errors(self) -> list[CallRecord]:
        return [c for c in self.calls if c.result.is_error]

    def to_data(self) -> dict[str, Any]:
        """Plain JSON data in a stable order, for snapshots and logs."""
        return {
            "stop_reason": self.stop_reason,
            "retries": self.retries,
            "turns": [
                {
                    "text": t.text,
                    "finish": t.finish,
                    "tool_calls": [
                        {"id": c.id, "name": c.name, "arguments": c.arguments} for c in t.tool_calls
                    ],
                }
                for t in self.turns
            ],
            "calls": [
                {
                    "turn": r.turn,
                    "id": r.sent_id or r.call.id,
                    "name": r.call.name,
                    "is_error": r.result.is_error,
                    "output": r.result.output,
                }
                for r in self.calls
            ],
        }
