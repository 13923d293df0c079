"""Schema checks (TN30x): the input schema is plain, bounded, valid JSON Schema for an object.

Every check reads the schema through ``usable_schema``, which scans it once
(iteratively, bounded) and fails with a pointer to TN301/TN302 when it is not
plain JSON data or is pathological, so no check here can recurse without bound.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import MISSING, AttributeProblem, ToolSubject

from ._dialect import dialect_error, plainly_valid
from ._walk import (
    MAX_DEPTH,
    MAX_NODES,
    describe_value,
    join_path,
    scan_json,
    schema_nodes,
    usable_schema,
)

__all__ = [
    "resolve_ref",
    "schema_bounded",
    "schema_dialect_valid",
    "schema_json_data",
    "schema_properties_object",
    "schema_refs_resolvable",
    "schema_required_known",
    "schema_root_object",
]

_MCP_SCHEMA = (
    "MCP specification 2025-11-25, Tool.inputSchema (JSON Schema, Draft 2020-12 by default)"
)
#: Where ``required`` names may come from a sibling subschema, not this node's ``properties``.
_COMPOSING = (
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "then",
    "else",
    "not",
    "dependentSchemas",
)
_COMPOSED_VIA = frozenset(
    {"allOf", "anyOf", "oneOf", "if", "then", "else", "not", "dependentSchemas"}
)


@check(
    "TN301",
    "schema-json-data",
    title="The input schema is plain JSON data",
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="The schema is sent to the model as JSON: a tuple, a set, bytes, an object, a "
    "non-string key or a NaN either fails to serialise (the request is never sent) or is "
    "silently changed on the way, so the model sees a different schema than the one "
    "the tool validates against.",
    fix="Build `input_schema` from dicts with str keys, lists, str, int, finite float, bool and "
    "None only; convert tuples to lists and sets to sorted lists.",
    reference=_MCP_SCHEMA,
)
def schema_json_data(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    value = subject.input_schema
    if value is MISSING:
        yield Finding("the tool has no `input_schema` attribute", path="input_schema")
        return
    if isinstance(value, AttributeProblem):
        yield Finding(f"the input schema cannot be read: {value}", path="input_schema")
        return
    if not isinstance(value, dict):
        yield Finding(
            f"input_schema is {describe_value(value)}; it must be a JSON object (a dict)",
            path="input_schema",
        )
        return
    scan = scan_json(value, "input_schema")
    yield from scan.offenders
    if scan.too_big is not None and not scan.offenders:
        yield Finding(
            f"only part of the schema could be inspected: {scan.too_big.message} (see TN302)",
            path=scan.too_big.path,
        )


@check(
    "TN302",
    "schema-bounded",
    title=f"The input schema is at most {MAX_DEPTH} levels deep and {MAX_NODES:,} nodes",
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="A schema thousands of levels deep or millions of nodes large is no use to a model "
    "(it cannot fit in a prompt) and crashes every host that walks it recursively "
    "(RecursionError) or serialises it; it is usually a generator bug or a hostile server.",
    fix="Flatten the schema: name shared shapes once under `$defs` and `$ref` them; describe "
    'free-form data as `{"type": "object"}` instead of spelling out every level.',
)
def schema_bounded(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    value = subject.input_schema
    if not isinstance(value, dict):
        yield Finding(
            f"cannot check: input_schema is {describe_value(value)}, not a JSON object (see TN301)",
            path="input_schema",
        )
        return
    scan = scan_json(value, "input_schema")
    if scan.too_big is not None:
        yield scan.too_big


def _validators() -> Any:
    from jsonschema import validators

    return validators


@check(
    "TN303",
    "schema-dialect-valid",
    title="The input schema is valid for its declared dialect",
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="An invalid schema (a misspelt type, `required: true`, a broken regex) is rejected by "
    "strict providers and MCP clients, and where it is accepted, validators and models "
    "disagree on what it means. An unknown `$schema` means no validator knows the rules.",
    fix="Fix the keyword the message names; declare `$schema` only for a dialect validators "
    "know (Draft 4, 6, 7, 2019-09, 2020-12) or leave it out to get Draft 2020-12.",
    reference=_MCP_SCHEMA + "; jsonschema Validator.check_schema",
)
def schema_dialect_valid(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    from jsonschema import Draft202012Validator

    validators = _validators()
    declared = schema.get("$schema", MISSING)
    if declared is MISSING:
        cls: Any = Draft202012Validator
    elif not isinstance(declared, str):
        yield Finding(
            f"$schema is {describe_value(declared)}; it must be a dialect URI string",
            path="input_schema.$schema",
        )
        return
    else:
        cls = validators.validator_for(schema, default=None)
        if cls is None:
            yield Finding(
                f"$schema {declared[:120]!r} is not a JSON Schema dialect known to jsonschema;"
                " the schema cannot be validated (use https://json-schema.org/draft/2020-12/schema"
                " or leave $schema out)",
                path="input_schema.$schema",
            )
            return
    if cls is Draft202012Validator and plainly_valid(schema_nodes(schema)):
        return
    error = dialect_error(cls, schema)
    if error is not None:
        path = "input_schema"
        for part in error.absolute_path:
            path = join_path(path, part)
        dialect = getattr(cls, "__name__", "the dialect")
        yield Finding(f"{path}: {error.message[:300]} ({dialect})", path=path)


@check(
    "TN304",
    "schema-root-object",
    title='The input schema\'s top level is `"type": "object"`',
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="Tool arguments are a JSON object of named parameters: OpenAI, Anthropic, Gemini and "
    "MCP all require an object schema at the top level, and a model cannot fill a bare "
    "string or array schema as named arguments.",
    fix='Wrap the arguments: `{"type": "object", "properties": {"value": <your schema>}, '
    '"required": ["value"]}`.',
    reference=_MCP_SCHEMA + " (must be an object schema)",
)
def schema_root_object(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    kind = schema.get("type", MISSING)
    if kind != "object":
        got = "no type" if kind is MISSING else f"type {describe_value(kind)}"
        yield Finding(
            f'input_schema has {got} at the top level; it must be "object"',
            path="input_schema.type",
        )


@check(
    "TN305",
    "schema-properties-object",
    title="Every `properties` is an object of subschemas",
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="`properties` maps each argument name to its schema; a list or a string there (a "
    "common generator bug) means the model is shown no usable parameters at all.",
    fix='Write `"properties": {"name": {"type": "string"}, ...}`: a JSON object whose values '
    "are schemas.",
    reference=_MCP_SCHEMA,
)
def schema_properties_object(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for node in schema_nodes(schema):
        if "properties" not in node.schema:
            continue
        props = node.schema["properties"]
        here = join_path(node.path, "properties")
        if not isinstance(props, dict):
            yield Finding(f"{here} is {describe_value(props)}; it must be an object", path=here)
            continue
        for name, sub in props.items():
            if not isinstance(sub, dict | bool):
                where = join_path(here, name)
                yield Finding(
                    f"{where} is {describe_value(sub)}; each property must be a schema (an object)",
                    path=where,
                )


@check(
    "TN306",
    "schema-required-known",
    title="Every `required` name is declared in `properties`",
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="A required argument the schema never describes cannot be produced by the model "
    "(it does not know the name or the type), so every call fails validation; usually a "
    "renamed or deleted parameter.",
    fix="Add the name to the same object's `properties`, or remove it from `required`.",
    reference=_MCP_SCHEMA,
)
def schema_required_known(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    for node in schema_nodes(schema):
        required = node.schema.get("required")
        if not isinstance(required, list) or node.via in _COMPOSED_VIA:
            continue
        if any(key in node.schema for key in _COMPOSING):
            continue  # the names may be declared by a sibling or referenced subschema
        props = node.schema.get("properties")
        declared = props if isinstance(props, dict) else {}
        for index, name in enumerate(required):
            if isinstance(name, str) and name not in declared:
                where = join_path(join_path(node.path, "required"), index)
                yield Finding(
                    f"{where} names {name[:80]!r}, which is not in"
                    f" {join_path(node.path, 'properties')}",
                    path=where,
                )


def resolve_ref(root: dict[str, Any], ref: str, anchors: dict[str, Any]) -> tuple[bool, str]:
    """``(True, "")`` when ``ref`` resolves inside ``root``, else ``(False, why)``.

    ``anchors`` maps embedded ``$id`` values and ``#name`` anchors to their subschemas.
    """
    base, _, fragment = ref.partition("#")
    if base:
        target = anchors.get(base) or anchors.get(base.rstrip("/"))
        if target is None:
            return False, (
                f"$ref {ref[:120]!r} points outside this schema; providers and MCP clients do "
                "not fetch remote schemas, so the model sees an unresolved reference"
            )
    else:
        target = root
    if not fragment:
        return True, ""
    if not fragment.startswith("/"):
        if f"#{fragment}" in anchors:
            return True, ""
        return False, f"$ref {ref[:120]!r}: no $anchor named {fragment[:60]!r}"
    current: Any = target
    for raw in fragment[1:].split("/"):
        token = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict) and token in current:
            current = current[token]
        elif isinstance(current, list) and token.isdigit() and int(token) < len(current):
            current = current[int(token)]
        else:
            return False, f"$ref {ref[:120]!r}: nothing at {token[:60]!r}"
    if not isinstance(current, dict | bool):
        return False, f"$ref {ref[:120]!r} points at {describe_value(current)}, not a schema"
    return True, ""


@check(
    "TN307",
    "schema-refs-resolvable",
    title="Every `$ref` resolves inside the schema",
    category=Category.SCHEMA,
    severity=Severity.ERROR,
    why="A `$ref` that points nowhere makes validation raise for every call, and a remote "
    "`$ref` (an http URL or another file) is never fetched by providers or MCP clients: the "
    "model is shown a bare reference and has to guess the shape.",
    fix="Define shared shapes under `$defs` in the same schema and refer to them as "
    '`"#/$defs/Name"`; inline anything that lives in another file or URL.',
    reference=_MCP_SCHEMA + "; JSON Schema 2020-12 Core section 8.2.3 ($ref)",
)
def schema_refs_resolvable(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    schema = usable_schema(subject)
    nodes = list(schema_nodes(schema))
    anchors: dict[str, Any] = {}
    for node in nodes:
        for key in ("$id", "id"):
            ident = node.schema.get(key)
            if isinstance(ident, str) and ident and not ident.startswith("#"):
                anchors[ident.rstrip("#")] = node.schema
        anchor = node.schema.get("$anchor", node.schema.get("$dynamicAnchor"))
        if isinstance(anchor, str):
            anchors[f"#{anchor}"] = node.schema
    for node in nodes:
        if "$ref" not in node.schema:
            continue
        ref = node.schema["$ref"]
        where = join_path(node.path, "$ref")
        if not isinstance(ref, str):
            yield Finding(f"{where} is {describe_value(ref)}; it must be a string", path=where)
            continue
        ok, why = resolve_ref(schema, ref, anchors)
        if not ok:
            yield Finding(f"{where}: {why}", path=where)
