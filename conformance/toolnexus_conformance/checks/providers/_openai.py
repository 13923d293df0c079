"""OpenAI plain function calling (TN40x): the rules a request hits without ``strict``."""

from __future__ import annotations

from collections.abc import Iterator

from toolnexus_conformance._model import Category, Finding, Scope, Severity
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import MISSING, TargetSubject, ToolSubject
from toolnexus_conformance.checks._walk import join_path, schema_nodes, usable_schema

from ._common import OPENAI_ANTHROPIC_NAME, OPENAI_PROFILES, is_array_schema, name_findings

__all__ = [
    "MAX_OPENAI_TOOLS",
    "openai_array_items",
    "openai_name",
    "openai_parameters_object",
    "openai_tool_count",
]

#: Chat Completions refuses a request that offers more tools than this.
MAX_OPENAI_TOOLS = 128
_FUNCTION_DEFINITION = (
    "openai-python src/openai/types/shared_params/function_definition.py (FunctionDefinition)"
)


@check(
    "TN401",
    "openai-name",
    title="OpenAI accepts the name",
    category=Category.PROVIDER,
    providers=OPENAI_PROFILES,
    severity=Severity.WARNING,
    why="OpenAI answers a request whose function name breaks ^[a-zA-Z0-9_-]{1,64}$ with a "
    "400 for the whole request, not just this tool.",
    fix="Rename the tool to at most 64 characters of a-z, A-Z, 0-9, `_` and `-` "
    "(`toolnexus_ref.sanitize` replaces the rest).",
    reference=_FUNCTION_DEFINITION + ", name: 'Must be a-z, A-Z, 0-9, or contain underscores "
    "and dashes, with a maximum length of 64.'",
)
def openai_name(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    yield from name_findings(
        subject, OPENAI_ANTHROPIC_NAME, "OpenAI", "1-64 characters of a-z, A-Z, 0-9, _ and -"
    )


@check(
    "TN402",
    "openai-parameters-object",
    title="OpenAI accepts the parameters (an object schema)",
    category=Category.PROVIDER,
    providers=OPENAI_PROFILES,
    severity=Severity.WARNING,
    why="OpenAI's `parameters` is a JSON Schema object describing named arguments; a schema "
    "whose top level is not `type: object` is refused with a 400 "
    "(`invalid_function_parameters`).",
    fix='Make the top level `{"type": "object", "properties": {...}}`, or leave `parameters` '
    "out for a tool without arguments.",
    reference=_FUNCTION_DEFINITION + ", parameters ('described as a JSON Schema object'; may be "
    "omitted); https://developers.openai.com/api/docs/guides/function-calling",
)
def openai_parameters_object(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    if subject.input_schema is MISSING:
        return  # OpenAI accepts a function without parameters; TN301 reports the contract
    schema = usable_schema(subject)
    if schema.get("type") != "object":
        yield Finding(
            f"OpenAI needs parameters of type object; the top level has type {schema.get('type')!r}",
            path="input_schema.type",
        )


@check(
    "TN403",
    "openai-tool-count",
    title=f"The target offers at most {MAX_OPENAI_TOOLS} tools",
    category=Category.PROVIDER,
    providers=OPENAI_PROFILES,
    severity=Severity.WARNING,
    why=f"OpenAI Chat Completions refuses a request with more than {MAX_OPENAI_TOOLS} tools, so "
    "a host that offers every tool of this target in one request fails on every turn; models "
    "also choose worse among very many tools.",
    fix="Offer a subset per request (filter by task, or use tool search / deferred loading), or "
    "split the target into smaller toolkits.",
    reference="openai-python src/openai/types/evals/create_eval_completions_run_data_source_param.py "
    "(tools: 'A max of 128 functions are supported.'); types/beta/assistant_create_params.py "
    "('a maximum of 128 tools')",
    scope=Scope.TARGET,
)
def openai_tool_count(subject: TargetSubject, options: RunOptions) -> Iterator[Finding]:
    count = len(subject.tools)
    if count > MAX_OPENAI_TOOLS:
        yield Finding(
            f"target {subject.target!r} has {count} tools; OpenAI accepts at most "
            f"{MAX_OPENAI_TOOLS} in one request"
        )


@check(
    "TN404",
    "openai-array-items",
    title="Every array schema declares `items` (OpenAI)",
    category=Category.PROVIDER,
    providers=OPENAI_PROFILES,
    severity=Severity.WARNING,
    why='OpenAI refuses `{"type": "array"}` without `items`, even without strict mode: '
    "\"Invalid schema for function ...: In context=('properties', ...), array schema missing "
    'items." (400, invalid_function_parameters) - a common failure of MCP servers.',
    fix='Say what the array holds, e.g. `"items": {"type": "string"}`.',
    reference="OpenAI API error 'array schema missing items' (invalid_function_parameters), "
    "quoted in https://github.com/mark3labs/mcphost/issues/35 and "
    "https://github.com/sigoden/aichat/pull/1049",
)
def openai_array_items(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for node in schema_nodes(schema):
        if is_array_schema(node.schema) and "items" not in node.schema:
            yield Finding(
                f"{node.path} is an array schema without an `items` schema; OpenAI answers "
                "'array schema missing items'",
                path=join_path(node.path, "items"),
            )
