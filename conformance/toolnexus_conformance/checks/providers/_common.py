"""Helpers the provider profiles share: name rules and the object-schema rule."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from toolnexus_conformance._model import Finding
from toolnexus_conformance._options import Provider
from toolnexus_conformance._subject import ToolSubject
from toolnexus_conformance.checks.naming import mcp_original_name, own_name

__all__ = [
    "GEMINI_PROFILES",
    "OPENAI_ANTHROPIC_NAME",
    "OPENAI_PROFILES",
    "is_array_schema",
    "is_object_schema",
    "name_findings",
    "type_names",
]

OPENAI_ANTHROPIC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: Strict mode is OpenAI function calling plus its own schema rules: both profiles
#: judge the name, the parameters object, the tool count and array items.
OPENAI_PROFILES = (Provider.OPENAI, Provider.OPENAI_STRICT)
#: Gemini's name rule holds whichever field carries the schema.
GEMINI_PROFILES = (Provider.GEMINI, Provider.GEMINI_JSON_SCHEMA)


def name_findings(
    subject: ToolSubject, rule: re.Pattern[str], provider: str, spelled: str
) -> Iterator[Finding]:
    """One finding when the name breaks ``rule``; ``spelled`` is the rule in words.

    An MCP tool is judged by its server's own name, not by the prefixed name this kit
    exposes: the prefix is ours (TN153 judges its length), and hosts differ in theirs.
    """
    name = own_name(subject)
    if rule.fullmatch(name) is None:
        shown = name if len(name) <= 80 else name[:77] + "..."
        if mcp_original_name(subject) is None:
            what, path = "the name", "name"
        else:
            what, path = "the MCP tool name", "original_name"
        yield Finding(
            f"{provider} rejects {what} {shown!r} ({len(name)} characters): it must be {spelled}",
            path=path,
        )


def type_names(schema: dict[str, Any]) -> tuple[str, ...]:
    """The names in ``type``, whether it is one string or a list."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list):
        return tuple(k for k in kind if isinstance(k, str))
    return ()


def is_object_schema(schema: dict[str, Any]) -> bool:
    return "object" in type_names(schema) or (
        "type" not in schema and isinstance(schema.get("properties"), dict)
    )


def is_array_schema(schema: dict[str, Any]) -> bool:
    return "array" in type_names(schema)
