"""What each provider refuses with a 400, checked before the fake answers.

These are the agent-loop bugs that pass against a lenient mock and fail in
production: a tool result for a call that was never made, a call left unanswered, a
tool message with no call before it, an Anthropic ``tool_result`` after text, a tool
name or schema the provider rejects, a missing ``max_tokens``. Each rule has a short
name (``Refusal.rule``) and the provider's own wording where it is known, so the SDK
raises its own ``BadRequestError`` with a message a developer can search for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolnexus_ref.wire import Request

__all__ = ["RULES", "Refusal", "refusal_for"]

_OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")
#: Keys Gemini's OpenAPI-subset ``parameters`` has no field for.
_GEMINI_UNKNOWN = ("additionalProperties", "$schema", "$ref", "$defs")


@dataclass(frozen=True, slots=True)
class Refusal:
    rule: str
    message: str
    param: str | None = None
    status: int = 400


Check = Callable[[Request], "Refusal | None"]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _schema_type(schema: object) -> object:
    return _map(schema).get("type")


# -- OpenAI Chat Completions -----------------------------------------------------------
def _openai_tools(request: Request) -> Refusal | None:
    for i, tool in enumerate(_list(request.raw.get("tools"))):
        fn = _map(_map(tool).get("function"))
        name = fn.get("name")
        if not isinstance(name, str) or not _OPENAI_NAME.match(name):
            return Refusal(
                "tool_name",
                f"Invalid 'tools[{i}].function.name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                f"tools[{i}].function.name",
            )
        if "parameters" in fn and _schema_type(fn["parameters"]) != "object":
            return Refusal(
                "tool_schema",
                f"Invalid schema for function '{name}': schema must be a JSON Schema of "
                f"'type: \"object\"', got 'type: \"{_schema_type(fn['parameters'])}\"'.",
                f"tools[{i}].function.parameters",
            )
    return None


def _openai_messages(request: Request) -> Refusal | None:
    open_ids: list[str] = []
    for i, raw in enumerate(_list(request.raw.get("messages"))):
        message = _map(raw)
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_ids:
                return Refusal(
                    "tool_result_without_call",
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{i}].role",
                )
            open_ids.remove(call_id)
            continue
        if open_ids:
            return _unanswered_openai(open_ids, i)
        if role == "assistant":
            open_ids = [str(_map(c).get("id")) for c in _list(message.get("tool_calls"))]
    if open_ids:
        return _unanswered_openai(open_ids, len(_list(request.raw.get("messages"))))
    return None


def _unanswered_openai(ids: list[str], index: int) -> Refusal:
    return Refusal(
        "unanswered_tool_call",
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids),
        f"messages.[{index}].role",
    )


# -- OpenAI Responses --------------------------------------------------------------------
def _responses_tools(request: Request) -> Refusal | None:
    for i, tool in enumerate(_list(request.raw.get("tools"))):
        tool = _map(tool)
        if tool.get("type") != "function":
            continue
        name = tool.get("name")
        if not isinstance(name, str) or not _OPENAI_NAME.match(name):
            return Refusal(
                "tool_name",
                f"Invalid 'tools[{i}].name': string does not match pattern. "
                "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                f"tools[{i}].name",
            )
        if tool.get("parameters") is not None and _schema_type(tool["parameters"]) != "object":
            return Refusal(
                "tool_schema",
                f"Invalid schema for function '{name}': schema must be a JSON Schema of "
                f"'type: \"object\"', got 'type: \"{_schema_type(tool['parameters'])}\"'.",
                f"tools[{i}].parameters",
            )
    return None


def _responses_items(request: Request) -> Refusal | None:
    """On the resolved conversation: ``previous_response_id`` history included."""
    made: set[str] = set()
    answered: set[str] = set()
    for message in request.messages:
        for call in message.tool_calls:
            made.add(call.id)
        for result in message.tool_results:
            if result.call_id not in made:
                return Refusal(
                    "tool_result_without_call",
                    f"No tool call found for function call output with call_id {result.call_id}.",
                    "input",
                )
            answered.add(result.call_id)
    for message in request.messages:
        for call in message.tool_calls:
            if call.id not in answered:
                return Refusal(
                    "unanswered_tool_call",
                    f"No tool output found for function call {call.id}.",
                    "input",
                )
    return None


# -- Anthropic Messages -------------------------------------------------------------------
def _anthropic_body(request: Request) -> Refusal | None:
    if not isinstance(request.raw.get("max_tokens"), int):
        return Refusal("max_tokens_required", "max_tokens: Field required")
    for i, tool in enumerate(_list(request.raw.get("tools"))):
        tool = _map(tool)
        if tool.get("type") not in (None, "custom"):
            continue  # a server tool (web search, ...) has no name rules of ours
        name = tool.get("name")
        if not isinstance(name, str) or not _OPENAI_NAME.match(name):
            return Refusal(
                "tool_name",
                f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'",
            )
        if _schema_type(tool.get("input_schema")) != "object":
            return Refusal(
                "tool_schema", f"tools.{i}.custom.input_schema.type: Input should be 'object'"
            )
    return None


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [_map(b) for b in _list(message.get("content"))]


def _anthropic_messages(request: Request) -> Refusal | None:
    messages = [_map(m) for m in _list(request.raw.get("messages"))]
    return _anthropic_results(messages) or _anthropic_unanswered(messages)


def _anthropic_results(messages: list[Mapping[str, Any]]) -> Refusal | None:
    """Every ``tool_result`` answers a ``tool_use`` of the message before, and comes
    before any other block of its message."""
    for i, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        previous = _blocks(messages[i - 1]) if i else []
        known = {str(b.get("id")) for b in previous if b.get("type") == "tool_use"}
        seen_other = False
        for j, block in enumerate(_blocks(message)):
            if block.get("type") != "tool_result":
                seen_other = True
                continue
            if seen_other:
                return Refusal(
                    "tool_result_after_content",
                    f"messages.{i}.content.{j}: tool_result blocks must come first in the "
                    "content of a user message, before any text or other block.",
                )
            if str(block.get("tool_use_id")) not in known:
                return Refusal(
                    "tool_result_without_call",
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                    "block must have a corresponding `tool_use` block in the previous message.",
                )
    return None


def _anthropic_unanswered(messages: list[Mapping[str, Any]]) -> Refusal | None:
    """Every ``tool_use`` is answered in the very next message (when one follows)."""
    for i, message in enumerate(messages[:-1]):
        uses = [str(b.get("id")) for b in _blocks(message) if b.get("type") == "tool_use"]
        following = _blocks(messages[i + 1])
        results = {str(b.get("tool_use_id")) for b in following if b.get("type") == "tool_result"}
        missing = [u for u in uses if u not in results]
        if missing:
            return Refusal(
                "unanswered_tool_call",
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have "
                "a corresponding `tool_result` block in the next message.",
            )
    return None


# -- Gemini generateContent ----------------------------------------------------------------
def _field(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    return data.get(camel, data.get(snake))


def _gemini_tools(request: Request) -> Refusal | None:
    for i, entry in enumerate(_list(request.raw.get("tools"))):
        decls = _field(_map(entry), "functionDeclarations", "function_declarations")
        for j, decl in enumerate(_list(decls)):
            decl = _map(decl)
            where = f"tools[{i}].function_declarations[{j}]"
            name = decl.get("name")
            if not isinstance(name, str) or not _GEMINI_NAME.match(name):
                return Refusal(
                    "tool_name",
                    f"* GenerateContentRequest.{where}.name: Invalid function name. Must start "
                    "with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), "
                    "underscores (_), dots (.), colons (:), or dashes (-), with a maximum "
                    "length of 64.",
                )
            found = _unknown_schema_key(decl.get("parameters"), _GEMINI_UNKNOWN)
            if found is None:
                found = _unknown_schema_key(
                    _field(decl, "parametersJsonSchema", "parameters_json_schema"), ("$schema",)
                )
            if found is not None:
                return Refusal(
                    "tool_schema",
                    f'Invalid JSON payload received. Unknown name "{found}" at '
                    f"'{where}.parameters': Cannot find field.",
                )
    return None


def _unknown_schema_key(schema: object, keys: tuple[str, ...]) -> str | None:
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key in keys:
                return str(key)
            found = _unknown_schema_key(value, keys)
            if found is not None:
                return found
    elif isinstance(schema, list):
        for value in schema:
            found = _unknown_schema_key(value, keys)
            if found is not None:
                return found
    return None


def _gemini_turns(request: Request) -> Refusal | None:
    messages = request.messages
    for i, message in enumerate(messages):
        if message.role == "tool" and (i == 0 or not messages[i - 1].tool_calls):
            return _gemini_pairing()
        if message.tool_calls and i + 1 < len(messages):
            answer = messages[i + 1]
            called = sorted(c.name for c in message.tool_calls)
            returned = sorted(r.name for r in answer.tool_results)
            if answer.role != "tool" or called != returned:
                return _gemini_pairing()
    return None


def _gemini_pairing() -> Refusal:
    return Refusal(
        "unanswered_tool_call",
        "Please ensure that function response turn comes immediately after a function call "
        "turn. And the number of function response parts should be equal to number of "
        "function call parts of the function call turn, with the same names.",
    )


#: The checks of each provider, in the order the provider applies them.
RULES: dict[str, tuple[Check, ...]] = {
    "openai": (_openai_tools, _openai_messages),
    "responses": (_responses_tools, _responses_items),
    "anthropic": (_anthropic_body, _anthropic_messages),
    "gemini": (_gemini_tools, _gemini_turns),
    "ollama": (),  # Ollama accepts what it is sent
}


def refusal_for(request: Request) -> Refusal | None:
    """The first rule ``request`` breaks for its provider, or ``None``."""
    for check in RULES.get(request.provider, ()):
        found = check(request)
        if found is not None:
            return found
    return None
