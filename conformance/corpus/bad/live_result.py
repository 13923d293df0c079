"""Known-bad results (TN50x): what comes back from execute has the wrong shape.

Duck-typed on purpose: ``BaseTool.execute`` would repair the very faults shown here.
Several go wrong only for some inputs, so argument generation has to find them.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any, ClassVar

from toolnexus_conformance.corpus import Entry

from toolnexus_ref import ToolResult
from toolnexus_ref._validation import argument_errors, validator_for


class _Duck:
    name = "duck"
    description = "A tool of the live corpus."
    source = "custom"
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }

    def refuse(self, args: Any) -> ToolResult | None:
        errors = argument_errors(validator_for(self.input_schema), args)
        return ToolResult.error("; ".join(errors)) if errors else None


class BareStringForOneMode(_Duck):
    name = "bare_string_for_plain"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"mode": {"enum": ["json", "markdown", "plain"]}},
        "required": ["mode"],
        "additionalProperties": False,
    }

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if args["mode"] == "plain":
            return "hello"  # a bare string, only for this one enum value
        return ToolResult.ok("hello")


class OutputDictWhenLarge(_Duck):
    name = "output_dict_when_large"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        if args["n"] > 100:
            return SimpleNamespace(output={"n": args["n"]}, is_error=False, metadata=None)
        return ToolResult.ok(str(args["n"]))


class ErrorFlagText(_Duck):
    name = "error_flag_text"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        flag = "false" if args["n"] else False
        return SimpleNamespace(output="done", is_error=flag, metadata={})


class MetadataNotJson(_Duck):
    name = "metadata_not_json"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if (refused := self.refuse(args)) is not None:
            return refused
        meta = {"at": datetime.datetime(2020, 1, 1)} if args["n"] < 0 else {"n": args["n"]}
        return ToolResult.ok("done", meta)


class EchoesItsToken(_Duck):
    """Given a credential (as an mcp.json ``${ENV}`` would give a server), it echoes it."""

    name = "echoes_its_token"
    TOKEN = "corpus-token-5f2a9c"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        from toolnexus_ref import secrets

        secrets.register(self.TOKEN)  # what the kit does for every value it expands
        if (refused := self.refuse(args)) is not None:
            return refused
        return ToolResult.ok(f"authenticated with {self.TOKEN}")


CORPUS = [
    Entry(BareStringForOneMode(), frozenset({"TN501"}), "returns a bare str only for mode='plain'"),
    Entry(OutputDictWhenLarge(), frozenset({"TN502"}), "output is a dict only when n > 100"),
    Entry(ErrorFlagText(), frozenset({"TN503"}), "is_error is the string 'false' for any n but 0"),
    Entry(MetadataNotJson(), frozenset({"TN504"}), "metadata holds a datetime for negative n"),
    Entry(EchoesItsToken(), frozenset({"TN561"}), "returns the credential it was given"),
]
