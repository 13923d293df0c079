"""The provider-neutral conversation that every wire format converts to and from.

Tool-call arguments stay raw text here: a model may send arguments that are not
JSON at all, and a host must be able to see (and refuse) exactly what came.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FinishReason",
    "Message",
    "Request",
    "Role",
    "Settings",
    "ToolCallPart",
    "ToolDecl",
    "ToolResultPart",
    "TruncatedStream",
    "Turn",
    "Usage",
    "WireError",
]

Role = Literal["system", "user", "assistant", "tool"]
#: ``stop``: a final answer; ``tool_calls``: the model wants tools run; ``length``: cut off.
FinishReason = Literal["stop", "tool_calls", "length"]


class WireError(ValueError):
    """A body that does not follow the wire format it claims to be."""


class TruncatedStream(WireError):
    """A streamed reply that ended before the provider said it was complete."""


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """One tool as the model is shown it, whatever the wire format."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A call the model asked for. ``arguments`` is the raw text the model produced."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> Any:
        """The arguments as JSON data; raises ``json.JSONDecodeError`` when they are not JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}

    @classmethod
    def of(cls, id: str, name: str, arguments: Any) -> ToolCallPart:
        """Build from data (dumped to JSON) or from raw text (kept as is)."""
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return cls(id, name, text)


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """What a host sent back for one call."""

    call_id: str
    output: str
    is_error: bool = False
    name: str = ""


@dataclass(frozen=True, slots=True)
class Message:
    """One message of the conversation."""

    role: Role
    text: str | None = None
    tool_calls: tuple[ToolCallPart, ...] = ()
    tool_results: tuple[ToolResultPart, ...] = ()


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Turn:
    """One reply of the model: text, tool calls, why it stopped, and what it cost."""

    text: str | None = None
    tool_calls: tuple[ToolCallPart, ...] = ()
    finish_reason: FinishReason | None = None
    usage: Usage = Usage()

    @property
    def finish(self) -> FinishReason:
        """The finish reason, inferred from the content when the turn did not say."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    def as_message(self) -> Message:
        return Message("assistant", self.text, self.tool_calls)


ToolChoice = Literal["auto", "none", "required"]


@dataclass(frozen=True, slots=True)
class Settings:
    """What a request asks of the reply, in every wire's terms.

    ``tool_choice`` is ``auto`` (the model decides), ``none`` (no calls),
    ``required`` (at least one call; Anthropic's ``any``) or the name of the one tool
    the model must call. ``None`` means the request did not say.
    """

    tool_choice: str | None = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = None
    #: ``json_object`` (any JSON object) or ``json_schema`` (``response_schema`` applies)
    response_format: str | None = None
    response_schema: Mapping[str, Any] | None = None
    #: a streamed reply carries usage (OpenAI: ``stream_options.include_usage``)
    stream_usage: bool = True

    def to_data(self) -> dict[str, Any]:
        return {
            key: value
            for key, value in (
                ("tool_choice", self.tool_choice),
                ("parallel_tool_calls", self.parallel_tool_calls),
                ("max_tokens", self.max_tokens),
                ("response_format", self.response_format),
                ("response_schema", self.response_schema),
            )
            if value is not None
        }


@dataclass(frozen=True, slots=True)
class Request:
    """A request to a model, parsed from (or to be built into) any wire format."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolDecl, ...] = ()
    stream: bool = False
    provider: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False)
    settings: Settings = Settings()

    def to_data(self) -> dict[str, Any]:
        """Plain JSON data in a stable shape, for snapshots: no ids the fake made up
        beyond the ones the conversation carries, no raw body."""
        return {
            "provider": self.provider,
            "model": self.model,
            "stream": self.stream,
            "settings": self.settings.to_data(),
            "tools": [
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in self.tools
            ],
            "messages": [message_data(m) for m in self.messages],
        }

    @property
    def tool_results(self) -> tuple[ToolResultPart, ...]:
        """Every tool result the conversation carries, oldest first."""
        return tuple(r for m in self.messages for r in m.tool_results)

    @property
    def tool_calls(self) -> tuple[ToolCallPart, ...]:
        """Every call the assistant made earlier in the conversation, oldest first."""
        return tuple(c for m in self.messages for c in m.tool_calls)


def message_data(message: Message) -> dict[str, Any]:
    """One message as plain data, keys only for what it carries."""
    out: dict[str, Any] = {"role": message.role}
    if message.text is not None:
        out["text"] = message.text
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
    if message.tool_results:
        out["tool_results"] = [
            {"call_id": r.call_id, "name": r.name, "output": r.output, "is_error": r.is_error}
            for r in message.tool_results
        ]
    return out


def stream_fragment(length: int, fragment: int) -> int:
    """The fragment size for a streamed text of ``length`` characters: ``fragment``, but
    never more than about 256 deltas per part, as a real stream of a long argument
    carries several tokens per event."""
    return max(fragment, -(-length // 256))


def split_text(text: str, size: int) -> list[str]:
    """``text`` in fragments of at most ``size`` characters (one empty fragment for '')."""
    if size < 1:
        raise ValueError(f"fragment size must be >= 1, got {size}")
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def system_text(messages: tuple[Message, ...] | list[Message]) -> str | None:
    """The system messages joined: Anthropic and Gemini carry them outside the list."""
    parts = [m.text for m in messages if m.role == "system" and m.text]
    return "\n\n".join(parts) if parts else None


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise WireError(message)


def as_mapping(value: object, what: str) -> Mapping[str, Any]:
    expect(isinstance(value, Mapping), f"{what} must be a JSON object, got {type(value).__name__}")
    assert isinstance(value, Mapping)
    return value


def as_list(value: object, what: str) -> list[Any]:
    expect(isinstance(value, list), f"{what} must be a JSON array, got {type(value).__name__}")
    assert isinstance(value, list)
    return value
