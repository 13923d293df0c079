"""Schemas tools really use, and nasty ones, for the argument-generation tests."""

from __future__ import annotations

from typing import Any

D4 = "http://json-schema.org/draft-04/schema#"
D7 = "http://json-schema.org/draft-07/schema#"
D2019 = "https://json-schema.org/draft/2019-09/schema"

_TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
            },
            "required": ["value"],
            "additionalProperties": False,
        }
    },
    "type": "object",
    "properties": {"tree": {"$ref": "#/$defs/node"}},
    "required": ["tree"],
}

SCHEMAS: dict[str, Any] = {
    # -- plain tool shapes ------------------------------------------------------------------
    "empty": {},
    "true": True,
    "object-only": {"type": "object"},
    "no-type-properties": {"properties": {"q": {"type": "string"}}, "required": ["q"]},
    "search": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 50},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            "safe": {"type": "boolean"},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "nullable-union": {
        "type": "object",
        "properties": {"note": {"type": ["string", "null"]}, "n": {"type": ["integer", "null"]}},
        "required": ["note", "n"],
    },
    "type-array-everything": {
        "type": "object",
        "properties": {"x": {"type": ["string", "number", "boolean", "null", "array", "object"]}},
        "required": ["x"],
    },
    "enum-mixed": {
        "type": "object",
        "properties": {"v": {"enum": ["a", 1, 2.5, None, True, [1, 2], {"k": "v"}]}},
        "required": ["v"],
    },
    "enum-typed-filter": {
        "type": "object",
        "properties": {"v": {"type": "string", "enum": ["a", 1, "b", None]}},
        "required": ["v"],
    },
    "const": {
        "type": "object",
        "properties": {"version": {"const": 2}, "kind": {"const": {"a": [1]}}},
        "required": ["version", "kind"],
    },
    "nested-arrays-of-objects": {
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "minItems": 1,
                "maxItems": 4,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}},
                    },
                    "required": ["id"],
                },
            }
        },
        "required": ["rows"],
    },
    "matrix": {
        "type": "object",
        "properties": {
            "m": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
        },
    },
    # -- numbers ------------------------------------------------------------------------------
    "exclusive-bounds": {
        "type": "object",
        "properties": {
            "i": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3},
            "f": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        },
        "required": ["i", "f"],
    },
    "float-bounds-on-integer": {
        "type": "object",
        "properties": {"i": {"type": "integer", "minimum": 0.5, "maximum": 2.5}},
        "required": ["i"],
    },
    "multipleOf-0.1": {
        "type": "object",
        "properties": {"p": {"type": "number", "multipleOf": 0.1, "minimum": 0, "maximum": 5}},
        "required": ["p"],
    },
    "multipleOf-int": {
        "type": "object",
        "properties": {"n": {"type": "integer", "multipleOf": 7, "minimum": -50}},
        "required": ["n"],
    },
    "multipleOf-float-on-integer": {
        "type": "object",
        "properties": {"n": {"type": "integer", "multipleOf": 2.5}},
        "required": ["n"],
    },
    "multipleOf-unbounded-float": {
        "type": "object",
        "properties": {"x": {"type": "number", "multipleOf": 0.01}},
        "required": ["x"],
    },
    "single-point": {
        "type": "object",
        "properties": {"x": {"type": "number", "minimum": 3, "maximum": 3}},
        "required": ["x"],
    },
    "draft4-exclusive-bool": {
        "$schema": D4,
        "type": "object",
        "properties": {
            "x": {"type": "integer", "minimum": 0, "exclusiveMinimum": True, "maximum": 2},
            "y": {"type": "number", "maximum": 1, "exclusiveMaximum": True},
        },
        "required": ["x", "y"],
    },
    # -- strings ------------------------------------------------------------------------------
    "pattern-anchored": {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"}},
        "required": ["code"],
    },
    "pattern-unanchored": {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "ab+c"}},
        "required": ["s"],
    },
    "pattern-and-length": {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4}},
        "required": ["s"],
    },
    "lengths": {
        "type": "object",
        "properties": {"s": {"type": "string", "minLength": 3, "maxLength": 3}},
        "required": ["s"],
    },
    "formats": {
        "type": "object",
        "properties": {
            name: {"type": "string", "format": name}
            for name in (
                "date",
                "date-time",
                "time",
                "email",
                "uri",
                "uuid",
                "ipv4",
                "ipv6",
                "hostname",
                "idn-hostname",
                "uri-reference",
                "json-pointer",
                "regex",
            )
        },
        "required": ["date", "date-time", "time", "email", "uri", "uuid", "ipv4", "ipv6"],
    },
    "format-unknown": {
        "type": "object",
        "properties": {"c": {"type": "string", "format": "x-color"}},
        "required": ["c"],
    },
    "format-without-type": {
        "type": "object",
        "properties": {"d": {"format": "date"}},
        "required": ["d"],
    },
    # -- objects ------------------------------------------------------------------------------
    "patternProperties": {
        "type": "object",
        "patternProperties": {"^x-": {"type": "string"}, "^n_[0-9]+$": {"type": "integer"}},
        "additionalProperties": False,
        "minProperties": 1,
    },
    "patternProperties-overlap-properties": {
        "type": "object",
        "properties": {"x-id": {"type": "string", "maxLength": 4}},
        "patternProperties": {"^x-": {"type": "string", "minLength": 2}},
        "required": ["x-id"],
    },
    "additionalProperties-schema": {
        "type": "object",
        "properties": {"fixed": {"type": "boolean"}},
        "additionalProperties": {"type": "integer", "minimum": 0},
    },
    "map-of-strings": {"type": "object", "additionalProperties": {"type": "string"}},
    "min-max-properties": {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "c": {"type": "integer"},
        },
        "minProperties": 2,
        "maxProperties": 2,
    },
    "propertyNames": {
        "type": "object",
        "propertyNames": {"pattern": "^[a-z]{1,4}$"},
        "additionalProperties": {"type": "integer"},
        "minProperties": 1,
    },
    "dependentRequired": {
        "type": "object",
        "properties": {
            "card": {"type": "string"},
            "billing": {"type": "string"},
            "zip": {"type": "string"},
        },
        "dependentRequired": {"card": ["billing"], "billing": ["zip"]},
    },
    "dependentSchemas": {
        "type": "object",
        "properties": {"card": {"type": "string"}, "cvv": {"type": "integer"}},
        "dependentSchemas": {
            "card": {"required": ["cvv"], "properties": {"cvv": {"minimum": 100, "maximum": 999}}}
        },
    },
    "draft7-dependencies": {
        "$schema": D7,
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "dependencies": {"a": ["b"], "b": {"properties": {"a": {"minimum": 0}}}},
    },
    "required-not-in-properties": {"type": "object", "required": ["mystery"]},
    "false-property": {
        "type": "object",
        "properties": {"ok": {"type": "integer"}, "never": False},
    },
    # -- arrays -------------------------------------------------------------------------------
    "prefixItems-tuple": {
        "type": "object",
        "properties": {
            "point": {
                "type": "array",
                "prefixItems": [{"type": "number"}, {"type": "number"}, {"type": "string"}],
                "items": False,
                "minItems": 2,
            }
        },
        "required": ["point"],
    },
    "prefixItems-open": {
        "type": "object",
        "properties": {
            "t": {
                "type": "array",
                "prefixItems": [{"const": "head"}],
                "items": {"type": "integer"},
                "minItems": 1,
            }
        },
        "required": ["t"],
    },
    "draft7-items-tuple": {
        "$schema": D7,
        "type": "object",
        "properties": {
            "t": {
                "type": "array",
                "items": [{"type": "string"}, {"type": "integer"}],
                "additionalItems": False,
            }
        },
        "required": ["t"],
    },
    "uniqueItems": {
        "type": "object",
        "properties": {
            "u": {
                "type": "array",
                "items": {"type": "integer", "minimum": 0, "maximum": 9},
                "uniqueItems": True,
                "minItems": 3,
            }
        },
        "required": ["u"],
    },
    "contains": {
        "type": "object",
        "properties": {
            "c": {"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 100}}
        },
        "required": ["c"],
    },
    "min-max-contains": {
        "type": "object",
        "properties": {
            "c": {
                "type": "array",
                "contains": {"type": "string"},
                "minContains": 2,
                "maxContains": 3,
                "items": {"type": ["string", "integer"]},
            }
        },
        "required": ["c"],
    },
    # -- composition --------------------------------------------------------------------------
    "anyOf-required": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "name": {"type": "string"}},
        "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
    },
    "oneOf-overlapping": {
        "type": "object",
        "properties": {
            "v": {
                "oneOf": [
                    {"type": "integer", "minimum": 0, "maximum": 10},
                    {"type": "integer", "minimum": 5, "maximum": 20},
                ]
            }
        },
        "required": ["v"],
    },
    "oneOf-tagged": {
        "type": "object",
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                        "required": ["kind", "r"],
                    },
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                        "required": ["kind", "side"],
                    },
                ]
            }
        },
        "required": ["shape"],
    },
    "allOf-merge": {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"a": {"minimum": 10}, "b": {"type": "string"}}, "required": ["b"]},
            {"properties": {"a": {"maximum": 12}}},
        ]
    },
    "allOf-conflicting-patterns": {
        "type": "object",
        "properties": {
            "s": {"allOf": [{"type": "string", "pattern": "^[ab]{2,4}$"}, {"pattern": "b"}]}
        },
        "required": ["s"],
    },
    "allOf-additionalProperties": {
        "allOf": [
            {
                "type": "object",
                "properties": {"a": {"type": "integer"}},
                "additionalProperties": False,
            },
            {"properties": {"a": {"minimum": 0}}, "required": ["a"]},
        ]
    },
    "not-type": {
        "type": "object",
        "properties": {"x": {"not": {"type": ["string", "object", "array"]}}},
        "required": ["x"],
    },
    "not-enum": {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "minimum": 0, "maximum": 3, "not": {"enum": [1, 2]}}
        },
        "required": ["x"],
    },
    "if-then-else": {
        "type": "object",
        "properties": {
            "country": {"enum": ["US", "CA", "FR"]},
            "postal": {"type": "string"},
        },
        "required": ["country"],
        "if": {"properties": {"country": {"const": "US"}}},
        "then": {"properties": {"postal": {"pattern": "^[0-9]{5}$"}}, "required": ["postal"]},
        "else": {"properties": {"postal": {"pattern": "^[A-Z][0-9][A-Z]"}}},
    },
    "if-without-required": {
        "type": "object",
        "properties": {"mode": {"enum": ["fast", "slow"]}, "n": {"type": "integer"}},
        "if": {"properties": {"mode": {"const": "fast"}}, "required": ["mode"]},
        "then": {"properties": {"n": {"maximum": 5}}},
        "else": {"properties": {"n": {"minimum": 100}}},
    },
    # -- references ---------------------------------------------------------------------------
    "recursive-tree": _TREE,
    "recursive-self-root": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "next": {"$ref": "#"}},
        "required": ["name"],
    },
    "recursive-required-linked-list": {
        "$defs": {
            "list": {
                "type": "object",
                "properties": {
                    "head": {"type": "integer"},
                    "tail": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/list"}]},
                },
                "required": ["head", "tail"],
            }
        },
        "type": "object",
        "properties": {"l": {"$ref": "#/$defs/list"}},
        "required": ["l"],
    },
    "ref-with-siblings-2020": {
        "$defs": {"pos": {"type": "integer", "minimum": 0}},
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/pos", "maximum": 3}},
        "required": ["n"],
    },
    "draft7-definitions": {
        "$schema": D7,
        "definitions": {"name": {"type": "string", "minLength": 2, "maxLength": 6}},
        "type": "object",
        "properties": {
            "first": {"$ref": "#/definitions/name"},
            "last": {"$ref": "#/definitions/name"},
        },
        "required": ["first"],
    },
    "draft7-ref-siblings-ignored": {
        "$schema": D7,
        "definitions": {"s": {"type": "string"}},
        "type": "object",
        "properties": {"v": {"$ref": "#/definitions/s", "type": "integer"}},
        "required": ["v"],
    },
    "draft4-id": {
        "$schema": D4,
        "id": "http://example.com/root.json",
        "definitions": {"n": {"id": "#num", "type": "integer", "minimum": 1}},
        "type": "object",
        "properties": {"a": {"$ref": "#num"}, "b": {"$ref": "#/definitions/n"}},
        "required": ["a", "b"],
    },
    "anchor-and-id": {
        "$id": "https://example.com/tool.json",
        "$defs": {"tag": {"$anchor": "tag", "type": "string", "pattern": "^#"}},
        "type": "object",
        "properties": {"t": {"$ref": "#tag"}},
        "required": ["t"],
    },
    "embedded-resource": {
        "$id": "https://example.com/outer.json",
        "$defs": {
            "inner": {
                "$id": "https://example.com/inner.json",
                "$defs": {"x": {"type": "integer", "maximum": 0}},
                "type": "object",
                "properties": {"x": {"$ref": "#/$defs/x"}},
                "required": ["x"],
            }
        },
        "type": "object",
        "properties": {"i": {"$ref": "inner.json"}},
        "required": ["i"],
    },
    "draft2019": {
        "$schema": D2019,
        "type": "object",
        "properties": {
            "t": {
                "type": "array",
                "items": [{"type": "boolean"}],
                "additionalItems": {"type": "null"},
            }
        },
        "dependentRequired": {"t": ["u"]},
    },
    # -- booleans and edge cases ----------------------------------------------------------------
    "boolean-subschemas": {
        "type": "object",
        "properties": {"anything": True, "arr": {"type": "array", "items": True}},
        "required": ["anything"],
    },
    "unevaluated-true": {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "unevaluatedProperties": True,
    },
    "described": {
        "type": "object",
        "title": "Tool",
        "description": "A tool with annotations everywhere",
        "properties": {
            "a": {"type": "string", "description": "A", "examples": ["x"], "default": "x"}
        },
        "required": ["a"],
    },
}

#: Schemas that accept no JSON object at all.
UNSATISFIABLE: dict[str, Any] = {
    "false": False,
    "string-root": {"type": "string"},
    "contradiction": {
        "allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": False}}]
    },
}

#: Schemas we refuse, with the keyword the refusal must name.
UNSUPPORTED: dict[str, tuple[Any, str]] = {
    "dynamicRef": (
        {
            "$defs": {"t": {"$dynamicAnchor": "t"}},
            "type": "object",
            "properties": {"a": {"$dynamicRef": "#t"}},
        },
        "$dynamicRef",
    ),
    "recursiveRef": (
        {"$schema": D2019, "type": "object", "properties": {"a": {"$recursiveRef": "#"}}},
        "$recursiveRef",
    ),
    "unevaluatedProperties": (
        {
            "type": "object",
            "properties": {"a": {"type": "integer"}},
            "unevaluatedProperties": False,
        },
        "unevaluatedProperties",
    ),
    "unevaluatedItems": (
        {
            "type": "object",
            "properties": {"a": {"type": "array", "unevaluatedItems": {"type": "integer"}}},
        },
        "unevaluatedItems",
    ),
    "remote-ref": (
        {"type": "object", "properties": {"a": {"$ref": "http://example.com/schema.json"}}},
        "$ref",
    ),
    "missing-ref": (
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/nowhere"}}},
        "$ref",
    ),
    "invalid-type": ({"type": "object", "properties": {"a": {"type": "strin"}}}, "type"),
    "bad-regex": (
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}},
        "pattern",
    ),
    "not-json": ({"type": "object", "properties": {"a": {"minimum": float("nan")}}}, "(schema)"),
    "draft3": ({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}, "$schema"),
}
