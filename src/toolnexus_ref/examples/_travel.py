"""A travel desk: weather, unit conversion, notes and a cooperative long-running search."""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from typing import Annotated, Literal

from .._context import ToolContext
from .._result import ToolResult
from .._tool import ToolAnnotations
from ..native import Param, tool
from ..toolkit import Toolkit

READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)


@dataclass(frozen=True)
class Forecast:
    city: str
    temperature: float
    units: Literal["metric", "imperial"]
    summary: str


_SKIES = ("clear", "cloudy", "rain", "snow", "fog", "wind")


@tool(annotations=READ_ONLY)
def get_weather(
    city: Annotated[str, Param(description="City name, e.g. 'Lisbon'", minLength=1, maxLength=100)],
    units: Literal["metric", "imperial"] = "metric",
) -> Forecast | ToolResult:
    """Today's forecast for a city: temperature and a one-word sky.

    The figures are deterministic for a given city, so tests can assert on them.
    """
    if not city.strip():
        return ToolResult.error("city must not be blank; give a city name such as 'Lisbon'")
    digest = hashlib.sha256(city.strip().lower().encode("utf-8")).digest()
    celsius = round(-10 + digest[0] / 255 * 45, 1)
    temperature = celsius if units == "metric" else round(celsius * 9 / 5 + 32, 1)
    return Forecast(city.strip(), temperature, units, _SKIES[digest[1] % len(_SKIES)])


_FACTORS = {
    ("km", "mi"): 0.621371,
    ("mi", "km"): 1.609344,
    ("kg", "lb"): 2.204623,
    ("lb", "kg"): 0.453592,
}


@tool(annotations=READ_ONLY)
def convert_units(
    value: Annotated[float, "The quantity to convert"],
    from_unit: Literal["km", "mi", "kg", "lb"],
    to_unit: Literal["km", "mi", "kg", "lb"],
) -> ToolResult:
    """Convert a distance (km, mi) or a mass (kg, lb) to another unit."""
    if from_unit == to_unit:
        return ToolResult.ok(f"{value:g} {to_unit}")
    factor = _FACTORS.get((from_unit, to_unit))
    if factor is None:
        return ToolResult.error(
            f"cannot convert {from_unit} to {to_unit}: they measure different things"
        )
    return ToolResult.ok(f"{value * factor:.6g} {to_unit}")


@tool(annotations=READ_ONLY, timeout=5.0)
async def search_fares(
    origin: Annotated[str, Param(description="IATA airport code", pattern="^[A-Z]{3}$")],
    destination: Annotated[str, Param(description="IATA airport code", pattern="^[A-Z]{3}$")],
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Search fares between two airports; slow on purpose, and stops as soon as it is cancelled."""
    if origin == destination:
        return ToolResult.error("origin and destination are the same airport")
    for _ in range(5):  # a slow upstream, polled in steps so a cancel is honoured at once
        if ctx is not None and ctx.is_cancelled():
            return ToolResult.error(f"search cancelled: {ctx.cancel_reason}", {"cancelled": True})
        await asyncio.sleep(0.002)
    price = 40 + int(hashlib.sha256(f"{origin}{destination}".encode()).hexdigest(), 16) % 400
    return ToolResult.ok(f"{origin}->{destination}: from {price} EUR")


@tool(annotations=READ_ONLY)
def count_days(
    start: Annotated[str, Param(description="First day, YYYY-MM-DD", format="date")],
    end: Annotated[str, Param(description="Last day, YYYY-MM-DD", format="date")],
    ctx: ToolContext | None = None,
) -> ToolResult:
    """Count the nights between two dates, as a hotel would."""
    import datetime as dt

    if ctx is not None and ctx.is_cancelled():
        return ToolResult.error(f"cancelled: {ctx.cancel_reason}", {"cancelled": True})
    try:
        first, last = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    except ValueError as exc:
        return ToolResult.error(f"dates must be YYYY-MM-DD: {exc}")
    nights = (last - first).days
    if nights < 0:
        return ToolResult.error("end is before start")
    time.sleep(0)  # sync tools run in a worker thread; nothing here blocks the host
    return ToolResult.ok(f"{nights} nights")


def build_toolkit() -> Toolkit:
    """A fresh toolkit (a factory target: ``toolnexus_ref.examples:build_toolkit``)."""
    return Toolkit([get_weather, convert_units, search_fares, count_days])


toolkit = build_toolkit()
