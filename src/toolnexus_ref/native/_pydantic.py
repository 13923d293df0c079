"""Pydantic models as nested schemas that stand alone inside a tool's input schema.

``model_json_schema()`` answers with its own ``$defs`` and ``#/$defs/...`` references,
which would point at the wrong document root once nested in a property. Each
reference is inlined; one that refers back to a definition being inlined (a
recursive model) is hoisted into the tool schema's root ``$defs`` instead.
pydantic itself is never imported here: the model already did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._types import SchemaBuilder

__all__ = ["pydantic_schema"]

_PREFIX = "#/$defs/"
#: Keywords whose values are data, not schemas: never rewrite ``$ref`` inside them.
_DATA_KEYWORDS = frozenset({"default", "examples", "const", "enum"})


def pydantic_schema(model: type, builder: SchemaBuilder) -> dict[str, Any]:
    try:
        raw = model.model_json_schema(ref_template=_PREFIX + "{model}")  # type: ignore[attr-defined]
    except Exception as exc:
        raise TypeError(
            f"pydantic could not build a schema for {model.__qualname__}: {exc}"
        ) from exc
    defs: dict[str, Any] = dict(raw.pop("$defs", {}) or {})
    inlined: dict[str, Any] = _Inliner(model, defs, builder).walk(raw)
    return inlined


class _Inliner:
    def __init__(self, model: type, defs: dict[str, Any], builder: SchemaBuilder) -> None:
        self.model = model
        self.defs = defs
        self.builder = builder
        self.stack: list[str] = []
        self.recursive: set[str] = set()

    def walk(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX):
            siblings = {k: self.walk(v) for k, v in node.items() if k != "$ref"}
            return {**self.resolve(ref[len(_PREFIX) :]), **siblings}
        return {
            key: (value if key in _DATA_KEYWORDS else self.walk(value))
            for key, value in node.items()
        }

    def resolve(self, name: str) -> dict[str, Any]:
        key = (self.model, name)
        if name in self.recursive or name in self.stack:
            self.recursive.add(name)
            return {"$ref": self.builder.ref(key, name)}
        if name not in self.defs:
            raise TypeError(
                f"pydantic schema of {self.model.__qualname__} refers to unknown {name!r}"
            )
        self.stack.append(name)
        try:
            inlined = self.walk(self.defs[name])
        finally:
            self.stack.pop()
        if name in self.recursive:
            self.builder.defs[self.builder.def_name(key, name)] = inlined
            return {"$ref": self.builder.ref(key, name)}
        return dict(inlined)
