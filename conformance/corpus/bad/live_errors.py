"""Known-bad error handling (TN60x): exceptions escape execute, invalid arguments are accepted.

Duck-typed on purpose: ``BaseTool.execute`` catches exceptions and validates arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolResult
from toolnexus_ref._validation import argument_errors, validator_for

_NUMBER = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
    "additionalProperties": False,
}


class _Duck:
    name = "duck"
    description = "A tool of the live corpus."
    source = "custom"
    input_schema: Mapping[str, Any] = _NUMBER

    def refuse(self, args: Any) -> ToolResult | None:
        errors = argument_errors(validator_for(self.input_schema), args)
        return ToolResult.error("; ".join(errors)) if errors else None


class RaisesWhenLarge(_Duck):
    name = "raises_when_large"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if args["n"] > 1000:
            raise ValueError(f"{args['n']} is too large")
        return ToolResult.ok(str(args["n"]))


class RaisesForOneUnit(_Duck):
    name = "raises_for_kelvin"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"unit": {"enum": ["celsius", "fahrenheit", "kelvin"]}},
        "required": ["unit"],
        "additionalProperties": False,
    }

    async def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        return ToolResult.ok({"celsius": "20C", "fahrenheit": "68F"}[args["unit"]])


class TrustsItsArguments(_Duck):
    name = "trusts_its_arguments"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        return ToolResult.ok(str(args["n"] * 2))  # KeyError/TypeError for bad arguments


class NeedsContext(_Duck):
    name = "needs_context"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if ctx.is_cancelled():  # AttributeError when ctx is None
            return ToolResult.error("Cancelled")
        return ToolResult.ok("done")


class AcceptsAnything(_Duck):
    name = "accepts_anything"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if ctx is not None and ctx.is_cancelled():
            return ToolResult.error("Cancelled")
        return ToolResult.ok("done")


class AlwaysFails(_Duck):
    """Validates its arguments, then fails every call: a missing key, say."""

    name = "always_fails"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        return ToolResult.error("MISSING_API_KEY is not set")


CORPUS = [
    Entry(RaisesWhenLarge(), frozenset({"TN601", "TN603"}), "raises ValueError only when n > 1000"),
    Entry(RaisesForOneUnit(), frozenset({"TN601"}), "async; KeyError only for unit='kelvin'"),
    Entry(
        TrustsItsArguments(), frozenset({"TN602"}), "indexes its arguments without checking them"
    ),
    Entry(NeedsContext(), frozenset({"TN603"}), "calls ctx.is_cancelled() without a None check"),
    Entry(AcceptsAnything(), frozenset({"TN604"}), "reports success for any arguments at all"),
    Entry(AlwaysFails(), frozenset({"TN605"}), "answers every valid call with an error"),
]
