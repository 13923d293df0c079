"""Properties of native tools over generated annotations and generated JSON arguments."""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from toolnexus_ref import ToolContext, ToolResult, to_jsonable
from toolnexus_ref.native import Param, infer_schema, tool

UTC = st.just(dt.UTC)


class Suit(enum.Enum):
    HEARTS = "hearts"
    SPADES = "spades"


class Rank(enum.IntEnum):
    ACE = 1
    KING = 13


@dataclass(frozen=True)
class Spot:
    x: float
    y: float = 0.0


class Labelled(TypedDict):
    label: str
    weight: NotRequired[int]


class Tree(TypedDict):
    value: int
    children: list[Tree]


class Model(BaseModel):
    name: str
    size: int = 0


JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
TREES = st.recursive(
    st.builds(lambda v: {"value": v, "children": []}, st.integers()),
    lambda kids: st.builds(
        lambda v, c: {"value": v, "children": c}, st.integers(), st.lists(kids, max_size=2)
    ),
    max_leaves=4,
)

Node = tuple[Any, st.SearchStrategy[Any]]

HASHABLE: list[Node] = [
    (str, st.text(max_size=5)),
    (int, st.integers()),
    (bool, st.booleans()),
    (dt.date, st.dates()),
    (uuid.UUID, st.uuids()),
    (Suit, st.sampled_from(Suit)),
    (Rank, st.sampled_from(Rank)),
    (Literal["a", "b", 3], st.sampled_from(["a", "b", 3])),
    (Spot, st.builds(Spot, FLOATS, FLOATS)),
]
LEAVES: list[Node] = [
    *HASHABLE,
    (float, FLOATS),
    (type(None), st.none()),
    (Any, JSON),
    (dt.datetime, st.datetimes(timezones=UTC)),
    (dt.time, st.times(timezones=UTC)),
    (
        Labelled,
        st.fixed_dictionaries({"label": st.text(max_size=3)}, optional={"weight": st.integers()}),
    ),
    (Tree, TREES),
    (Model, st.builds(Model, name=st.text(max_size=3), size=st.integers())),
]


def _composites(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    hashable = st.sampled_from(HASHABLE)
    return st.one_of(
        children.map(lambda n: (list[n[0]], st.lists(n[1], max_size=3))),
        children.map(lambda n: (Sequence[n[0]], st.lists(n[1], max_size=3))),
        children.map(lambda n: (tuple[n[0], ...], st.lists(n[1], max_size=3).map(tuple))),
        st.lists(children, min_size=1, max_size=3).map(
            lambda ns: (
                tuple.__class_getitem__(tuple(a for a, _ in ns)),
                st.tuples(*[s for _, s in ns]),
            )
        ),
        children.map(
            lambda n: (dict[str, n[0]], st.dictionaries(st.text(max_size=3), n[1], max_size=3))
        ),
        children.map(lambda n: (Optional[n[0]], st.none() | n[1])),  # noqa: UP045
        children.map(lambda n: (Annotated[n[0], "described"], n[1])),
        children.map(lambda n: (Annotated[n[0], Param("p", title="T")], n[1])),
        hashable.map(lambda n: (set[n[0]], st.sets(n[1], max_size=3))),
        hashable.map(lambda n: (frozenset[n[0]], st.frozensets(n[1], max_size=3))),
    )


NODES = st.recursive(st.sampled_from(LEAVES), _composites, max_leaves=5)


def _function(
    annotations: list[Any], received: list[tuple[Any, ...]], *, is_async: bool
) -> Callable[..., Any]:
    names = [f"p{i}" for i in range(len(annotations))]
    prefix = "async " if is_async else ""
    source = (
        f"{prefix}def generated({', '.join(names)}):\n"
        "    '''Generated.'''\n"
        f"    received.append(({''.join(n + ', ' for n in names)}))\n"
        "    return 'ok'\n"
    )
    namespace: dict[str, Any] = {"received": received}
    exec(source, namespace)
    fn: Callable[..., Any] = namespace["generated"]
    fn.__annotations__ = dict(zip(names, annotations, strict=True))
    return fn


@given(nodes=st.lists(NODES, min_size=1, max_size=3), data=st.data(), is_async=st.booleans())
def test_inferred_schemas_are_valid_and_values_round_trip(
    nodes: list[Node], data: st.DataObject, is_async: bool
) -> None:
    received: list[tuple[Any, ...]] = []
    fn = _function([annotation for annotation, _ in nodes], received, is_async=is_async)
    _, schema = infer_schema(fn)
    Draft202012Validator.check_schema(schema)
    values = tuple(data.draw(strategy) for _, strategy in nodes)
    args = {f"p{i}": to_jsonable(value) for i, value in enumerate(values)}
    assert not list(Draft202012Validator(schema).iter_errors(args))
    result = asyncio.run(tool(fn).execute(args))
    assert result == ToolResult.ok("ok"), result
    assert received == [values]


# -- never raises --------------------------------------------------------------------


@tool
def strict(count: int, names: list[str], spot: Spot, when: dt.date | None = None) -> str:
    """Typed parameters."""
    return f"{count} {names} {spot} {when}"


@tool
async def failing(value: Any = None) -> str:
    """Raises whatever it is given."""
    raise ValueError(repr(value))


@tool
def exiting(code: int = 0) -> None:
    """Calls sys.exit."""
    sys.exit(code)


@tool
async def async_exiting(code: int = 0) -> None:
    """Calls sys.exit on the loop."""
    sys.exit(code)


@tool
def opaque(payload: Any = None) -> object:
    """Returns something that is not JSON."""
    return object() if payload else {1: {2, 3}, "f": float("nan")}


@tool
async def with_context(tree: Tree, ctx: ToolContext | None = None) -> str:
    """Asks for the context."""
    return str(ctx)


NEVER_RAISE = [strict, failing, exiting, async_exiting, opaque, with_context]


def _arguments(properties: Sequence[str]) -> st.SearchStrategy[Any]:
    likely = st.fixed_dictionaries({}, optional={name: JSON for name in properties})
    return likely | st.dictionaries(st.text(max_size=5), JSON, max_size=3) | JSON


@given(data=st.data(), index=st.integers(0, len(NEVER_RAISE) - 1), cancelled=st.booleans())
def test_a_native_tool_never_raises_whatever_json_it_is_given(
    data: st.DataObject, index: int, cancelled: bool
) -> None:
    made = NEVER_RAISE[index]
    args = data.draw(_arguments(list(made.input_schema["properties"])))
    ctx = ToolContext()
    if cancelled:
        ctx.cancel()
    result = asyncio.run(made.execute(args, ctx))
    assert isinstance(result, ToolResult)
    assert isinstance(result.output, str)
    if cancelled:
        assert result.is_error
