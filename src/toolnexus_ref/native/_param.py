"""The ``Param`` marker: per-parameter descriptions and schema keywords inside ``Annotated``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Param"]


class Param:
    """Describe one parameter: ``Annotated[int, Param("How many", minimum=1)]``.

    ``description`` becomes the property's ``description``; every other keyword is a
    JSON-Schema keyword copied as given (``minimum=1``, ``maxLength=80``,
    ``pattern="^[a-z]+$"``, ``examples=[...]``), so the names are the schema's own
    camelCase names, not snake_case aliases: what you write is what the model sees.
    A plain string in ``Annotated`` is the short form of ``Param(description=...)``.
    """

    __slots__ = ("description", "extras")

    def __init__(self, description: str | None = None, **schema_extras: Any) -> None:
        if description is not None and not isinstance(description, str):
            raise TypeError(f"Param description must be a str, got {type(description).__name__}")
        self.description = description
        self.extras: Mapping[str, Any] = dict(schema_extras)

    def __repr__(self) -> str:
        parts = [] if self.description is None else [repr(self.description)]
        parts += [f"{k}={v!r}" for k, v in self.extras.items()]
        return f"Param({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Param):
            return NotImplemented
        return (self.description, dict(self.extras)) == (other.description, dict(other.extras))

    def __hash__(self) -> int:
        return hash((self.description, tuple(sorted(self.extras))))

    def schema(self) -> dict[str, Any]:
        """The keywords this marker adds to the parameter's schema."""
        out: dict[str, Any] = dict(self.extras)
        if self.description is not None:
            out["description"] = self.description
        return out
