"""Validating a schema against its dialect's metaschema, with a fast path for common schemas.

jsonschema's metaschema validation costs milliseconds per tool schema (the 2020-12
metaschema is a web of ``$dynamicRef``s), which made it most of the static suites'
run time. Almost every tool schema uses a handful of keywords, so ``plainly_valid``
decides those cases directly and returns ``True`` only when the schema is certainly
valid Draft 2020-12; anything it is unsure of goes to jsonschema, which also
produces the error message. Never a false "valid": the fast path only widens
nothing, it skips work.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = ["dialect_error", "plainly_valid"]

_DRAFT_2020_12 = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
    }
)
_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
#: Every keyword of the 2020-12 vocabularies (and the legacy ones its metaschema still
#: describes). A keyword outside this set is an annotation the metaschema ignores.
_VOCABULARY = frozenset(
    {
        "$id",
        "$schema",
        "$ref",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "prefixItems",
        "items",
        "contains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "type",
        "const",
        "enum",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "definitions",
        "dependencies",
        "$recursiveAnchor",
        "$recursiveRef",
    }
)
_SIMPLE_REF = re.compile(r"#(/[A-Za-z0-9_.~$-]*)*")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _schema(value: Any) -> bool:
    return isinstance(value, dict | bool)


def _schema_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(_schema(v) for v in value)


def _schema_map(value: Any) -> bool:
    return isinstance(value, dict) and all(_schema(v) for v in value.values())


def _regex(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        re.compile(value)
    except re.error:
        return False
    return True


def _type(value: Any) -> bool:
    if isinstance(value, str):
        return value in _TYPES
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, str) and v in _TYPES for v in value)
        and len(set(value)) == len(value)
    )


def _required(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(v, str) for v in value)
        and len(set(value)) == len(value)
    )


_RULES: dict[str, Callable[[Any], bool]] = {
    "type": _type,
    "properties": _schema_map,
    "$defs": _schema_map,
    "definitions": _schema_map,
    "required": _required,
    "items": _schema,
    "additionalProperties": _schema,
    "not": _schema,
    "anyOf": _schema_list,
    "oneOf": _schema_list,
    "allOf": _schema_list,
    "enum": lambda v: isinstance(v, list),
    "const": lambda v: True,
    "default": lambda v: True,
    "examples": lambda v: isinstance(v, list),
    "title": lambda v: isinstance(v, str),
    "description": lambda v: isinstance(v, str),
    "$comment": lambda v: isinstance(v, str),
    "format": lambda v: isinstance(v, str),
    "pattern": _regex,
    "minimum": _number,
    "maximum": _number,
    "exclusiveMinimum": _number,
    "exclusiveMaximum": _number,
    "multipleOf": lambda v: _number(v) and v > 0,
    "minLength": _count,
    "maxLength": _count,
    "minItems": _count,
    "maxItems": _count,
    "minProperties": _count,
    "maxProperties": _count,
    "uniqueItems": lambda v: isinstance(v, bool),
    "deprecated": lambda v: isinstance(v, bool),
    "readOnly": lambda v: isinstance(v, bool),
    "writeOnly": lambda v: isinstance(v, bool),
    "$ref": lambda v: isinstance(v, str) and _SIMPLE_REF.fullmatch(v) is not None,
}


def plainly_valid(nodes: Any) -> bool:
    """True only when every node uses keywords the fast path knows, with valid values.

    ``nodes`` are the schema's ``SchemaNode``s (every dict subschema). A keyword of the
    2020-12 vocabulary the fast path does not know sends the schema to jsonschema.
    """
    for node in nodes:
        schema = node.schema
        if node.depth == 0:
            declared = schema.get("$schema")
            if declared is not None and declared not in _DRAFT_2020_12:
                return False
        elif "$schema" in schema:
            return False
        for keyword, value in schema.items():
            rule = _RULES.get(keyword)
            if rule is None:
                if keyword in _VOCABULARY and not (keyword == "$schema" and node.depth == 0):
                    return False
                continue
            if not rule(value):
                return False
    return True


@cache
def _meta_validator(cls: Any) -> Validator:
    """One metaschema validator per dialect: building one per tool is wasted work."""
    from jsonschema import validators

    meta_cls = validators.validator_for(cls.META_SCHEMA, default=cls)
    return meta_cls(cls.META_SCHEMA, format_checker=meta_cls.FORMAT_CHECKER)


def dialect_error(cls: Any, schema: dict[str, Any]) -> ValidationError | None:
    """The most relevant metaschema error of ``schema`` for dialect ``cls``, or ``None``."""
    from jsonschema.exceptions import best_match

    return best_match(_meta_validator(cls).iter_errors(schema))
