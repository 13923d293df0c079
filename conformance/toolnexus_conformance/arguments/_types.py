"""The two small values the generators hand out: a refused schema, and an invalid argument."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["InvalidArgs", "UnsupportedSchema"]


class UnsupportedSchema(Exception):
    """A schema uses something the generator cannot serve.

    Raised while a strategy is *built*, never while it is drawn from, so a live check can
    skip the tool with the keyword named instead of failing it for our shortcoming.
    """

    def __init__(self, keyword: str, path: str, reason: str = "") -> None:
        self.keyword = keyword
        self.path = path
        self.reason = reason
        where = path or "(root)"
        detail = f": {reason}" if reason else ""
        super().__init__(f"cannot generate arguments: `{keyword}` at {where}{detail}")


@dataclass(frozen=True, slots=True)
class InvalidArgs:
    """Arguments a tool must refuse, and how they were broken (shown when a check fails).

    ``value`` is what to send: usually an object, but a non-object when ``mutation`` is
    ``"not an object"``.
    """

    value: object
    mutation: str
