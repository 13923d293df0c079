"""Tool names and source kinds: the parts of the contract a model sees before any call."""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["MAX_NAME_LENGTH", "NAME_PATTERN", "SOURCES", "Source", "is_valid_name", "sanitize"]

MAX_NAME_LENGTH = 64
#: The name rule that OpenAI and Anthropic enforce on function names.
NAME_PATTERN = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_OUTSIDE_NAME_ALPHABET = re.compile(r"[^a-zA-Z0-9_-]")


class Source(StrEnum):
    """Where a tool comes from; checks and safety rules differ by source."""

    MCP = "mcp"
    SKILL = "skill"
    BUILTIN = "builtin"
    A2A = "a2a"
    NATIVE = "native"
    HTTP = "http"
    CUSTOM = "custom"


SOURCES: frozenset[str] = frozenset(s.value for s in Source)


def sanitize(value: str) -> str:
    """Replace every code point outside ``[a-zA-Z0-9_-]`` with ``_``.

    The unit is the Unicode code point, not the byte and not the grapheme: ``"é"``
    (one code point) becomes ``"_"``, a single-code-point emoji becomes one ``"_"``,
    and a composed emoji such as a family (several code points joined by ZWJ)
    becomes one ``"_"`` per code point. The result is not truncated: length rules
    are the caller's to check, because truncating silently could make two names
    collide.
    """
    return _OUTSIDE_NAME_ALPHABET.sub("_", value)


def is_valid_name(value: object) -> bool:
    """True when ``value`` is a string that OpenAI and Anthropic accept as a tool name."""
    return isinstance(value, str) and NAME_PATTERN.fullmatch(value) is not None
