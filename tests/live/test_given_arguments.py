"""The user's arguments (RunOptions.arguments) and the schema's own examples are called first."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions, ToolArguments
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live._given import USER_GIVEN, explicit_args

from toolnexus_ref import ToolResult
from toolnexus_ref._validation import argument_errors, validator_for

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[a-z]+$"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 5, "default": 3},
    },
    "required": ["path"],
    "additionalProperties": False,
}


class Recorder:
    name = "recorder"
    description = "Records its calls."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = SCHEMA

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def execute(self, args: Any, ctx: Any = None) -> Any:
        self.calls.append(args)
        errors = argument_errors(validator_for(SCHEMA), args)
        if errors:
            return ToolResult.error("; ".join(errors))
        if not isinstance(args, Mapping) or args["path"] == "secretvalue":
            raise RuntimeError("the user's own value breaks it")
        return ToolResult.ok("ok")


OPTIONS = RunOptions(execute=ExecuteMode.ALL, seed=3, call_timeout=2.0, grace=0.3)


def test_user_examples_come_first_and_values_are_mixed_in() -> None:
    given = ToolArguments(
        examples=({"path": "home", "limit": 2}, {"path": "/etc", "limit": 9}),
        values={"path": ("secretvalue",)},
    )
    tool = Recorder()
    options = dataclasses.replace(OPTIONS, arguments={"recorder": given})
    verdicts = {
        v.check.code: v for v in check_tools(tool, select=["TN601", "TN602"], options=options)
    }
    assert {"path": "home", "limit": 2} in tool.calls[:3]
    assert {"path": "/etc", "limit": 9} in tool.calls  # refused by the schema, still called
    assert verdicts["TN601"].outcome is Outcome.FAILED
    assert "secretvalue" in verdicts["TN601"].message


def test_a_user_example_the_schema_refuses_is_not_a_valid_call() -> None:
    given = ToolArguments(examples=({"path": "/etc"}, {"path": "ok"}))
    valid = explicit_args(SCHEMA, {"path": "a"}, given, invalid=False)
    invalid = explicit_args(SCHEMA, {"path": "a"}, given, invalid=True)
    assert {"path": "ok"} in valid
    assert {"path": "/etc"} not in valid
    given_back = [(i.value, i.mutation) for i in invalid if i.mutation == USER_GIVEN]
    assert given_back == [({"path": "/etc"}, USER_GIVEN)]


def test_the_schema_default_is_among_the_explicit_arguments() -> None:
    valid = explicit_args(SCHEMA, {"path": "a"}, ToolArguments(), invalid=False)
    assert {"path": "a", "limit": 3} in valid
    assert {"path": "a", "limit": 5} in valid  # a bound
    assert all(1 <= a.get("limit", 1) <= 5 for a in valid)  # nothing outside the schema


def test_without_user_arguments_nothing_is_given() -> None:
    invalid = explicit_args(SCHEMA, {"path": "a"}, ToolArguments(), invalid=True)
    assert USER_GIVEN not in {i.mutation for i in invalid}  # only the lax values
    assert [i.value for i in invalid] == [{"path": 1}, {"path": "a", "limit": True}]
