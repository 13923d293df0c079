"""Tool calls as the model sends them back, read from each provider's wire shape.

A model's tool call is untrusted input: the arguments may be broken JSON, a JSON
array, or missing altogether. Parsing never raises for such a call; it yields a
``ToolCall`` whose ``error`` says what is wrong, so the host can send that back
to the model as an error result and let it try again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ToolCall",
    "parse_anthropic_tool_calls",
    "parse_gemini_tool_calls",
    "parse_openai_tool_calls",
]

#: How much of a broken argument text an error message quotes back.
_QUOTE_LIMIT = 200


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for: ``(id, name, arguments)``, or an ``error``.

    ``arguments`` is a dict when the call is well formed and ``None`` when it is
    not; then ``error`` says why, in words the model can act on. ``raw`` keeps the
    provider's item for hosts that need a field we do not read.
    """

    id: str | None
    name: str
    arguments: dict[str, Any] | None = None
    error: str | None = None
    raw: Any = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True when the call can be executed as it is."""
        return self.error is None and self.arguments is not None

    @property
    def args(self) -> dict[str, Any]:
        """The arguments, or ``{}`` for a malformed call (filters read this)."""
        return self.arguments if self.arguments is not None else {}


def _get(item: Any, key: str, default: Any = None) -> Any:
    """Read ``key`` from a dict or an attribute from an SDK object (pydantic models)."""
    if isinstance(item, Mapping):
        return item.get(key, default)
    return getattr(item, key, default)


def _quote(text: str) -> str:
    return text if len(text) <= _QUOTE_LIMIT else text[:_QUOTE_LIMIT] + "…"


def _arguments_from_text(name: str, text: str) -> tuple[dict[str, Any] | None, str | None]:
    """JSON text to an argument object, or an error that quotes the offending text.

    An empty string counts as ``{}``: some models send it for a call without
    arguments, and refusing it would only make the model retry the same thing.
    """
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, (
            f"The arguments for {name!r} are not valid JSON ({exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}): {_quote(text)!r}. Send a JSON object."
        )
    except RecursionError:
        return None, f"The arguments for {name!r} are nested too deeply to read."
    return _arguments_from_value(name, value)


def _arguments_from_value(name: str, value: Any) -> tuple[dict[str, Any] | None, str | None]:
    if value is None:
        return {}, None  # providers omit or null the arguments of a call that takes none
    if isinstance(value, str):
        return _arguments_from_text(name, value)
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}, None
    return None, (
        f"The arguments for {name!r} must be a JSON object, got {_json_type(value)}. "
        "Send a JSON object whose keys are the parameter names."
    )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def _name_of(value: Any) -> tuple[str, str | None]:
    if isinstance(value, str) and value:
        return value, None
    return "", f"The tool call has no tool name (got {value!r}); name one of the offered tools."


def _make(call_id: Any, name_value: Any, arguments: Any, raw: Any) -> ToolCall:
    name, name_error = _name_of(name_value)
    args, args_error = _arguments_from_value(name, arguments)
    error = name_error or args_error
    return ToolCall(_id(call_id), name, None if error else args, error, raw)


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _items(value: Any, container_key: str, what: str) -> Sequence[Any]:
    """The list of items, whether given directly or inside a message-like container."""
    if value is None:
        return []
    if isinstance(value, Mapping) or not isinstance(value, Sequence):
        inner = _get(value, container_key)
        if inner is None:
            if isinstance(value, Mapping) or hasattr(value, container_key):
                return []
            raise TypeError(
                f"expected a list of {what} or an object with {container_key!r}, "
                f"got {type(value).__name__}"
            )
        value = inner
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(f"expected a list of {what}, got {type(value).__name__}")
    return value


def parse_openai_tool_calls(message: Any) -> list[ToolCall]:
    """Read OpenAI tool calls: a Chat Completions ``message`` or its ``tool_calls`` list.

    Chat Completions items are ``{"id", "type": "function", "function": {"name",
    "arguments": "<JSON text>"}}``. Responses API output items
    (``{"type": "function_call", "call_id", "name", "arguments"}``) are read too, and
    SDK objects work as well as dicts. Other item types (a Responses ``message``)
    are skipped.
    """
    calls: list[ToolCall] = []
    for index, item in enumerate(_items(message, "tool_calls", "OpenAI tool calls")):
        kind = _get(item, "type")
        if kind == "function_call":  # Responses API
            calls.append(_make(_get(item, "call_id"), _get(item, "name"), _text(item), item))
            continue
        if kind not in (None, "function"):
            continue
        function = _get(item, "function")
        if function is None:
            calls.append(
                ToolCall(
                    _id(_get(item, "id")),
                    "",
                    None,
                    f"Tool call #{index} has no 'function' object; send "
                    '{"type": "function", "function": {"name": ..., "arguments": ...}}.',
                    item,
                )
            )
            continue
        calls.append(_make(_get(item, "id"), _get(function, "name"), _text(function), item))
    return calls


def _text(item: Any) -> Any:
    """OpenAI arguments: JSON text, which is what the wire carries (an object is accepted)."""
    return _get(item, "arguments")


def parse_anthropic_tool_calls(content: Any) -> list[ToolCall]:
    """Read Anthropic ``tool_use`` blocks from a message or its ``content`` list.

    Blocks are ``{"type": "tool_use", "id", "name", "input": {...}}``; other
    blocks (text, thinking) are skipped.
    """
    calls: list[ToolCall] = []
    for block in _items(content, "content", "Anthropic content blocks"):
        if _get(block, "type") != "tool_use":
            continue
        calls.append(_make(_get(block, "id"), _get(block, "name"), _get(block, "input"), block))
    return calls


def parse_gemini_tool_calls(content: Any) -> list[ToolCall]:
    """Read Gemini ``functionCall`` parts from a response, a candidate's content or its parts.

    Parts are ``{"functionCall": {"name", "args": {...}, "id"?}}``. Gemini often
    omits ids; a missing one is made from the call's position, name and arguments,
    so parsing the same response twice gives the same ids.
    """
    candidates = _get(content, "candidates") if not isinstance(content, list) else None
    if candidates:
        content = _get(candidates[0], "content")
    calls: list[ToolCall] = []
    parts = _items(content, "parts", "Gemini parts")
    for index, part in enumerate(parts):
        call = _get(part, "functionCall")
        if call is None:
            call = _get(part, "function_call")
        if call is None:
            continue
        name, args = _get(call, "name"), _get(call, "args")
        parsed = _make(_get(call, "id"), name, args, part)
        if parsed.id is None:
            parsed = ToolCall(
                _stable_id(index, name, args), parsed.name, parsed.arguments, parsed.error, part
            )
        calls.append(parsed)
    return calls


def _stable_id(index: int, name: Any, args: Any) -> str:
    try:
        payload = json.dumps([index, name, args], sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        payload = repr((index, name))
    return f"call_{index}_{hashlib.sha256(payload.encode()).hexdigest()[:12]}"
