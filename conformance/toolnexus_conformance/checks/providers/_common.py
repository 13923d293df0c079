"""Helpers the provider profiles share: name rules and the object-schema rule."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from toolnexus_conformance._model import Finding
from toolnexus_conformance._subject import ToolSubject
from toolnexus_conformance.checks._walk import text_attribute

__all__ = [
    "OPENAI_ANTHROPIC_NAME",
    "is_array_schema",
    "is_object_schema",
    "name_findings",
    "type_names",
]

OPENAI_ANTHROPIC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def name_findings(
    subject: ToolSubject, rule: re.Pattern[str], provider: str, spelled: str
) -> Iterator[Finding]:
    """One finding when the name breaks ``rule``; ``spelled`` is the rule in words."""
    name = text_attribute(subject, "name", "TN101")
    if rule.fullmatch(name) is None:
        shown = name if len(name) <= 80 else name[:77] + "..."
        yield Finding(
            f"{provider} rejects the name {shown!r} ({len(name)} characters): it must be {spelled}",
            path="name",
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
