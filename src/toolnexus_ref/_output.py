"""Turning whatever a function returned into the text a model reads."""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import json
import pathlib
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["to_jsonable", "to_output"]


def to_output(value: Any) -> str:
    """``str`` passes through; ``None`` is empty; anything else becomes compact JSON text."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(to_jsonable(value), ensure_ascii=False, separators=(",", ":"))


def to_jsonable(value: Any) -> Any:
    """Plain JSON data for dataclasses, pydantic models, enums, dates, sets and the like.

    Raises ``TypeError`` for an object it cannot represent; the caller turns that
    into an error result that names the type.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else str(value)
        )
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_jsonable(v) for v in items]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal | uuid.UUID | pathlib.PurePath):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    model_dump = getattr(value, "model_dump", None)  # pydantic v2, without importing it
    if callable(model_dump):
        return to_jsonable(model_dump(mode="json"))
    raise TypeError(f"cannot turn {type(value).__name__} into JSON text")
