"""Which draft a schema speaks, how its references resolve, and how to check a value locally.

Generation and validation must agree on every detail (the dialect, ``$id`` base URIs,
format checking), so both go through the one validator ``toolnexus_ref`` uses.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import referencing
import referencing.jsonschema
from referencing._core import Resolver

from toolnexus_ref._validation import validator_for

from ._types import UnsupportedSchema

__all__ = ["Dialect", "Schema", "base_uri", "dialect_of", "is_plain_json", "json_key"]

#: A JSON Schema: a mapping or a boolean.
Schema = Any

_LEGACY = {"draft3", "draft4", "draft6", "draft7"}


@dataclass(frozen=True)
class Dialect:
    """Facts about a schema's draft that change what a keyword means."""

    name: str  # "draft4" ... "draft2020-12"
    validator: Any  # a jsonschema validator for the whole schema
    spec: referencing.Specification[Any]

    @property
    def draft4(self) -> bool:
        """Draft 4 spells exclusive bounds as booleans beside ``minimum``/``maximum``."""
        return self.name == "draft4"

    @property
    def legacy_ref(self) -> bool:
        """Up to draft 7, keywords beside ``$ref`` are ignored."""
        return self.name in _LEGACY

    @property
    def prefix_items(self) -> bool:
        """Only 2020-12 has ``prefixItems``; earlier drafts give tuples as an ``items`` array."""
        return self.name == "draft2020-12"

    def root_resolver(self, root: Schema) -> Resolver[Any]:
        # An empty registry: only references inside the document resolve (remote ones are
        # refused up front, so nothing is ever fetched).
        registry: referencing.Registry[Any] = referencing.Registry()
        return registry.resolver_with_root(self.spec.create_resource(root))

    def enter(self, node: Schema, resolver: Resolver[Any]) -> Resolver[Any]:
        """The resolver inside ``node`` (a new base URI when it carries an ``$id``)."""
        if not isinstance(node, Mapping):
            return resolver
        return resolver.in_subresource(self.spec.create_resource(node))

    def checker(self, node: Schema, resolver: Resolver[Any]) -> Callable[[object], bool]:
        """``is_valid`` for a sub-schema, its references resolved where it sits."""
        if node is True:
            return _always
        if node is False:
            return _never
        validator = self.validator.evolve(schema=node, _resolver=resolver)
        return validator.is_valid  # type: ignore[no-any-return]


def _always(_: object) -> bool:
    return True


def _never(_: object) -> bool:
    return False


def dialect_of(schema: Schema) -> Dialect:
    validator = validator_for(schema if isinstance(schema, Mapping) else {})
    cls = type(validator)
    name = {
        "Draft3Validator": "draft3",
        "Draft4Validator": "draft4",
        "Draft6Validator": "draft6",
        "Draft7Validator": "draft7",
        "Draft201909Validator": "draft2019-09",
    }.get(cls.__name__, "draft2020-12")
    if name == "draft3":
        raise UnsupportedSchema("$schema", "", "draft 3 is not supported")
    dialect_id = cls.ID_OF(cls.META_SCHEMA)
    spec = referencing.jsonschema.specification_with(
        dialect_id, default=referencing.jsonschema.DRAFT202012
    )
    if isinstance(schema, bool):
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return Dialect(name=name, validator=validator, spec=spec)


def base_uri(resolver: Resolver[Any]) -> str:
    """The base URI a resolver resolves against (referencing keeps it private)."""
    return str(getattr(resolver, "_base_uri", ""))


def json_key(value: object) -> object:
    """A hashable key under which JSON-equal values collide (1 == 1.0, but True != 1)."""
    if isinstance(value, bool) or value is None:
        return ("c", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list | tuple):
        return ("a", tuple(json_key(v) for v in value))
    if isinstance(value, Mapping):
        return ("o", frozenset((k, json_key(v)) for k, v in value.items()))
    return ("?", repr(value))


def is_plain_json(value: object) -> bool:
    """Encodable as JSON text (no NaN, no surrogates) and read back equal."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError):
        return False
    return json_key(json.loads(text)) == json_key(value)
