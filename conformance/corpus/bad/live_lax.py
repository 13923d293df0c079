"""Known-bad validation that coerces (TN604): wrong types accepted because they convert.

The tool validates, but the way pydantic's lax mode and many hand-written tools do:
``true`` and ``"1"`` become the integer 1 and the call reports success. Everything
else that breaks the schema (a missing field, an unknown key, ``null``, ``1.5``,
``"abc"``) is refused, so only mutations that send the coercible values catch it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolResult

_INTEGER = re.compile(r"-?[0-9]+")


def _lax_int(value: object) -> int | None:
    """What a lax validator makes of a value declared ``integer``; ``None`` when it refuses."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    return None


class CoercesIntegers:
    name = "coerces_integers"
    description = "Doubles an integer."
    source = "custom"
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer", "description": "The integer to double."}},
        "required": ["a"],
        "additionalProperties": False,
    }

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        if not isinstance(args, Mapping):
            return ToolResult.error("arguments must be an object")
        unknown = sorted(set(args) - {"a"})
        if unknown:
            return ToolResult.error(f"unknown arguments: {', '.join(map(str, unknown))}")
        if "a" not in args:
            return ToolResult.error("'a' is required")
        value = _lax_int(args["a"])
        if value is None:
            return ToolResult.error(f"'a' must be an integer, got {args['a']!r}")
        return ToolResult.ok(str(value * 2))


CORPUS = [
    Entry(
        CoercesIntegers(),
        frozenset({"TN604"}),
        "coerces true and '1' into an integer (pydantic's lax mode) and reports success",
    ),
]
