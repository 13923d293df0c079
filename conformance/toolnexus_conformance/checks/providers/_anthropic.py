"""Anthropic Messages tools (TN42x): the name and ``input_schema`` rules of a custom tool."""

from __future__ import annotations

from collections.abc import Iterator

from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._options import Provider, RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import ToolSubject
from toolnexus_conformance.checks._walk import usable_schema

from ._common import OPENAI_ANTHROPIC_NAME, name_findings

__all__ = ["anthropic_input_schema", "anthropic_name", "anthropic_root_composition"]

_TOOL_USE = "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use"
_TOOL_PARAM = "anthropic-sdk-python src/anthropic/types/tool_param.py (ToolParam, InputSchemaTyped)"


@check(
    "TN420",
    "anthropic-name",
    title="Anthropic accepts the name",
    category=Category.PROVIDER,
    providers=(Provider.ANTHROPIC,),
    severity=Severity.WARNING,
    why="The Messages API refuses a tool whose name breaks ^[a-zA-Z0-9_-]{1,64}$ with a 400 "
    "for the whole request.",
    fix="Rename the tool to at most 64 characters of a-z, A-Z, 0-9, `_` and `-`.",
    reference=_TOOL_USE + " (tool name: ^[a-zA-Z0-9_-]{1,64}$); " + _TOOL_PARAM + ", name",
)
def anthropic_name(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    yield from name_findings(
        subject, OPENAI_ANTHROPIC_NAME, "Anthropic", "1-64 characters of a-z, A-Z, 0-9, _ and -"
    )


@check(
    "TN421",
    "anthropic-input-schema",
    title="Anthropic accepts the input_schema (an object schema)",
    category=Category.PROVIDER,
    providers=(Provider.ANTHROPIC,),
    severity=Severity.WARNING,
    why="`input_schema` is required by the Messages API and its top level must be "
    '`"type": "object"` (the SDK types it as `Literal["object"]`); anything else is a 400.',
    fix='Declare `input_schema` with `"type": "object"` at the top level, even for a tool '
    'without arguments (`{"type": "object", "properties": {}}`).',
    reference=_TOOL_PARAM + ": input_schema Required, type Required[Literal['object']]",
)
def anthropic_input_schema(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    if schema.get("type") != "object":
        yield Finding(
            f"Anthropic needs input_schema.type 'object'; found {schema.get('type')!r}",
            path="input_schema.type",
        )


@check(
    "TN422",
    "anthropic-root-composition",
    title="Anthropic: no oneOf/allOf/anyOf at the top of input_schema",
    category=Category.PROVIDER,
    providers=(Provider.ANTHROPIC,),
    severity=Severity.WARNING,
    why="The Messages API answers 'input_schema does not support oneOf, allOf, or anyOf at the "
    "top level' (400) and the whole request fails: a single such tool (often a zod union in an "
    "MCP server) breaks every call that offers it.",
    fix="Flatten the union into one object whose properties are all optional and check the "
    "combination inside the tool (returning an error result), or move the union into a property.",
    reference="Anthropic API error 'input_schema does not support oneOf, allOf, or anyOf at the "
    "top level', quoted in https://github.com/anthropics/claude-code/issues/5973 (not in the tool-use docs)",
)
def anthropic_root_composition(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for keyword in ("oneOf", "allOf", "anyOf"):
        if keyword in schema:
            yield Finding(
                f"input_schema.{keyword} at the top level: Anthropic refuses it",
                path=f"input_schema.{keyword}",
            )
