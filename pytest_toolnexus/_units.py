"""Work units: the items of a run cut where an exploration must not be cut.

A tool is explored once, by the process that runs its first item, for all its
items; a worker or a shard that held only some of a tool's items would explore it
again. An MCP server, an HTTP service or a skills folder is one session: its tools
are best explored where the server was opened. So the items of a run are cut into
units, each given whole to one worker or shard:

* a non-Python target (MCP, HTTP, A2A, skills): the whole target, one unit; an
  ``mcp.json`` whose servers are known (``servers``: the workers of one machine
  share their listings) is cut by server instead, its own items one unit more;
* a Python target: its target-level items, one unit; its tools, in bundles
  (explored together, ``RunOptions.concurrency`` at a time; of consecutive tools
  until a run has measured them, then of equal cost; a bundle may run on into the
  next Python target). A worker explores one bundle at a time, so a bundle is as
  large as a worker's concurrency needs: the tools are cut into as few rounds as
  that concurrency allows, each round one bundle per worker;
* any other test item of the project: a unit of its own, as xdist's ``load`` has it.

Only node ids are read (the xdist controller sees nothing else), and the cut
depends on nothing but the collection and the number of workers, so the
controller and every worker (or every shard, on its own machine) make the same
units. Costs only order and balance them.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = [
    "OTHER_COST",
    "Unit",
    "assign",
    "bundle_count",
    "bundles",
    "estimated_cost",
    "even_bundles",
    "rounds",
    "server_unit",
    "split_nodeid",
    "units_of",
]

PREFIX = "toolnexus:"
#: A cost, in tools, given to a test item of the project (not a conformance check).
OTHER_COST = 0.05
#: What starting and listing a server costs, in tools, until a run has measured it
#: (a stdio server's start is about 1.5 s, a trivial tool's exploration 0.2 s, one
#: tool in ten slow: ``benchmarks/sim_balance.py``).
SESSION_COST = 1.5
_DUPLICATE = re.compile(r"#\d+$")
_WHOLE_PREFIXES = ("stdio:", "http://", "https://", "a2a:", "skills:")


@dataclass(slots=True)
class Unit:
    """Items that go together to one worker or shard."""

    key: str
    #: Positions of its items in the collection, in collection order.
    indices: list[int] = field(default_factory=list)
    #: ``target::tool`` of each tool it explores, in order.
    tools: list[str] = field(default_factory=list)
    #: ``target`` (a whole target), ``tools`` (a bundle of one target's tools or its
    #: target-level items) or ``other`` (an item that is no conformance check).
    kind: str = "other"


def split_nodeid(nodeid: str) -> tuple[str, str | None] | None:
    """``(target, tool)`` of a conformance item (``tool`` ``None`` at target level), else ``None``.

    Items are ``toolnexus:<label>::<check>`` and ``toolnexus:<label>::<tool>::<check>``;
    a check's name never holds ``::``, a tool's name may.
    """
    if not nodeid.startswith(PREFIX):
        return None
    parts = nodeid.split("::")
    if len(parts) < 2:
        return None
    if len(parts) == 2:
        return parts[0], None
    return parts[0], "::".join(parts[1:-1])


def whole_target(target: str) -> bool:
    """Whether a target is explored in one piece: a server, a service or a skills folder.

    Read from the label as ``targets.parse_target`` reads a spec (that module's
    imports cost the controller half a second); an importable Python target, or an
    object from the targets hook, is cut by tool.
    """
    label = _DUPLICATE.sub("", target[len(PREFIX) :]).strip()
    return label.startswith(_WHOLE_PREFIXES) or label.endswith(".json")


def rounds(python_tools: int, workers: int, concurrency: int) -> int:
    """How many bundles each worker explores, one after another: as few as its concurrency allows.

    A worker explores the tools of one bundle at once and the next bundle only after
    it (its items ask one at a time), so more, smaller bundles leave its concurrency
    idle: twenty tools that wait on a service took twice as long on one xdist worker,
    cut into bundles of five, as in a serial run that explores sixteen at once.
    """
    return max(1, math.ceil(python_tools / (max(1, workers) * max(1, concurrency))))


def bundle_count(python_tools: int, workers: int, concurrency: int) -> int:
    """One bundle per worker in each of its ``rounds``; never more than there are tools."""
    return min(python_tools, max(1, workers) * rounds(python_tools, workers, concurrency))


def even_bundles(python_tools: int, workers: int, concurrency: int) -> list[range]:
    """Tools all alike (no cost known): ``bundle_count`` runs of consecutive tools, sizes
    differing by one at most (four tools on three workers: 2, 1, 1)."""
    count = bundle_count(python_tools, workers, concurrency)
    if count <= 0:
        return []
    size, longer = divmod(python_tools, count)
    out: list[range] = []
    start = 0
    for index in range(count):
        end = start + size + (index < longer)
        out.append(range(start, end))
        start = end
    return out


def unmeasured_cost(measured: Mapping[str, float]) -> float:
    """What a tool never measured is taken to cost: the median of those that were (or 1)."""
    known = sorted(measured.values())
    return known[len(known) // 2] if known else 1.0


def bundles(costs: Sequence[float], *, workers: int, concurrency: int) -> list[list[int]]:
    """The tools (their positions) in bundles: each worker's ``rounds``, one bundle each.

    With no cost measured (all equal), runs of consecutive tools (``even_bundles``).
    Once measured, the costliest first to the bundle least loaded so far that has
    room (at most ``concurrency`` tools): slow tools are spread one to a bundle, each
    with fast ones beside it, where a worker explores them all at once; a bundle of
    slow tools alone would wait on each other while the fast ones queue behind.
    Each bundle lists its tools in order, the bundles by their first tool.
    """
    if not costs:
        return []
    if len(set(costs)) == 1:
        return [list(r) for r in even_bundles(len(costs), workers, concurrency)]
    count = bundle_count(len(costs), workers, concurrency)
    out = [b for b in assign(costs, count, capacity=max(1, concurrency)) if b]
    return sorted(out, key=lambda b: b[0])


def units_of(
    nodeids: Sequence[str],
    *,
    workers: int,
    concurrency: int,
    measured: Mapping[str, float] | None = None,
    servers: Mapping[str, Sequence[str]] | None = None,
) -> list[Unit]:
    """The collection's units, in the order of their first item.

    ``measured`` (each tool's last cost) shapes the bundles, and ``servers`` (the
    prefix of each server's tool names, by target node name) cuts a target by
    server: the controller and every worker must be given the same, or none.
    """
    measured = measured or {}
    servers = servers or {}
    targets: dict[str, dict[str | None, list[int]]] = {}
    order: list[tuple[str, int]] = []  # ("target", position) or ("other", index)
    for index, nodeid in enumerate(nodeids):
        found = split_nodeid(nodeid)
        if found is None:
            order.append(("other", index))
            continue
        target, tool = found
        if target not in targets:
            targets[target] = {}
            order.append((target, index))
        targets[target].setdefault(tool, []).append(index)
    whole = {target: whole_target(target) for target in targets}
    # All the Python targets' tools, in order: bundles are cut over the whole of them.
    split: list[tuple[str, list[int]]] = [
        (f"{t}::{tool}", found)
        for t, tools in targets.items()
        if not whole[t]
        for tool, found in tools.items()
        if tool is not None
    ]
    default = unmeasured_cost(measured)
    cut = bundles(
        [measured.get(name, default) for name, _ in split],
        workers=workers,
        concurrency=concurrency,
    )
    # A bundle may span targets (twenty one-tool targets on two workers are explored
    # ten at a time on each, not one by one): it goes with the target of its first tool.
    first_of: dict[str, list[list[int]]] = {}
    for bundle in cut:
        first_of.setdefault(_target_of(split[bundle[0]][0]), []).append(bundle)
    units: list[Unit] = []
    for what, index in order:
        if what == "other":
            units.append(Unit(nodeids[index], [index]))
            continue
        tools = targets[what]
        if whole[what] and len(servers.get(what, ())) > 1:
            units.extend(_by_server(what, tools, servers[what]))
            continue
        if whole[what]:
            indices = sorted(i for found in tools.values() for i in found)
            names = [f"{what}::{tool}" for tool in tools if tool is not None]
            units.append(Unit(what, indices, names, "target"))
            continue
        if None in tools:
            units.append(Unit(what, list(tools[None]), [], "tools"))
        for bundle in first_of.get(what, []):
            chunk = [split[i] for i in bundle]
            units.append(
                Unit(
                    chunk[0][0],
                    sorted(i for _, found in chunk for i in found),
                    [name for name, _ in chunk],
                    "tools",
                )
            )
    return units


def _by_server(
    target: str, tools: Mapping[str | None, list[int]], prefixes: Sequence[str]
) -> list[Unit]:
    """A target's units by server: each server's tools (by name prefix, the longest
    that matches), and its other items (the target's own, tools of no server)."""
    ordered = sorted(prefixes, key=len, reverse=True)
    own: list[int] = []
    by_prefix: dict[str, list[str | None]] = {}
    for tool, found in tools.items():
        prefix = next((p for p in ordered if tool is not None and tool.startswith(p)), None)
        if prefix is None:
            own.extend(found)
        else:
            by_prefix.setdefault(prefix, []).append(tool)
    units = []
    if own:
        units.append(Unit(target, sorted(own), [], "target"))
    for prefix, names in by_prefix.items():
        indices = sorted(i for name in names for i in tools[name])
        key = server_unit(target, prefix)
        units.append(Unit(key, indices, [f"{target}::{name}" for name in names], "target"))
    units.sort(key=lambda u: u.indices[0])
    return units


def server_unit(target: str, prefix: str) -> str:
    """The key of the unit of one server of ``target`` (its tools' name ``prefix``)."""
    return f"{target}::{prefix}*"


def _target_of(tool: str) -> str:
    return tool.split("::", 1)[0]


def estimated_cost(
    unit: Unit, measured: Mapping[str, float], default: float | None = None
) -> float:
    """A unit's expected cost: its tools' costs as last measured, else its number of tools.

    A tool never measured costs the median of those that were (one, if none was);
    a target's own items and the project's items cost little.
    """
    if unit.kind == "other":
        return OTHER_COST
    if not unit.tools:
        return OTHER_COST * max(1, len(unit.indices))
    if default is None:
        default = unmeasured_cost(measured)
    cost = sum(measured.get(tool, default) for tool in unit.tools)
    if unit.kind == "target" and not any(tool in measured for tool in unit.tools):
        cost += SESSION_COST * default  # measured, a unit's time holds its server's start
    return cost


def assign(
    costs: Sequence[float],
    bins: int,
    *,
    capacity: int | None = None,
    loads: Sequence[float] | None = None,
) -> list[list[int]]:
    """Longest first to the least loaded: the positions of ``costs`` in each of ``bins``.

    ``capacity`` caps the positions a bin takes (``bins * capacity`` must hold them
    all); ``loads``: what each bin holds already. Deterministic: ties go by position,
    then to the lowest bin.
    """
    if bins < 1:
        raise ValueError("at least one bin is needed")
    if capacity is not None and bins * capacity < len(costs):
        raise ValueError(f"{bins} bins of {capacity} cannot hold {len(costs)}")
    heap = [(float(loads[b]) if loads else 0.0, b) for b in range(bins)]
    heapq.heapify(heap)
    out: list[list[int]] = [[] for _ in range(bins)]
    for position in sorted(range(len(costs)), key=lambda p: (-costs[p], p)):
        load, b = heapq.heappop(heap)
        out[b].append(position)
        if capacity is None or len(out[b]) < capacity:
            heapq.heappush(heap, (load + costs[position], b))
    for positions in out:
        positions.sort()
    return out
