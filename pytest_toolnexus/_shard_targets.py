"""Which targets a CI shard loads: its share of the servers, chosen before any starts.

Cut after collection, every shard had listed every target, so each started every
server: a thousand servers over sixteen shards were sixteen thousand starts. The
servers are known before they start, from the targets given and each ``mcp.json``'s
entries (read without the SDK): the ``i``-th server, in the order given, is shard
``i mod N``'s, or, given an earlier run's seconds (``_shard_costs``), the heaviest
server goes first to the shard it leaves shortest; a shard loads its own alone (an
``mcp.json`` whose servers are shared out is loaded with its share,
``TargetSpec.only``). Python targets, the project's tests and targets that cannot be
read are cut after collection (``ShardPlugin``), balanced against the servers each
shard was given (``loads``); given costs, a Python target they know that weighs no
more than a shard's mean is placed whole with the servers, so the other shards never
import it. Every shard computes the same, from the same command line and the same
costs.

Imports only the standard library and what reads a target spec (no SDK).
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolnexus_conformance.targets import TargetError, TargetKind, TargetSpec, parse_target

from ._options import DEFAULT_CONCURRENCY
from ._prestart import mcp_json_entries, target_key
from ._shard_costs import Weight, place, weight_of
from ._units import _DUPLICATE, PREFIX, SESSION_COST

__all__ = ["SERVER_COST", "ShardTargets", "shard_targets"]

#: What a server is expected to cost, in tools, before it is listed: its start and a
#: handful of tools (the median server of ``benchmarks/sim_balance.py`` has six).
SERVER_COST = SESSION_COST + 6.0
#: What a target's start adds to its measured tools' seconds: about the CPU of a Python
#: SDK server's start (mcp-server-time answers initialize 0.46 s after it is spawned).
TARGET_START = 0.5


@dataclass(frozen=True, slots=True)
class ShardTargets:
    """One shard's targets: what it loads, and what every shard was given."""

    #: The targets to load, in the order given: an mcp.json shared out is a
    #: ``TargetSpec`` holding this shard's servers.
    kept: list[Any]
    #: Each shard's servers' expected cost (``SERVER_COST`` each), shard 1 first.
    loads: list[float]
    #: The labels of the server targets this shard holds (its items are all its own).
    held: frozenset[str]
    #: The labels of the server targets whose servers (some or all) other shards hold:
    #: a setting or a baseline entry naming one of their tools is not lost.
    elsewhere: frozenset[str] = frozenset()
    #: Each tool's measured seconds (``--toolnexus-shard-costs``), by which the rest of
    #: the run is cut after collection too; empty: by count.
    measured: Mapping[str, float] = dataclasses.field(default_factory=dict)
    #: Tools a shard explores at once, by which the seconds are weighed.
    concurrency: int = DEFAULT_CONCURRENCY
    #: Given costs: the servers (and Python targets) placed by their own seconds, and
    #: the servers the costs did not know, placed as the median one.
    weighed: int = 0
    guessed: int = 0

    def holds(self, target: str) -> bool:
        """Whether the target of node name ``target`` is one of the servers held here."""
        label = target[len(PREFIX) :] if target.startswith(PREFIX) else target
        return label in self.held or _DUPLICATE.sub("", label) in self.held


def shard_targets(
    raws: Sequence[Any],
    base_dir: Path,
    k: int,
    n: int,
    costs: Mapping[str, float] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> ShardTargets:
    """Shard ``k`` of ``n``'s share of ``raws`` (the targets as given).

    ``costs`` (each tool's seconds, ``_shard_costs``): the heaviest server (or small
    Python target, ``_placed``) first, to the shard it leaves shortest, a shard
    exploring ``concurrency`` tools at once (``_shard_costs.place``); else the ``i``-th
    server to shard ``i mod n``.
    """
    targets: list[_Target] = []
    given: list[tuple[Any, _Target | None, bool]] = []  # each raw, its target, and if first
    decided: dict[tuple[str, Any], _Target] = {}  # a target given twice goes where it first went
    for raw in raws:
        spec = _placeable_spec(raw, base_dir, python=bool(costs))
        if spec is None:  # cut after collection, with the project's items
            given.append((raw, None, False))
            continue
        key = target_key(spec)
        if key in decided:
            given.append((raw, decided[key], False))
            continue
        names, idle = _shared_out(spec, base_dir)
        target = decided[key] = _Target(spec, names, idle)
        targets.append(target)
        given.append((raw, target, True))
    units: list[tuple[_Target, str | None]] = []
    for target in targets:  # each server shared out is a unit; else the target is one
        units.extend([(target, name) for name in target.names] or [(target, None)])
    weights = _weights(units, costs, concurrency) if costs else None
    guessed = 0
    if weights is None:  # no server's cost is known: each shard its turn
        units = [u for u in units if not u[0].python]
        owners = [position % n for position in range(len(units))]
        loads = [0.0] * n
        for owner in owners:
            loads[owner] += SERVER_COST
    else:
        units, found, guessed = _placed(units, weights, n)
        owners, loads = place(found, n)
    for (target, _name), owner in zip(units, owners, strict=True):
        target.owners.append(owner)
    kept: list[Any] = []
    held: set[str] = set()
    elsewhere: set[str] = set()
    for raw, entry, first in given:
        if entry is None or not entry.owners:  # a Python target cut by tool, after collection
            kept.append(raw)
            continue
        mine = k - 1 in entry.owners
        if not first:  # given again: kept where the first is
            if mine:
                kept.append(raw)
            continue
        if any(owner != k - 1 for owner in entry.owners):
            elsewhere.add(entry.spec.label)
        if not mine:
            continue
        held.add(entry.spec.label)
        names = [
            name for name, owner in zip(entry.names, entry.owners, strict=False) if owner == k - 1
        ]
        if len(names) < len(entry.names):  # shared out; the disabled ones start nowhere: in each
            kept.append(dataclasses.replace(entry.spec, only=(*names, *entry.idle)))
        else:
            kept.append(raw)
    return ShardTargets(
        kept,
        loads,
        frozenset(held),
        frozenset(elsewhere),
        dict(costs or {}),
        concurrency,
        weighed=len(units) - guessed if weights is not None else 0,
        guessed=guessed,
    )


@dataclass(slots=True)
class _Target:
    """A target placed before any loads, as first given: a server target (its servers
    shared out: ``names``), or a Python target the costs know (``python``); the shard
    each unit went to (none: a Python target cut by tool after collection)."""

    spec: TargetSpec
    names: list[str]
    idle: list[str]
    owners: list[int] = dataclasses.field(default_factory=list)
    #: Each server's tool-name prefix, and its name (``_server_of``), once asked.
    prefixes: dict[str, str] | None = None

    @property
    def python(self) -> bool:
        return self.spec.kind is TargetKind.PYTHON


def _weights(
    units: Sequence[tuple[_Target, str | None]], costs: Mapping[str, float], concurrency: int
) -> list[Weight | None] | None:
    """Each unit's weight from its tools' measured seconds, and a start (``None``: not
    measured); ``None`` where the costs know no unit given."""
    keys = sorted(costs)  # a target's tools are a run of them: found by bisection
    seconds: dict[tuple[int, str | None], list[float]] = {}
    for entry in {id(entry): entry for entry, _ in units}.values():
        head = f"{PREFIX}{entry.spec.label}::"
        for key in itertools.islice(keys, bisect.bisect_left(keys, head), None):
            if not key.startswith(head):
                break
            server = _server_of(key[len(head) :], entry) if entry.names else None
            seconds.setdefault((id(entry), server), []).append(costs[key])
    found = [
        weight_of(seconds[id(entry), name], concurrency, TARGET_START)
        if (id(entry), name) in seconds
        else None
        for entry, name in units
    ]
    return found if any(w is not None for w in found) else None


def _placed(
    units: Sequence[tuple[_Target, str | None]], weights: Sequence[Weight | None], n: int
) -> tuple[list[tuple[_Target, str | None]], list[Weight], int]:
    """The units placed before any loads, their weights, and how many of them the costs
    did not know: every server (one not known weighs the median server), and each Python
    target the costs know whose weight is at most a shard's mean. A larger one, or one
    not measured, is imported in every shard and cut by tool after collection, as
    without costs."""
    known = sorted((w for w in weights if w is not None), key=lambda w: w.alone)
    median = known[len(known) // 2]
    mean = sum(w.work for w in known) / n
    placed: list[tuple[_Target, str | None]] = []
    found: list[Weight] = []
    guessed = 0
    for unit, weight in zip(units, weights, strict=True):
        if unit[0].python and (weight is None or weight.alone > mean):
            continue
        placed.append(unit)
        found.append(median if weight is None else weight)
        guessed += weight is None
    return placed, found, guessed


def _server_of(tool: str, entry: _Target) -> str | None:
    """Which server of a file shared out lists ``tool``: the longest whose name, made a
    tool-name prefix (``<name>_``, as the file's tools are named), begins it."""
    if entry.prefixes is None:
        from toolnexus_ref._naming import sanitize

        entry.prefixes = {f"{sanitize(name)}_": name for name in entry.names}
    cut = len(tool)
    while (cut := tool.rfind("_", 0, cut)) >= 0:
        name = entry.prefixes.get(tool[: cut + 1])
        if name is not None:
            return name
    return None


def _placeable_spec(raw: Any, base_dir: Path, *, python: bool) -> TargetSpec | None:
    """The spec of a server target (MCP, HTTP, A2A, skills), and with ``python`` of a
    Python target given by name; else ``None`` (an object from the targets hook, a
    target that cannot be read)."""
    if not isinstance(raw, str):
        return None  # an object from the targets hook: a Python target
    try:
        spec = parse_target(raw, base_dir=base_dir)
    except TargetError:
        return None
    return None if spec.kind is TargetKind.PYTHON and not python else spec


def _shared_out(spec: TargetSpec, base_dir: Path) -> tuple[list[str], list[str]]:
    """An mcp.json's enabled servers, when they can be shared out (two or more, named
    in the file), and its disabled ones; else none: the target is one server's share."""
    if spec.kind is not TargetKind.MCP_JSON:
        return [], []
    configs = mcp_json_entries(spec, base_dir)
    if not configs or any(c.named_by_server for c in configs):
        return [], []
    names = [c.name for c in configs]
    enabled = [c.name for c in configs if c.enabled]
    if len(enabled) < 2 or len(set(names)) < len(names):
        return [], []
    return enabled, [c.name for c in configs if not c.enabled]
