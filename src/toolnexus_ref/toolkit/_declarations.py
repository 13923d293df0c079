"""Tool declarations in the shapes the providers accept.

The schema goes out as the tool declared it (deep-copied to plain JSON data) and is
not rewritten to please a provider: a schema a provider would refuse is a finding
for the conformance checks to report, not something to hide here. Each shape is
built by the wire format's own function (``toolnexus_ref.wire``), so what the
toolkit declares and what the host and the fakes send are one source.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolnexus_ref.wire import ToolDecl, anthropic, gemini, openai

__all__ = [
    "anthropic_declaration",
    "anthropic_declarations",
    "gemini_declaration",
    "gemini_declarations",
    "openai_declaration",
    "openai_declarations",
    "plain_schema",
]

#: What a tool without a schema is declared with: an object that takes nothing.
_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def plain_schema(schema: Any) -> Any:
    """A deep copy of ``schema`` made of dicts and lists only.

    Tools may hold their schema in a ``MappingProxyType`` or tuples; providers' SDKs
    and ``json.dumps`` want plain data, and a caller that edits a declaration must
    not edit the tool.
    """
    if schema is None:
        return dict(_EMPTY_OBJECT)
    return _plain(schema)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _decl(tool: Any) -> ToolDecl:
    return ToolDecl(tool.name, tool.description, plain_schema(tool.input_schema))


def openai_declaration(tool: Any, *, strict: bool = False) -> dict[str, Any]:
    """``{"type": "function", "function": {name, description, parameters}}`` (Chat Completions).

    ``strict=True`` only adds ``"strict": true``; whether the schema meets strict
    mode's rules is for the provider checks to say.
    """
    return openai.declaration(_decl(tool), strict=strict)


def anthropic_declaration(tool: Any) -> dict[str, Any]:
    """``{name, description, input_schema}`` (Messages API)."""
    return anthropic.declaration(_decl(tool))


def gemini_declaration(tool: Any, *, json_schema: bool = False) -> dict[str, Any]:
    """One ``FunctionDeclaration``: ``{name, description, parameters}``.

    Gemini's ``parameters`` is an OpenAPI subset; ``json_schema=True`` puts the
    schema under ``parametersJsonSchema`` instead, which takes real JSON Schema (and
    is what the reference host sends).
    """
    return gemini.function_declaration(_decl(tool), json_schema=json_schema)


def openai_declarations(tools: Iterable[Any], *, strict: bool = False) -> list[dict[str, Any]]:
    """The ``tools`` list of a Chat Completions request."""
    return [openai_declaration(tool, strict=strict) for tool in tools]


def anthropic_declarations(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """The ``tools`` list of a Messages request."""
    return [anthropic_declaration(tool) for tool in tools]


def gemini_declarations(tools: Iterable[Any], *, json_schema: bool = False) -> dict[str, Any]:
    """One ``Tool`` wrapper: ``{"functionDeclarations": [...]}``.

    Gemini wants every function in a single wrapper; a request's ``tools`` list is
    ``[gemini_declarations(tools)]``.
    """
    return {"functionDeclarations": [gemini_declaration(t, json_schema=json_schema) for t in tools]}
