"""Gemini function declarations (TN43x): the name rule and the OpenAPI 3.0 ``parameters`` subset.

Gemini's ``parameters`` is a protobuf ``Schema``: a keyword outside its fields is an
"Unknown name ... Cannot find field" 400. The newer ``parametersJsonSchema`` field
takes real JSON Schema, except ``$schema``; the message says when that would work.
An MCP server built on the TypeScript SDK writes ``$schema`` into every tool's
schema: that is said once per server, on its first tool, with the count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from toolnexus_conformance._model import Category, Finding, Severity, Skip
from toolnexus_conformance._options import Provider, RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import ToolSubject
from toolnexus_conformance.checks._walk import join_path, schema_nodes, usable_schema
from toolnexus_ref._naming import sanitize

from ._common import GEMINI_PROFILES, name_findings

__all__ = ["GEMINI_KEYWORDS", "GEMINI_NAME", "gemini_name", "gemini_parameters"]

_SCHEMA_DOCS = "https://ai.google.dev/api/caching#Schema"
_DECLARATION_DOCS = "https://ai.google.dev/api/caching#FunctionDeclaration"

#: Letters, digits, ``_ . : -``, at most 64; Vertex AI also wants a letter or ``_`` first.
GEMINI_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}")

#: The fields of Gemini's ``Schema`` (the OpenAPI 3.0 subset ``parameters`` accepts).
GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "default",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "properties",
        "propertyOrdering",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "minimum",
        "maximum",
    }
)
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
_ADVICE = {
    "$schema": "remove it (Gemini accepts no $schema at all)",
    "additionalProperties": "remove it; Gemini objects cannot restrict or type extra keys",
    "$ref": "inline the referenced schema",
    "$defs": "inline the definitions where they are used",
    "definitions": "inline the definitions where they are used",
    "oneOf": "use anyOf",
    "const": 'use a one-value enum: "enum": [value]',
    "examples": 'use "example" (one value)',
    "exclusiveMinimum": "use minimum",
    "exclusiveMaximum": "use maximum",
}


@check(
    "TN430",
    "gemini-name",
    title="Gemini accepts the name",
    category=Category.PROVIDER,
    providers=GEMINI_PROFILES,
    severity=Severity.WARNING,
    why="Gemini refuses a function declaration whose name is not letters, digits, `_`, `.`, "
    "`:` or `-`, at most 64 characters; Vertex AI also requires a letter or `_` first.",
    fix="Rename the tool to start with a letter or `_` and use at most 64 characters of "
    "a-z, A-Z, 0-9, `_ . : -`.",
    reference=_DECLARATION_DOCS + " (name); Vertex AI REST v1beta1 FunctionDeclaration.name "
    "('Must start with a letter or an underscore')",
)
def gemini_name(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    yield from name_findings(
        subject,
        GEMINI_NAME,
        "Gemini",
        "a letter or _ followed by letters, digits, _ . : or -, at most 64 characters",
    )


def _problems(schema: dict[str, Any]) -> Iterator[Finding]:
    if schema.get("type") != "object":
        yield Finding(
            f"Gemini parameters need type object at the top level; found {schema.get('type')!r}",
            path="input_schema.type",
        )
    for node in schema_nodes(schema):
        for keyword in node.schema:
            if keyword in GEMINI_KEYWORDS:
                continue
            where = join_path(node.path, keyword)
            advice = _ADVICE.get(keyword, "remove it or express it in the description")
            yield Finding(
                f"{where}: {keyword!r} is not a field of Gemini's Schema; {advice}", path=where
            )
        kind = node.schema.get("type")
        if isinstance(kind, list):
            where = join_path(node.path, "type")
            yield Finding(
                f"{where} is a list {kind!r}; Gemini takes one type (use nullable: true for a "
                "null union, anyOf for others)",
                path=where,
            )
        elif isinstance(kind, str) and kind.lower() not in _TYPES:
            where = join_path(node.path, "type")
            yield Finding(f"{where}: Gemini has no type {kind[:40]!r}", path=where)


@check(
    "TN431",
    "gemini-parameters",
    title="Gemini accepts the schema as `parameters` (its OpenAPI 3.0 subset)",
    category=Category.PROVIDER,
    providers=(Provider.GEMINI,),
    opt_in=True,
    severity=Severity.WARNING,
    why="Gemini's `parameters` accepts only its OpenAPI 3.0 subset (type, format, title, "
    "description, nullable, default, items, min/maxItems, enum, properties, propertyOrdering, "
    "required, min/maxProperties, min/maxLength, pattern, example, anyOf, minimum, maximum); "
    "`$schema`, `additionalProperties`, `$ref`/`$defs` and type arrays are the usual 400s.",
    fix="Rewrite the schema inside the subset (the message names each keyword and what to use "
    "instead), or send it as `parametersJsonSchema`, which takes JSON Schema without `$schema`.",
    reference=_SCHEMA_DOCS
    + " (Schema fields); "
    + _DECLARATION_DOCS
    + " (parameters, parametersJsonSchema)",
)
def gemini_parameters(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    findings = list(_problems(schema))
    if not findings:
        return
    has_schema_keyword = any("$schema" in node.schema for node in schema_nodes(schema))
    if schema.get("type") != "object":
        note = "; parametersJsonSchema would refuse it too (it must describe an object)"
    elif has_schema_keyword:
        note = (
            "; even parametersJsonSchema refuses $schema: remove it, then the schema can be "
            "sent as parametersJsonSchema"
        )
    else:
        note = "; it would be accepted as-is as parametersJsonSchema (real JSON Schema)"
    first = findings[0]
    findings[0] = Finding(first.message + note, path=first.path)
    yield from findings


@check(
    "TN432",
    "gemini-json-schema",
    title="Gemini accepts the schema as `parametersJsonSchema`",
    category=Category.PROVIDER,
    providers=(Provider.GEMINI_JSON_SCHEMA,),
    severity=Severity.WARNING,
    why="`parametersJsonSchema` takes real JSON Schema, so it is how a schema outside Gemini's "
    "OpenAPI subset reaches the model; it still refuses `$schema` (common in schemas exported "
    "by pydantic or zod) and needs an object at the top.",
    fix="Remove every `$schema` keyword from the declaration (the dialect is implied), and make "
    "the top level `type: object`.",
    reference=_DECLARATION_DOCS + " (parametersJsonSchema)",
)
def gemini_json_schema(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    if schema.get("type") != "object":
        yield Finding(
            "parametersJsonSchema must describe an object; the top level is not type: object",
            path="input_schema.type",
        )
    paths = [f"{node.path}.$schema" for node in schema_nodes(schema) if "$schema" in node.schema]
    if not paths:
        return
    siblings = _server_siblings(subject)
    if siblings is None or subject.extra.get("original_name") not in siblings[2]:
        for path in paths:
            yield Finding("'$schema' is refused by Gemini even in parametersJsonSchema", path=path)
        return
    server, names, declaring = siblings
    own = subject.extra.get("original_name")
    if declaring and declaring[0] != own:
        raise Skip(
            f"'$schema' is in this tool's schema too; reported once for the server on"
            f" {sanitize(server)}_{sanitize(declaring[0])} (TN432)"
        )
    if len(declaring) == 1:
        yield Finding("'$schema' is refused by Gemini even in parametersJsonSchema", path=paths[0])
        return
    yield Finding(
        f"'$schema' is refused by Gemini even in parametersJsonSchema; {len(declaring)} of"
        f" {len(names)} tools of the server {server!r} declare it (the MCP TypeScript SDK"
        " writes it into every schema it converts): said here once for all of them",
        path=paths[0],
    )


def _server_siblings(subject: ToolSubject) -> tuple[str, list[str], list[str]] | None:
    """An MCP tool's server name, its tools' names, and those whose schema has ``$schema``."""
    connection = subject.extra.get("connection")
    server = subject.extra.get("server_name")
    tools = getattr(connection, "tools", None)
    if subject.source != "mcp" or not isinstance(server, str) or not isinstance(tools, list):
        return None
    names: list[str] = []
    declaring: list[str] = []
    for tool in tools:
        name = getattr(tool, "name", None)
        if not isinstance(name, str):
            continue
        names.append(name)
        try:
            text = json.dumps(getattr(tool, "input_schema", None), default=str)
        except (TypeError, ValueError, RecursionError):
            continue
        if '"$schema"' in text:
            declaring.append(name)
    return server, names, declaring
