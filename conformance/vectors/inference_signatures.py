"""Signatures whose inferred tool schemas are pinned in ``schema_inference.json``.

Each function's name is a key of the vector file: ``accepted`` holds the expected
``{"description", "input_schema"}``, ``refused`` the fragment the ``TypeError`` or
``ValueError`` raised by ``@tool`` must contain. Bodies are trivial: only the
signatures and docstrings matter. Annotations are strings here
(``from __future__ import annotations``), so forward references and recursive
types are resolved the way user code needs them to be.
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

from pydantic import BaseModel, Field

from toolnexus_ref import ToolContext
from toolnexus_ref.native import Param

# -- types the signatures use --------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(TypedDict):
    street: str
    city: Annotated[str, "City name"]


class Person(TypedDict):
    """Someone to register."""

    name: str
    age: NotRequired[int]
    address: Address


class Filters(TypedDict, total=False):
    tag: str
    since: date


@dataclass
class Point:
    x: float
    y: float = 0.0


@dataclass
class Segment:
    """Two points and a label."""

    start: Point
    end: Point
    label: str = "segment"
    weights: list[float] = field(default_factory=list)


class Tree(TypedDict):
    value: int
    children: list[Tree]


@dataclass
class Category:
    name: str
    parent: Category | None = None


class Ping(TypedDict):
    pong: Pong | None


class Pong(TypedDict):
    ping: Ping | None


class User(BaseModel):
    """A user account."""

    name: str
    email: str = Field(description="Where to write")
    tags: list[str] = []


class Handle:
    """Not something a JSON value can become."""


# -- accepted ------------------------------------------------------------------------


def greet(name: str) -> str:
    """Say hello."""
    return name


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def scale(value: float, factor: float = 2.0) -> float:
    """Scale a number."""
    return value * factor


def toggle(flag: bool = False) -> bool:
    """Flip a flag."""
    return not flag


def nothing(value: None) -> None:
    """Accept only null."""


def maybe_count(count: Optional[int] = None) -> int:  # noqa: UP045 - the old spelling is the case
    """Count, or not."""
    return count or 0


def maybe_text(text: str | None) -> str:
    """Text that may be null but must be given."""
    return text or ""


def id_or_name(key: int | str) -> str:
    """Look up by id or by name."""
    return str(key)


def old_union(key: Union[int, str, None]) -> str:  # noqa: UP007 - the old spelling is the case
    """Union spelled the old way."""
    return str(key)


def mode(mode: Literal["fast", "slow"] = "fast") -> str:
    """Pick a mode."""
    return mode


def level(level: Literal[1, 2, 3]) -> int:
    """Pick a level."""
    return level


def mixed_literal(value: Literal["auto", 0, None]) -> str:
    """A literal of mixed types."""
    return str(value)


def paint(color: Color) -> str:
    """Paint something."""
    return color.value


def prioritize(priority: Priority = Priority.HIGH) -> int:
    """Set a priority."""
    return int(priority)


def optional_enum(color: Color | None = None) -> str:
    """An optional colour."""
    return str(color)


def search(
    query: Annotated[str, "What to search for"],
    limit: Annotated[int, Param("How many results", minimum=1, maximum=50)] = 10,
) -> list[str]:
    """Search the catalogue."""
    return [query] * limit


def annotated_optional(note: Annotated[str | None, "An optional note"] = None) -> str:
    """Keep a note."""
    return note or ""


def tags(tags: list[str]) -> int:
    """Count tags."""
    return len(tags)


def seq(values: Sequence[float]) -> float:
    """Sum a sequence."""
    return sum(values)


def matrix(rows: list[list[float]], index: dict[str, list[int]]) -> int:
    """Nested collections."""
    return len(rows) + len(index)


def pair(point: tuple[int, int]) -> int:
    """A fixed pair."""
    return point[0]


def triple(record: tuple[str, int, bool]) -> str:
    """A fixed heterogeneous tuple."""
    return record[0]


def many(values: tuple[int, ...]) -> int:
    """A variable-length tuple."""
    return len(values)


def unique(labels: set[str]) -> int:
    """Unique labels."""
    return len(labels)


def frozen(ids: frozenset[int]) -> int:
    """Unique ids."""
    return len(ids)


def scores(scores: dict[str, float]) -> float:
    """Score by name."""
    return sum(scores.values())


def raw_object(options: dict) -> int:  # type: ignore[type-arg]
    """Any JSON object."""
    return len(options)


def anything(payload: Any) -> str:
    """Anything at all."""
    return repr(payload)


def register(person: Person) -> str:
    """Register a person."""
    return person["name"]


def filter_items(filters: Filters) -> int:
    """Filter with optional keys."""
    return len(filters)


def draw(segment: Segment) -> str:
    """Draw a segment."""
    return segment.label


def locate(point: Point | None = None) -> str:
    """Locate a point, or here."""
    return repr(point)


def schedule(when: datetime, day: date, at: time) -> str:
    """Schedule something."""
    return when.isoformat()


def lookup(id: uuid.UUID, path: Path) -> str:
    """Look up by UUID and path."""
    return str(id)


def walk(tree: Tree) -> int:
    """Walk a recursive tree."""
    return tree["value"]


def categorize(category: Category) -> str:
    """A category with an optional parent."""
    return category.name


def ping_pong(ping: Ping) -> str:
    """Mutually recursive types."""
    return "pong"


def create_user(user: User) -> str:
    """Create a user from a pydantic model."""
    return user.name


def google_doc(city: str, units: str = "metric") -> str:
    """Get the weather.

    Longer text that the model does not need.

    Args:
        city: The city to look up,
            with its country.
        units (str): metric or imperial.

    Returns:
        The weather.
    """
    return city


def numpy_doc(x: int, y: int) -> int:
    """Multiply.

    Parameters
    ----------
    x : int
        The first factor.
    y : int
        The second factor.

    Returns
    -------
    int
    """
    return x * y


def sphinx_doc(path: str, recursive: bool = False) -> str:
    """List a directory.

    :param path: The directory.
    :param bool recursive: Whether to descend.
    :returns: the listing.
    """
    return path


def with_ctx(query: str, ctx: ToolContext | None = None) -> str:
    """The context is not an argument."""
    return query


def untyped_defaults(retries=3, label=None, ratio=0.5) -> str:  # type: ignore[no-untyped-def]
    """Types come from the defaults."""
    return str(retries)


def positional_only(a: int, /, b: int = 1) -> int:
    """Positional-only parameters are still named properties."""
    return a + b


def no_params() -> str:
    """Take nothing."""
    return "ok"


def multi_line_summary(x: int) -> int:
    """Summaries may wrap
    over two lines.

    This paragraph is not part of it.
    """
    return x


# -- refused -------------------------------------------------------------------------


def star_args(*values: int) -> int:
    """Variadic positional."""
    return sum(values)


def star_kwargs(**options: str) -> int:
    """Variadic keywords."""
    return len(options)


def untyped(x):  # type: ignore[no-untyped-def]
    """No annotation, no default."""
    return x


def unsupported(handle: Handle) -> str:
    """A plain class."""
    return repr(handle)


def int_keys(mapping: dict[int, str]) -> int:
    """Integer keys."""
    return len(mapping)


def bytes_literal(value: Literal[b"x"]) -> str:
    """A bytes literal."""
    return repr(value)


def undocumented(x: int) -> int:
    return x


def generator(n: int) -> Iterator[int]:
    """A generator."""
    yield from range(n)


def unresolved(x: Missing) -> int:  # type: ignore[name-defined]  # noqa: F821
    """A forward reference that names nothing."""
    return 0


def café(x: int) -> int:
    """A name outside the tool-name alphabet."""
    return x
