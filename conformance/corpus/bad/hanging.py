"""Declarations that never return (TN101, TN201, TN301), each beside a healthy neighbour.

A property that waits forever, or spins in a busy loop, would stop any run that
reads it. The suites read a target's declarations in bounded time
(``toolnexus_conformance._reading``): the attribute that did not return becomes a
finding naming it and the bound, nothing more is read from that tool, and its
neighbour, read on a fresh thread, is judged as usual.

The reads hold their thread until ``HOLD.release()`` (each entry's ``release``),
which the tests call once the entry's run is over: an abandoned busy loop would otherwise burn CPU for the rest
of the test session (outside a test it spins until the process ends). Not marked
``hostile``: that set is what ``benchmarks/bench_live.py`` calls live, and these
cost the read bound, not calls. ``tests/conformance/test_hanging_reads.py`` proves
the neighbours pass and the runs end.
"""

from __future__ import annotations

from typing import Any

from toolnexus_ref import ToolResult
from toolnexus_conformance.corpus import Entry, Hold

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": "The query."}},
    "required": ["q"],
    "additionalProperties": False,
}

#: What every hostile read below waits on, or spins on; ``release`` lets them go.
HOLD = Hold()


class Healthy:
    """The neighbour: an ordinary tool, read after the hostile one, on a fresh thread."""

    name = "healthy_neighbour"
    description = "Echo the query back, unchanged."
    input_schema = SCHEMA
    source = "custom"

    def execute(self, args: Any, ctx: Any = None) -> ToolResult:
        return ToolResult.ok(str(args.get("q", "")))


class WaitingName(Healthy):
    @property  # type: ignore[override]
    def name(self) -> str:
        HOLD.wait()  # a lock that is never released: an Event nobody sets
        return "never"


class SpinningDescription(Healthy):
    name = "spinning_description"

    @property  # type: ignore[override]
    def description(self) -> str:
        HOLD.spin()
        return "never"


class WaitingSchema(Healthy):
    name = "waiting_schema"

    @property  # type: ignore[override]
    def input_schema(self) -> dict[str, Any]:
        HOLD.wait()
        return SCHEMA


def _entry(tool: Any, trips: set[str], note: str) -> Entry:
    return Entry(tool, frozenset(trips), note, siblings=(Healthy(),), release=HOLD.release)


CORPUS = [
    _entry(WaitingName(), {"TN101", "TN102", "TN103"}, "name waits on an event nobody sets"),
    _entry(
        SpinningDescription(),
        {"TN201", "TN202", "TN203"},
        "description spins in a busy loop, holding the GIL but for forced switches",
    ),
    _entry(WaitingSchema(), {"TN301", "TN302", "TN303"}, "input_schema waits on an event nobody sets"),
]
