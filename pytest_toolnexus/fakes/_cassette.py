"""Cassettes: a recorded session as a readable script of turns, replayed offline.

A cassette holds, for each model request, the *shape* of the conversation it answered
(roles, the calls the model made with their arguments, which calls got results and
whether they were errors) and the reply the model gave. Replay matches on that shape,
not on raw bytes: a reworded system prompt or a changed tool output replays fine; a
different call, a missing result or an extra turn fails with a diff.

Nothing from the HTTP exchange but the turns is written: no headers, so no key.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolnexus_ref.wire import Message, Request, ToolCallPart, Turn, Usage

from ._replies import ErrorReply, Reply

__all__ = ["Cassette", "CassetteTurn", "Replay", "conversation_shape"]

_HEADER = (
    "# A recorded model session (pytest-toolnexus). Each turn: the conversation shape\n"
    "# the model answered, then its reply. Replay: FakeLLM.replay(path).\n"
)


def _call_line(call: ToolCallPart) -> str:
    try:
        args = json.dumps(call.parsed_arguments(), sort_keys=True)
    except ValueError:
        args = call.arguments
    return f"{call.name}({args})"


def conversation_shape(messages: Sequence[Message]) -> list[str]:
    """One line per message: its role, and for calls and results what they were."""
    names: dict[str, str] = {}
    lines = []
    for m in messages:
        if m.role == "system":
            continue
        if m.tool_calls:
            names.update((c.id, c.name) for c in m.tool_calls)
            lines.append("assistant: " + ", ".join(_call_line(c) for c in m.tool_calls))
        elif m.tool_results:
            parts = [
                f"{r.name or names.get(r.call_id, '?')}{' (error)' if r.is_error else ''}"
                for r in m.tool_results
            ]
            lines.append("tool: " + ", ".join(parts))
        else:
            lines.append(m.role)
    return lines


@dataclass(frozen=True, slots=True)
class CassetteTurn:
    expect: list[str]
    reply: Turn

    def to_data(self) -> dict[str, Any]:
        reply: dict[str, Any] = {}
        if self.reply.text is not None:
            reply["text"] = self.reply.text
        if self.reply.tool_calls:
            reply["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments}
                for c in self.reply.tool_calls
            ]
        reply["finish"] = self.reply.finish
        reply["usage"] = {
            "input_tokens": self.reply.usage.input_tokens,
            "output_tokens": self.reply.usage.output_tokens,
        }
        return {"expect": self.expect, "reply": reply}

    @classmethod
    def from_data(cls, data: Any) -> CassetteTurn:
        reply = data.get("reply") or {}
        calls = tuple(
            ToolCallPart(str(c.get("id", "")), str(c["name"]), str(c.get("arguments", "{}")))
            for c in reply.get("tool_calls") or []
        )
        usage = reply.get("usage") or {}
        turn = Turn(
            reply.get("text"),
            calls,
            reply.get("finish"),
            Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
        )
        return cls([str(line) for line in data.get("expect") or []], turn)


@dataclass(slots=True)
class Cassette:
    """The turns of one recorded session, in order."""

    turns: list[CassetteTurn] = field(default_factory=list)

    def add(self, request: Request, reply: Turn) -> None:
        self.turns.append(CassetteTurn(conversation_shape(request.messages), reply))

    def dumps(self) -> str:
        import yaml

        data = {"turns": [t.to_data() for t in self.turns]}
        return _HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.dumps(), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        import yaml

        where = Path(path)
        if not where.is_file():
            raise FileNotFoundError(
                f"no cassette at {where}; record one first (see Recorder in the fake-LLM docs)"
            )
        data = yaml.safe_load(where.read_text(encoding="utf-8")) or {}
        return cls([CassetteTurn.from_data(t) for t in data.get("turns") or []])


class Replay:
    """Serves a cassette's replies, each once, each only to a conversation of the shape
    it was recorded for: the first unused turn of the request's shape answers it (so a
    cassette grown by ``new_episodes`` replays too); a request of no recorded shape is
    refused with the diff against the next unused turn."""

    def __init__(self, cassette: Cassette) -> None:
        self.cassette = cassette
        self._used: set[int] = set()
        self._asked = 0
        self.mismatches: list[str] = []

    def next(self, request: Request) -> Reply | None:
        turns = self.cassette.turns
        unused = [i for i in range(len(turns)) if i not in self._used]
        if not unused:
            return None
        self._asked += 1
        shape = conversation_shape(request.messages)
        for i in unused:
            if turns[i].expect == shape:
                self._used.add(i)
                return turns[i].reply
        diff = "\n".join(
            difflib.unified_diff(
                turns[unused[0]].expect, shape, "recorded", "this request", lineterm="", n=2
            )
        )
        message = (
            f"FakeLLM replay: request #{self._asked} does not match the cassette "
            f"(conversation shape):\n{diff}"
        )
        self.mismatches.append(message)
        return ErrorReply(400, message, rule="cassette_mismatch")

    def pending(self) -> list[str]:
        left = [
            f"cassette turn #{i + 1} never replayed"
            for i in range(len(self.cassette.turns))
            if i not in self._used
        ]
        return self.mismatches + left
