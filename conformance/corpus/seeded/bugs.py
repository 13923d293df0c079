"""Seeded bugs: tools that crash on one realistic kind of input, and clean twins that do not.

Each bad tool raises (an exception escapes ``execute``, TN601) only on inputs a
plain random draw rarely makes: a string past 20 or 300 characters, an array past
3 or 10 items, an emoji, a right-to-left mark, a whitespace-only string, a NUL, a
key with a dot or a space, a repeated item, an integer past 2**31, Feb 29, a path
that climbs out, one rare enum value, and the schema's own example. The same
functions are served over MCP by ``corpus/servers/seeded_bugs.py``.
"""

from __future__ import annotations

import datetime as dt
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolAnnotations, ToolResult
from toolnexus_ref._validation import argument_errors, validator_for


def _text(extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"text": {"type": "string", **(extra or {})}},
        "required": ["text"],
        "additionalProperties": False,
    }


def _list(items: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"items": {"type": "array", "items": dict(items)}},
        "required": ["items"],
        "additionalProperties": False,
    }


TEXT = _text()
STRINGS = _list({"type": "string"})
INTEGERS = _list({"type": "integer"})
LABELS = {"type": "object", "additionalProperties": {"type": "string"}}
COUNT = {
    "type": "object",
    "properties": {"count": {"type": "integer", "minimum": 0}},
    "required": ["count"],
    "additionalProperties": False,
}
DAY = _text({"format": "date"})
PATH = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}
REGIONS = ["us-east", "us-west", "eu-west", "eu-central", "ap-south", "ap-east", "sa-east", "af-south"]
REGION = {
    "type": "object",
    "properties": {"region": {"enum": REGIONS}},
    "required": ["region"],
    "additionalProperties": False,
}
MODE = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": 40},
        "mode": {"type": "string", "default": "fast-path-v2", "examples": ["fast-path-v2"]},
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _column(args: Mapping[str, Any]) -> str:
    text = args["text"]
    if len(text) > 20:
        raise ValueError(f"value too long for column title (VARCHAR(20)): {len(text)}")
    return text


def _note(args: Mapping[str, Any]) -> str:
    text = args["text"]
    if len(text) > 300:
        raise OverflowError(f"note buffer of 300 characters overflowed by {len(text) - 300}")
    return f"{len(text)} chars"


def _tags(args: Mapping[str, Any]) -> str:
    slots = [None, None, None]
    for index, tag in enumerate(args["items"]):
        slots[index] = tag  # IndexError past three tags
    return ",".join(str(s) for s in slots if s is not None)


def _batch(args: Mapping[str, Any]) -> str:
    items = args["items"]
    first, rest = items[:10], items[10:]
    if rest:
        return str(sum(first) + rest[len(rest)])  # off by one: IndexError past ten items
    return str(sum(first))


def _emoji(args: Mapping[str, Any]) -> str:
    text = args["text"]
    if any(ord(c) > 0xFFFF for c in text):
        raise UnicodeEncodeError("utf8mb3", text, 0, 1, "4-byte characters cannot be stored")
    return text


def _bidi(args: Mapping[str, Any]) -> str:
    text = args["text"]
    if any(c in "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in text):
        raise ValueError("bidirectional control characters break the renderer")
    return text


def _blank(args: Mapping[str, Any]) -> str:
    text = args["text"]
    words = text.split()
    if text and not words:
        return words[0]  # IndexError: whitespace only
    return words[0] if words else ""


def _nul(args: Mapping[str, Any]) -> str:
    text = args["text"]
    if "\x00" in text:
        raise ValueError("embedded null byte")
    return text


def _labels(args: Mapping[str, Any]) -> str:
    for key in args:
        if "." in key or " " in key:
            raise KeyError(f"label key {key!r} is not a valid identifier path")
    return ",".join(sorted(args))


def _unique(args: Mapping[str, Any]) -> str:
    items = args["items"]
    index: dict[str, int] = {}
    for position, item in enumerate(items):
        if item in index:
            raise ValueError(f"duplicate key {item!r}")
        index[item] = position
    return str(len(index))


def _int32(args: Mapping[str, Any]) -> str:
    return struct.pack("<i", args["count"]).hex()  # struct.error past 2**31 - 1


def _anniversary(args: Mapping[str, Any]) -> str:
    day = dt.date.fromisoformat(args["text"])
    if day.year >= 9999:
        return day.isoformat()
    return day.replace(year=day.year + 1).isoformat()  # ValueError on Feb 29


def _path(args: Mapping[str, Any]) -> str:
    path = args["path"]
    if path.startswith("/") or ".." in path.split("/"):
        raise PermissionError(f"{path!r} escapes the workspace")
    return path


_ENDPOINTS = {r: f"https://{r}.example" for r in REGIONS if r != "af-south"}


def _region(args: Mapping[str, Any]) -> str:
    return _ENDPOINTS[args["region"]]


def _mode(args: Mapping[str, Any]) -> str:
    if args.get("mode") == "fast-path-v2":
        raise NotImplementedError("fast-path-v2 was never finished")
    return args["query"]


def _clean(args: Mapping[str, Any]) -> str:
    return f"{len(args)} argument(s)"


@dataclass(frozen=True)
class Seed:
    """One seeded tool: its name, schema and body, and the input kind its bug needs."""

    name: str
    schema: Mapping[str, Any]
    body: Callable[[Mapping[str, Any]], str]
    bug: str = ""


BUGGY: tuple[Seed, ...] = (
    Seed("seed_over_20", TEXT, _column, "a string longer than 20 characters"),
    Seed("seed_over_300", TEXT, _note, "a string longer than 300 characters"),
    Seed("seed_over_3_items", STRINGS, _tags, "an array of more than 3 items"),
    Seed("seed_over_10_items", INTEGERS, _batch, "an array of more than 10 items"),
    Seed("seed_emoji", TEXT, _emoji, "a character past the BMP (emoji)"),
    Seed("seed_rtl", TEXT, _bidi, "a right-to-left or bidi control mark"),
    Seed("seed_blank", TEXT, _blank, "a whitespace-only string"),
    Seed("seed_nul", TEXT, _nul, "a NUL character"),
    Seed("seed_key_dot", LABELS, _labels, "a key with a dot or a space"),
    Seed("seed_repeat", STRINGS, _unique, "a repeated array item"),
    Seed("seed_int32", COUNT, _int32, "an integer of 2**31 or more"),
    Seed("seed_feb29", DAY, _anniversary, "Feb 29 in a format: date string"),
    Seed("seed_path", PATH, _path, "a path that starts with / or climbs with .."),
    Seed("seed_rare_enum", REGION, _region, "one enum value of eight"),
    Seed("seed_example", MODE, _mode, "the schema's own default/examples value"),
)
CLEAN: tuple[Seed, ...] = tuple(
    Seed(f"clean_{name}", schema, _clean)
    for name, schema in [
        ("text", TEXT),
        ("strings", STRINGS),
        ("integers", INTEGERS),
        ("labels", LABELS),
        ("count", COUNT),
        ("day", DAY),
        ("path", PATH),
        ("region", REGION),
        ("mode", MODE),
    ]
)


def run(seed: Seed, args: Any) -> ToolResult:
    """Refuse what the schema refuses (as an error result), else run the body: a bug raises."""
    errors = argument_errors(validator_for(seed.schema), args)
    if errors:
        return ToolResult.error("; ".join(errors))
    return ToolResult.ok(seed.body(args))


class SeededTool:
    """A native tool around one seed (duck-typed: ``BaseTool`` would catch the exception)."""

    source = "custom"
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    def __init__(self, seed: Seed) -> None:
        self.seed = seed
        self.name = seed.name
        self.description = f"A seeded corpus tool ({seed.bug or 'clean'})."
        self.input_schema = seed.schema

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return run(self.seed, args)


CORPUS = [
    *(Entry(SeededTool(s), trips=frozenset({"TN601"}), note=s.bug) for s in BUGGY),
    *(Entry(SeededTool(s), note="clean twin") for s in CLEAN),
]
