"""The arguments a stream calls before any generated one: named, given, and edges.

A random draw rarely hits the one value a tool mishandles; the schema's own
``examples`` and ``default``, the user's arguments (``RunOptions.arguments``), the
values the tool's own code compares its input with (``_literals``) and the edge
values of each property (``arguments._edges``) are called first, each once. Only
arguments the schema accepts go to the valid stream; a user's example
that the schema refuses is still called, on the invalid stream, marked as given by
the user, so no valid-stream rule judges it as valid. The invalid stream then calls
the simplest arguments with one top-level property at a time set to the wrong value
lax validators coerce (``true`` for an integer; ``arguments.lax_args_for``), so a
tool that converts instead of refusing fails TN604 every run, not when the draw
happens to pick that property.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._options import ToolArguments

__all__ = ["USER_GIVEN", "explicit_args", "with_literals", "with_values"]

#: How a user's example the schema refuses is marked on the invalid stream.
USER_GIVEN = "given by the user; the schema refuses it"


def explicit_args(schema: Any, simplest: Any, given: ToolArguments, *, invalid: bool) -> list[Any]:
    """The valid stream's explicit arguments in call order, or (``invalid``) the user's
    examples the schema refuses then the lax values, as ``InvalidArgs``. Never raises
    for a bad schema."""
    from .. import arguments

    if not isinstance(schema, Mapping):
        return []
    try:
        valid = arguments.valid_args_checker(dict(schema))
    except (arguments.UnsupportedSchema, RecursionError, ValueError, TypeError):
        return []
    user = [dict(e) for e in given.examples if isinstance(e, Mapping)]
    if invalid:
        from ..arguments import InvalidArgs

        refused = [InvalidArgs(e, USER_GIVEN) for e in user if not _checked(valid, e)]
        try:
            refused += arguments.lax_args_for(dict(schema), simplest)
        except (arguments.UnsupportedSchema, RecursionError, ValueError, TypeError):
            pass
        return refused
    out: list[Any] = [e for e in user if _checked(valid, e)]
    if isinstance(simplest, dict):
        for name, values in given.values.items():
            for value in values:
                candidate = {**simplest, name: value}
                if _checked(valid, candidate):
                    out.append(candidate)
    try:
        out += arguments.edge_args_for(dict(schema), simplest)
    except (arguments.UnsupportedSchema, RecursionError, ValueError, TypeError):
        pass
    return _unique(out)


def with_literals(given: ToolArguments, schema: Any, tool: Any) -> ToolArguments:
    """The user's arguments, with the values the tool's own code compares its input
    with (``_literals``; a local Python MCP server's, ``_server_literals``) after the
    user's values of each property."""
    from ._literals import literal_values, literals_of
    from ._server_literals import server_literals

    found = literal_values(schema, literals_of(tool) or server_literals(tool))
    if not found:
        return given
    values = dict(given.values)
    for name, more in found.items():
        mine = values.get(name, ())
        values[name] = (*mine, *(v for v in more if v not in mine))
    return ToolArguments(given.examples, values)


def _checked(valid: Any, value: Any) -> bool:
    try:
        return bool(valid(value))
    except Exception:  # a schema the validator trips on: not evidence of validity
        return False


def _unique(values: list[Any]) -> list[Any]:
    from ._search import args_key

    seen: set[str] = set()
    out = []
    for value in values:
        key = args_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def with_values(strategy: Any, schema: Any, given: ToolArguments, invalid: bool) -> Any:
    """The valid stream with the given values (the user's, the code's) mixed into their
    properties (where the result stays valid); any other stream as it is."""
    if invalid or not given.values or not isinstance(schema, Mapping):
        return strategy
    from hypothesis import strategies as st

    from .. import arguments

    valid = arguments.valid_args_checker(dict(schema))
    pairs = [(name, value) for name, values in given.values.items() for value in values]

    def put(args: Any, pair: tuple[str, Any]) -> Any:
        return {**args, pair[0]: pair[1]} if isinstance(args, dict) else args

    mixed = st.builds(put, strategy, st.sampled_from(pairs)).filter(lambda a: _checked(valid, a))
    return st.one_of(strategy, mixed)
