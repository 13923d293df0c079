"""What an agent said in one conversation, gathered from a stream (or a single answer) of events.

A streaming agent sends a task, then status and artifact updates; a blocking one
sends the finished task; a quick one answers with a bare message. All three end
up here as one state and one set of artifacts, and the state decides the result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._result import ToolResult

__all__ = ["FINAL", "INTERRUPTED", "Conversation", "parts_text", "state_name"]

#: Short names of the protocol's task states, as the specification writes them.
_NAMES = {
    0: "unspecified",
    1: "submitted",
    2: "working",
    3: "completed",
    4: "failed",
    5: "canceled",
    6: "input-required",
    7: "rejected",
    8: "auth-required",
}
FINAL = frozenset({"completed", "failed", "canceled", "rejected"})
#: States in which the task waits for its client: the call cannot go on without an answer.
INTERRUPTED = frozenset({"input-required", "auth-required"})


def state_name(state: int) -> str:
    return _NAMES.get(int(state), f"unknown ({int(state)})")


def parts_text(parts: Sequence[Any]) -> str:
    """Text parts as they are, data parts as JSON text, files by name or address."""
    from google.protobuf.json_format import MessageToDict

    out = []
    for part in parts:
        if part.HasField("text"):
            out.append(part.text)
        elif part.HasField("data"):
            out.append(json.dumps(MessageToDict(part.data), ensure_ascii=False, sort_keys=True))
        elif part.HasField("url"):
            out.append(f"[file {part.filename or part.url}: {part.url}]")
        elif part.HasField("raw"):
            out.append(f"[file {part.filename or 'unnamed'}: {len(part.raw)} bytes]")
    return "\n".join(out)


@dataclass
class Conversation:
    """The task's id, its last known state, its artifacts, and a direct reply if there was one."""

    task_id: str | None = None
    context_id: str | None = None
    state: str | None = None
    status_text: str = ""
    reply: str | None = None
    artifacts: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def settled(self) -> bool:
        return self.reply is not None or self.state in FINAL or self.state in INTERRUPTED

    def absorb(self, event: Any) -> None:
        """One ``StreamResponse`` (or a ``Task``) into the state."""
        kind = event.WhichOneof("payload") if hasattr(event, "WhichOneof") else None
        if kind is None or kind == "task":
            task = event if kind is None else event.task
            self.task_id = task.id or self.task_id
            self.context_id = task.context_id or self.context_id
            if task.artifacts:
                self.artifacts = {a.artifact_id: list(a.parts) for a in task.artifacts}
            self._status(task.status)
        elif kind == "message":
            self.reply = parts_text(event.message.parts)
        elif kind == "status_update":
            update = event.status_update
            self.task_id = update.task_id or self.task_id
            self.context_id = update.context_id or self.context_id
            self._status(update.status)
        elif kind == "artifact_update":
            update = event.artifact_update
            self.task_id = update.task_id or self.task_id
            artifact = update.artifact
            if update.append and artifact.artifact_id in self.artifacts:
                self.artifacts[artifact.artifact_id].extend(artifact.parts)
            else:
                self.artifacts[artifact.artifact_id] = list(artifact.parts)

    def _status(self, status: Any) -> None:
        self.state = state_name(status.state)
        if status.HasField("message"):
            self.status_text = parts_text(status.message.parts)

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {}
        if self.task_id:
            meta["a2a_task_id"] = self.task_id
        if self.context_id:
            meta["a2a_context_id"] = self.context_id
        if self.state:
            meta["a2a_state"] = self.state
        return meta

    def result(self) -> ToolResult:
        """The settled conversation as the model reads it."""
        meta = self.metadata()
        if self.reply is not None:
            return ToolResult.ok(self.reply, meta)
        words = self.status_text.strip()
        if self.state == "completed":
            texts = [parts_text(parts) for parts in self.artifacts.values()]
            if words and words not in texts:
                texts.append(words)
            text = "\n".join(t for t in texts if t)
            return ToolResult.ok(text or "(the agent completed the task with no output)", meta)
        if self.state in ("failed", "rejected"):
            verb = "failed" if self.state == "failed" else "rejected"
            return ToolResult.error(
                f"The agent {verb} the task: {words or '(it gave no reason)'}",
                {**meta, "error_type": f"Task{verb.capitalize()}"},
                retryable=False,
            )
        if self.state == "canceled":
            return ToolResult.error(
                f"The agent cancelled the task{': ' + words if words else ''}",
                {**meta, "cancelled": True, "error_type": "Cancelled"},
                retryable=False,
            )
        if self.state in INTERRUPTED:
            what = "input" if self.state == "input-required" else "authentication"
            pending = {"kind": self.state, "question": words, **meta}
            return ToolResult.error(
                f"The agent needs {what} before it can go on: {words or '(it did not say what)'}",
                {**meta, "error_type": "InputRequired", "pending": pending, "suspended": True},
                retryable=False,
            )
        return ToolResult.error(
            f"The agent's answer ended with the task {self.state or 'in no state'}, not finished",
            {**meta, "error_type": "Unfinished"},
            retryable=True,
        )
