"""Which targets a CI shard loads: its share of the servers, chosen before any starts.

Cut after collection, every shard had listed every target, so each started every
server: a thousand servers over sixteen shards were sixteen thousand starts. The
servers are known before they start, from the targets given and each ``mcp.json``'s
entries (read without the SDK): the ``i``-th server, in the order given, is shard
``i mod N``'s, and a shard loads its own alone (an ``mcp.json`` whose servers are
shared out is loaded with its share, ``TargetSpec.only``). Python targets, the
project's tests and targets that cannot be read are cut after collection
(``ShardPlugin``), balanced against the servers each shard was given (``loads``):
every shard computes the same, from the same command line.

Imports only the standard library and what reads a target spec (no SDK).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolnexus_conformance.targets import TargetError, TargetKind, TargetSpec, parse_target

from ._prestart import mcp_json_entries, target_key
from ._units import _DUPLICATE, PREFIX, SESSION_COST

__all__ = ["SERVER_COST", "ShardTargets", "shard_targets"]

#: What a server is expected to cost, in tools, before it is listed: its start and a
#: handful of tools (the median server of ``benchmarks/sim_balance.py`` has six).
SERVER_COST = SESSION_COST + 6.0


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

    def holds(self, target: str) -> bool:
        """Whether the target of node name ``target`` is one of the servers held here."""
        label = target[len(PREFIX) :] if target.startswith(PREFIX) else target
        return label in self.held or _DUPLICATE.sub("", label) in self.held


def shard_targets(raws: Sequence[Any], base_dir: Path, k: int, n: int) -> ShardTargets:
    """Shard ``k`` of ``n``'s share of ``raws`` (the targets as given)."""
    kept: list[Any] = []
    counts = [0] * n
    held: set[str] = set()
    elsewhere: set[str] = set()
    decided: dict[tuple[str, Any], bool] = {}  # a server given twice goes where it first went
    position = 0
    for raw in raws:
        spec = _server_spec(raw, base_dir)
        if spec is None:  # cut after collection, with the project's items
            kept.append(raw)
            continue
        key = target_key(spec)
        if key in decided:
            if decided[key]:
                kept.append(raw)
            continue
        names, idle = _shared_out(spec, base_dir)
        owners = [(position + i) % n for i in range(max(1, len(names)))]
        position += len(owners)
        for owner in owners:
            counts[owner] += 1
        mine = [name for name, owner in zip(names, owners, strict=False) if owner == k - 1]
        decided[key] = (k - 1) in owners
        if any(owner != k - 1 for owner in owners):
            elsewhere.add(spec.label)
        if not decided[key]:
            continue
        held.add(spec.label)
        if names and len(mine) < len(names):  # the disabled ones start nowhere: in each
            kept.append(dataclasses.replace(spec, only=(*mine, *idle)))
        else:
            kept.append(raw)
    loads = [count * SERVER_COST for count in counts]
    return ShardTargets(kept, loads, frozenset(held), frozenset(elsewhere))


def _server_spec(raw: Any, base_dir: Path) -> TargetSpec | None:
    """The spec of a server target (MCP, HTTP, A2A, skills), else ``None``."""
    if not isinstance(raw, str):
        return None  # an object from the targets hook: a Python target
    try:
        spec = parse_target(raw, base_dir=base_dir)
    except TargetError:
        return None
    return None if spec.kind is TargetKind.PYTHON else spec


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
