"""Known-good tools: every static check passes, except one side of a provider conflict.

OpenAI strict mode needs ``additionalProperties: false`` on every object (TN412), and
Gemini's ``parameters`` has no ``additionalProperties`` field at all (TN431), so no
object schema satisfies both. Each good tool picks a side: ``STRICT`` tools trip only
TN431 (Gemini would take them as ``parametersJsonSchema``), ``GEMINI`` tools trip only
TN412. Everything else, errors and warnings alike, must pass.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from toolnexus_ref import BaseTool, ToolContext, ToolResult
from toolnexus_ref._calling import cancelled_result
from toolnexus_ref._validation import argument_errors, validator_for
from toolnexus_conformance.corpus import Entry

#: The codes a good tool may trip: exactly one of them (see the module docstring).
PROFILE_CONFLICT = frozenset({"TN412", "TN431"})


def strict(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object schema on the OpenAI-strict side: every property required, no extras."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


def gemini(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """An object schema inside Gemini's OpenAPI subset: every property required."""
    return {"type": "object", "properties": properties, "required": list(properties), **extra}


class SyncTool:
    """A duck-typed tool with a plain ``def execute`` that keeps the contract by hand."""

    source = "custom"

    def __init__(self, name: str, description: str, input_schema: dict[str, Any], source: str, fn: Any) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.source = source
        self._fn = fn
        self._validator = validator_for(input_schema)

    def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        if ctx is not None and ctx.is_cancelled():
            return cancelled_result(ctx)
        errors = argument_errors(self._validator, args)
        if errors:
            return ToolResult.error("Invalid arguments:\n" + "\n".join(errors))
        try:
            return ToolResult.ok(json.dumps(self._fn(dict(args))))
        except Exception as exc:
            return ToolResult.error(f"{type(exc).__name__}: {exc}")


class AsyncTool(SyncTool):
    """The same with ``async def execute``."""

    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:  # type: ignore[override]
        await asyncio.sleep(0)
        return SyncTool.execute(self, args, ctx)


class AddNumbers(BaseTool):
    name = "add_numbers"
    description = "Add two numbers and return the sum."
    input_schema = strict(
        {
            "a": {"type": "number", "description": "The first addend."},
            "b": {"type": "number", "description": "The second addend."},
        }
    )
    source = "native"

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"sum": args["a"] + args["b"]}


class SlowCount(BaseTool):
    name = "count_to"
    description = "Count from 1 to n, pausing briefly between numbers; honours cancellation."
    input_schema = gemini({"n": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Where to stop."}})
    source = "native"

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        for _ in range(args["n"]):
            if ctx is not None and ctx.is_cancelled():
                break
            await asyncio.sleep(0.001)
        return list(range(1, args["n"] + 1))


ADDRESS = {
    "type": "object",
    "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"},
        "country": {"type": "string", "pattern": "^[A-Z]{2}$", "description": "ISO 3166 code."},
    },
    "required": ["street", "city", "country"],
    "additionalProperties": False,
}

GOOD = [
    Entry(AddNumbers(), note="native-like BaseTool, sync run, strict side"),
    Entry(SlowCount(), note="native-like BaseTool, async run, Gemini side"),
    Entry(
        SyncTool(
            "http_status",
            "Fetch a URL with GET and return only the HTTP status code (simulated, offline).",
            gemini({"url": {"type": "string", "description": "An http(s) URL."}}),
            "http",
            lambda a: {"status": 200, "url": a["url"]},
        ),
        note="http source, sync execute, Gemini side",
    ),
    Entry(
        AsyncTool(
            "skill",
            "Load the instructions of a named skill.",
            gemini({"name": {"type": "string", "enum": ["pdf", "xlsx", "docx"], "description": "The skill."}}),
            "skill",
            lambda a: {"skill": a["name"], "instructions": "..."},
        ),
        note="skill source, async execute, Gemini side",
    ),
    Entry(
        SyncTool(
            "read_clock",
            "Return the current time of a named time zone (a fixed, offline answer).",
            strict({"zone": {"type": "string", "description": "An IANA zone, e.g. Europe/Paris."}}),
            "builtin",
            lambda a: {"zone": a["zone"], "time": "2025-01-01T00:00:00Z"},
        ),
        note="builtin source, read-only, strict side",
    ),
    Entry(
        AsyncTool(
            "schedule_event",
            "Check a proposed event for clashes without saving it.",
            strict(
                {
                    "title": {"type": "string"},
                    "start": {"type": "string", "format": "date-time"},
                    "attendees": {
                        "type": "array",
                        "minItems": 1,
                        "items": strict({"email": {"type": "string", "format": "email"}, "optional": {"type": "boolean"}}),
                    },
                    "place": ADDRESS,
                }
            ),
            "custom",
            lambda a: {"clashes": [], "title": a["title"]},
        ),
        note="nested objects and arrays of objects, async, strict side",
    ),
    Entry(
        SyncTool(
            "search_catalog",
            "Search the product catalog with nested filters.",
            gemini(
                {
                    "query": {"type": "string"},
                    "filters": gemini(
                        {
                            "price": gemini({"low": {"type": "number"}, "high": {"type": "number"}}),
                            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
                        }
                    ),
                }
            ),
            "native",
            lambda a: {"hits": [], "query": a["query"]},
        ),
        note="three levels of nested objects, Gemini side",
    ),
    Entry(
        SyncTool(
            "greet",
            "Greet someone, optionally by title.",
            strict(
                {
                    "name": {"type": "string"},
                    "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Null for none."},
                }
            ),
            "custom",
            lambda a: f"Hello {a.get('title') or ''} {a['name']}".replace("  ", " "),
        ),
        note="an optional argument as a null union, strict side",
    ),
    Entry(
        AsyncTool(
            "convert_units",
            "Convert a length between metric and imperial units.",
            gemini(
                {
                    "value": {"type": "number"},
                    "unit": {"type": "string", "enum": ["m", "km", "ft", "mi"]},
                    "to": {"type": "string", "enum": ["m", "km", "ft", "mi"]},
                }
            ),
            "custom",
            lambda a: {"value": a["value"], "unit": a["to"]},
        ),
        note="enums, async, Gemini side",
    ),
    Entry(
        SyncTool(
            "ship_parcel_quote",
            "Quote the price of shipping a parcel between two addresses (no parcel is sent).",
            strict(
                {"sender": {"$ref": "#/$defs/Address"}, "recipient": {"$ref": "#/$defs/Address"}, "kg": {"type": "number"}},
                **{"$defs": {"Address": ADDRESS}},
            ),
            "http",
            lambda a: {"price": 12.5, "currency": "EUR"},
        ),
        note="$defs and local $refs, strict side",
    ),
    Entry(
        AsyncTool(
            "word_count",
            "Count the words in a text.",
            strict({"text": {"type": "string"}}),
            "native",
            lambda a: {"words": len(a["text"].split())},
        ),
        note="the simplest async tool, strict side",
    ),
    Entry(
        SyncTool(
            "no_arguments",
            "Return a fixed greeting; takes no arguments.",
            {"type": "object", "properties": {}, "additionalProperties": False},
            "builtin",
            lambda a: "hello",
        ),
        note="an empty object schema, strict side",
    ),
]

CORPUS = GOOD
