"""Each property's lax wrong value is called once on the invalid stream, whatever the draw.

A tool that coerces one integer property (``int(args["n"])`` takes ``true``) reports
success for arguments its schema refuses (TN604); among a schema's dozens of
mutations a short search drew that property's ``true`` in some runs only.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions, ToolArguments
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live._given import USER_GIVEN, explicit_args

from toolnexus_ref import ToolResult
from toolnexus_ref._validation import argument_errors, validator_for

#: Shaped like MCP's sequential-thinking tool: nine properties, four of them integers.
THINKING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "thought": {"type": "string"},
        "nextThoughtNeeded": {"type": "boolean"},
        "thoughtNumber": {"type": "integer", "minimum": 1},
        "totalThoughts": {"type": "integer", "minimum": 1},
        "isRevision": {"type": "boolean"},
        "revisesThought": {"type": "integer", "minimum": 1},
        "branchFromThought": {"type": "integer", "minimum": 1},
        "branchId": {"type": "string"},
        "needsMoreThoughts": {"type": "boolean"},
    },
    "required": ["thought", "nextThoughtNeeded", "thoughtNumber", "totalThoughts"],
    "additionalProperties": False,
}
SIMPLEST = {"thought": "", "nextThoughtNeeded": False, "thoughtNumber": 1, "totalThoughts": 1}
#: A short search: the tool takes 30 ms a call, so half a second's budget buys about
#: fifteen generated invalid calls, too few to draw one property's ``true`` reliably
#: among some forty mutations (one run in ten found it before the lax values).
OPTIONS = RunOptions(
    execute=ExecuteMode.ALL,
    examples=5,
    search_budget=0.5,
    call_timeout=2.0,
    grace=0.3,
    example_database=False,
)


class Thinking:
    """Checks its arguments against its schema, but reads ``totalThoughts`` with ``int``
    first: ``true`` becomes 1 and passes."""

    name = "sequential_thinking"
    description = "Records one step of a chain of thought."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = THINKING

    def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(0.03)
        if isinstance(args, Mapping) and "totalThoughts" in args:
            try:
                args = {**args, "totalThoughts": int(args["totalThoughts"])}
            except (TypeError, ValueError):
                pass
        errors = argument_errors(validator_for(THINKING), args)
        if errors:
            return ToolResult.error("; ".join(errors))
        return ToolResult.ok("recorded")


def test_a_tool_that_coerces_one_integer_fails_tn604_every_run() -> None:
    verdict = next(iter(check_tools(Thinking(), select=["TN604"], options=OPTIONS)))
    assert verdict.outcome is Outcome.FAILED, verdict.message
    # ``true`` or, if the search drew it, 1.5 (``int`` takes both).
    assert "type of 'totalThoughts' changed to" in verdict.message


def _mutations(schema: Any, simplest: Any, given: ToolArguments | None = None) -> list[str]:
    found = explicit_args(schema, simplest, given or ToolArguments(), invalid=True)
    return [str(one.mutation) for one in found]


def test_each_property_gets_its_first_counted_lax_value_in_the_schemas_order() -> None:
    lax = "(lax validators coerce it)"
    assert _mutations(THINKING, SIMPLEST) == [
        f"type of 'thought' changed to number 1 {lax}",
        # "true" for true is the same value spelled (TN604 forgives it): 1 is the first
        # lax value that a tool accepting it hides a mistake with.
        f"type of 'nextThoughtNeeded' changed to number 1 {lax}",
        f"type of 'thoughtNumber' changed to boolean true {lax}",
        f"type of 'totalThoughts' changed to boolean true {lax}",
        f"type of 'isRevision' changed to number 1 {lax}",
        f"type of 'revisesThought' changed to boolean true {lax}",
        f"type of 'branchFromThought' changed to boolean true {lax}",
        f"type of 'branchId' changed to number 1 {lax}",
        f"type of 'needsMoreThoughts' changed to number 1 {lax}",
    ]


def test_the_lax_values_are_the_simplest_arguments_with_one_property_changed() -> None:
    found = explicit_args(THINKING, SIMPLEST, ToolArguments(), invalid=True)
    total = next(one for one in found if "'totalThoughts'" in one.mutation)
    assert total.value == {**SIMPLEST, "totalThoughts": True}


def test_an_enum_gets_its_first_near_miss_that_is_not_the_value_spelled() -> None:
    schema = {
        "type": "object",
        "properties": {"unit": {"enum": ["celsius", "kelvin"]}, "level": {"enum": [1, 2]}},
    }
    # 'level' has only "1" for 1, the value spelled: nothing for it.
    assert _mutations(schema, {}) == [
        "enum of 'unit' near-missed: 'CELSIUS', 'celsius' in another case"
    ]


def test_only_values_the_schema_refuses_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolnexus_conformance.arguments import _api

    strict = _api.valid_args_checker(THINKING)

    def admits_true_for_total(schema: Any) -> Any:
        """A checker under which ``totalThoughts: true`` is valid: no mutation then."""
        return lambda value: value.get("totalThoughts") is True or strict(value)

    monkeypatch.setattr(_api, "valid_args_checker", admits_true_for_total)
    found = _mutations(THINKING, SIMPLEST)
    assert len(found) == 8
    assert not any("'totalThoughts'" in text for text in found)


def test_the_lax_values_stop_at_the_cap() -> None:
    from toolnexus_conformance.arguments._invalid import LAX_PROPERTIES

    names = [f"p{index:02}" for index in range(LAX_PROPERTIES + 4)]
    schema = {"type": "object", "properties": {name: {"type": "integer"} for name in names}}
    found = _mutations(schema, {})
    assert len(found) == LAX_PROPERTIES
    assert [text.split("'")[1] for text in found] == names[:LAX_PROPERTIES]


def test_the_users_refused_examples_come_first() -> None:
    given = ToolArguments(examples=({**SIMPLEST, "thoughtNumber": 0},))
    found = explicit_args(THINKING, SIMPLEST, given, invalid=True)
    assert found[0].mutation == USER_GIVEN
    assert len(found) == 1 + 9


def test_arguments_that_are_not_an_object_get_no_lax_values() -> None:
    assert _mutations(THINKING, None) == []
    assert _mutations({"type": "object", "properties": {"n": {"type": "integer"}}}, []) == []
