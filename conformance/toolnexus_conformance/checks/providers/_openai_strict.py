"""OpenAI strict mode (TN41x): the Structured Outputs subset a ``strict: true`` function needs.

OpenAI pre-processes a strict schema on first use and refuses the request (400) when
it leaves the supported subset. The limits follow the current "Supported schemas"
section; older documents said 100 properties and 5 levels.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._options import Provider, RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import ToolSubject
from toolnexus_conformance.checks._walk import join_path, schema_nodes, usable_schema

from ._common import is_object_schema

__all__ = [
    "STRICT_FORMATS",
    "STRICT_UNSUPPORTED",
    "strict_additional_properties",
    "strict_keywords",
    "strict_limits",
    "strict_required",
    "strict_root",
]

_DOCS = "https://developers.openai.com/api/docs/guides/structured-outputs#supported-schemas"

#: Keywords the Structured Outputs guide lists as unsupported, plus ``oneOf``
#: (refused as "'oneOf' is not permitted", openai/openai-node issue cited in the catalog).
STRICT_UNSUPPORTED = (
    "allOf",
    "not",
    "dependentRequired",
    "dependentSchemas",
    "if",
    "then",
    "else",
    "oneOf",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "minLength",
    "maxLength",
    "prefixItems",
)
#: String formats the guide lists as supported.
STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_TYPED_BY = ("type", "anyOf", "$ref", "enum", "const")
MAX_PROPERTIES = 5000
MAX_LEVELS = 10
MAX_ENUM_VALUES = 1000
MAX_CHARS = 120_000
_BIG_ENUM = 250
_BIG_ENUM_CHARS = 15_000


@check(
    "TN410",
    "openai-strict-root",
    title="OpenAI strict mode: the root is a plain object schema",
    category=Category.PROVIDER,
    providers=(Provider.OPENAI_STRICT,),
    opt_in=True,
    severity=Severity.WARNING,
    why="Strict mode requires the root of the schema to be an object, and not an `anyOf`; "
    "otherwise the request is refused with a 400.",
    fix='Make the top level `{"type": "object", ...}` and move any union into a property.',
    reference=_DOCS + " ('Root objects must not be anyOf and must be an object')",
)
def strict_root(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    if schema.get("type") != "object":
        yield Finding(
            f"strict mode needs type object at the root; found {schema.get('type')!r}",
            path="input_schema.type",
        )
    if "anyOf" in schema:
        yield Finding("strict mode refuses anyOf at the root", path="input_schema.anyOf")


@check(
    "TN411",
    "openai-strict-required",
    title="OpenAI strict mode: every property is required",
    category=Category.PROVIDER,
    providers=(Provider.OPENAI_STRICT,),
    opt_in=True,
    severity=Severity.WARNING,
    why="Strict mode requires every key of `properties` to be listed in `required`, at every "
    "level; an optional argument is expressed as a required one whose type allows null.",
    fix='List the property in `required` and allow null for optional ones: `"type": ["string", '
    '"null"]` (or `anyOf` with `{"type": "null"}`); treat null as "not given" in the tool.',
    reference=_DOCS + " ('All fields must be required')",
)
def strict_required(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for node in schema_nodes(schema):
        props = node.schema.get("properties")
        if not isinstance(props, dict):
            continue
        required = node.schema.get("required")
        listed = set(required) if isinstance(required, list) else set()
        for name in props:
            if name not in listed:
                where = join_path(join_path(node.path, "properties"), name)
                yield Finding(
                    f"{where} is optional; strict mode needs it in {join_path(node.path, 'required')}"
                    " (make it nullable if it is optional)",
                    path=where,
                )


@check(
    "TN412",
    "openai-strict-additional-properties",
    title="OpenAI strict mode: `additionalProperties: false` on every object",
    category=Category.PROVIDER,
    providers=(Provider.OPENAI_STRICT,),
    opt_in=True,
    severity=Severity.WARNING,
    why="Strict mode refuses an object schema unless it says `additionalProperties: false`, "
    "including nested objects and objects under `$defs`.",
    fix='Add `"additionalProperties": false` to every object schema; free-form maps cannot be '
    "expressed in strict mode (use a list of key/value objects).",
    reference=_DOCS + " ('additionalProperties: false must always be set in objects')",
)
def strict_additional_properties(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for node in schema_nodes(schema):
        if is_object_schema(node.schema) and node.schema.get("additionalProperties") is not False:
            got = node.schema.get("additionalProperties", "<absent>")
            yield Finding(
                f"{node.path} is an object schema with additionalProperties {got!r}; strict mode"
                " needs false",
                path=join_path(node.path, "additionalProperties"),
            )


@check(
    "TN413",
    "openai-strict-keywords",
    title="OpenAI strict mode: only supported keywords and formats",
    category=Category.PROVIDER,
    providers=(Provider.OPENAI_STRICT,),
    opt_in=True,
    severity=Severity.WARNING,
    why="Strict mode supports a subset of JSON Schema: composition (`allOf`, `oneOf`, `not`, "
    "`if`/`then`/`else`, `dependent*`) and several type-specific keywords are refused, string "
    "`format` is limited to a fixed list, and every subschema needs a `type` (or `anyOf`, "
    "`$ref`, `enum`, `const`).",
    fix="Rewrite the schema with supported keywords: a union as `anyOf`, a constraint the "
    "model cannot express as a check inside the tool (which returns an error result); "
    "give every subschema a `type`.",
    reference=_DOCS + " ('Supported properties', 'Some type-specific keywords are not yet "
    "supported'); 'oneOf is not permitted' error quoted in https://github.com/ai-dynamo/dynamo/pull/15153",
)
def strict_keywords(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for node in schema_nodes(schema):
        for keyword in STRICT_UNSUPPORTED:
            if keyword in node.schema:
                where = join_path(node.path, keyword)
                yield Finding(f"{where}: strict mode does not support {keyword!r}", path=where)
        fmt = node.schema.get("format")
        if isinstance(fmt, str) and fmt not in STRICT_FORMATS:
            where = join_path(node.path, "format")
            yield Finding(
                f"{where}: strict mode does not support format {fmt[:40]!r} (supported: "
                f"{', '.join(sorted(STRICT_FORMATS))})",
                path=where,
            )
        if node.via not in STRICT_UNSUPPORTED and not any(k in node.schema for k in _TYPED_BY):
            yield Finding(
                f"{node.path} has no type; strict mode says 'schema must have a type key'",
                path=node.path,
            )


def _texts(values: Any) -> list[str]:
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


@check(
    "TN414",
    "openai-strict-limits",
    title="OpenAI strict mode: within the size limits",
    category=Category.PROVIDER,
    providers=(Provider.OPENAI_STRICT,),
    opt_in=True,
    severity=Severity.WARNING,
    why=f"Strict mode refuses schemas with more than {MAX_PROPERTIES:,} properties in total, "
    f"more than {MAX_LEVELS} levels of nesting, more than {MAX_ENUM_VALUES:,} enum values in "
    f"total, more than {MAX_CHARS:,} characters of property names, definition names, enum and "
    f"const values, or one enum of more than {_BIG_ENUM} strings totalling over "
    f"{_BIG_ENUM_CHARS:,} characters.",
    fix="Split the tool, flatten nested objects, or replace a huge enum by a free string that "
    "the tool validates (returning an error result that lists close matches).",
    reference=_DOCS + " ('Objects have limitations on nesting depth and size', 'Limitations on "
    "total string size', 'Limitations on enum size')",
)
def strict_limits(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    properties = enum_values = chars = 0
    deepest = None
    for node in schema_nodes(schema):
        if node.via in ("properties", "$defs", "definitions") and isinstance(node.key, str):
            chars += len(node.key)
        props = node.schema.get("properties")
        if isinstance(props, dict):
            properties += len(props)
        enum = node.schema.get("enum")
        if isinstance(enum, list):
            enum_values += len(enum)
            strings = _texts(enum)
            size = sum(map(len, strings))
            chars += size
            if len(strings) > _BIG_ENUM and size > _BIG_ENUM_CHARS:
                where = join_path(node.path, "enum")
                yield Finding(
                    f"{where} has {len(strings)} strings totalling {size:,} characters; over "
                    f"{_BIG_ENUM} values they may total at most {_BIG_ENUM_CHARS:,}",
                    path=where,
                )
        const = node.schema.get("const")
        if isinstance(const, str):
            chars += len(const)
        if node.level > MAX_LEVELS and deepest is None:
            deepest = node.path
    if properties > MAX_PROPERTIES:
        yield Finding(
            f"the schema has {properties:,} properties in total (limit {MAX_PROPERTIES:,})",
            path="input_schema",
        )
    if deepest is not None:
        yield Finding(
            f"{deepest} is nested more than {MAX_LEVELS} levels deep (the strict-mode limit)",
            path=deepest,
        )
    if enum_values > MAX_ENUM_VALUES:
        yield Finding(
            f"the schema has {enum_values:,} enum values in total (limit {MAX_ENUM_VALUES:,})",
            path="input_schema",
        )
    if chars > MAX_CHARS:
        yield Finding(
            f"names, enum and const values total {chars:,} characters (limit {MAX_CHARS:,})",
            path="input_schema",
        )
