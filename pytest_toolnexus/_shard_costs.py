"""What a shard plan weighs each tool by: the seconds a previous run's report measured.

Dealt out in turn, servers of very different cost leave one shard with the slow
ones: a shard cannot weigh a server before listing it. A report of an earlier run
(``--toolnexus-shard-costs REPORT``: a shard's, a merged one's, a serial run's)
knows: each live record carries ``seconds``, the time its tool's exploration took.
Every shard must cut alike, so every shard must read the same file; each says in
its report which costs it was cut by (``shard_costs``, a digest), and
``merge_reports`` refuses shards cut by different ones. A file that is missing or
is no report is said, and the shards are cut by count, as without one.

A tool's seconds are its own wall time, but a shard explores ``concurrency`` tools
at once: it lasts about its tools' seconds over that, or its longest tool,
whichever is longer (``Weight``). Summed, the seconds of a server of many quick
tools outweighed one whose single tool waits ten seconds, and the two heaviest
servers of four real ones went to one shard.

Imports only the standard library (and ``_units``, which does too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ._units import PREFIX

__all__ = ["SHARD_COSTS", "ShardCosts", "Weight", "place", "read_costs", "weight_of"]

SHARD_COSTS = "--toolnexus-shard-costs"


@dataclass(frozen=True, slots=True)
class ShardCosts:
    """The measured seconds of each tool, keyed as the units name them, and whence."""

    #: ``toolnexus:<target>::<tool>`` -> seconds; empty where none could be read.
    tools: Mapping[str, float] = field(default_factory=dict)
    #: What the shards' reports record (``shard_costs``): equal only for equal costs.
    digest: str = "none"
    #: Why no cost was read (the file is missing, or no report), for the header.
    problem: str = ""
    #: The file they were read from.
    source: str = ""

    def cut_by(self, concurrency: int) -> str:
        """What a shard's report records as having cut it (``shard_costs``): the costs'
        digest and the concurrency they are weighed at; ``"none"`` without costs."""
        return f"{self.digest}/{concurrency}" if self.tools else "none"

    def describe(self) -> str:
        """The report header's words for how this shard was cut."""
        if self.tools:
            return f"weighed by the seconds in {self.source} ({len(self.tools)} tools measured)"
        if self.problem:
            return f"dealt out in turn: {self.problem}"
        return "dealt out in turn"


def read_costs(path: Path) -> ShardCosts:
    """Each tool's seconds from the report at ``path`` (the most, where a tool has several)."""
    source = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ShardCosts(problem=f"{source} does not exist (a first run?)", source=source)
    except (OSError, ValueError) as exc:
        return ShardCosts(problem=f"{source} is not a readable JSON report: {exc}", source=source)
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list):
        return ShardCosts(problem=f"{source} is no toolnexus report (no results)", source=source)
    tools: dict[str, float] = {}
    for record in results:
        seconds = _seconds(record)
        if seconds is None:
            continue
        key = f"{PREFIX}{record['target']}::{record['tool']}"
        tools[key] = max(seconds, tools.get(key, 0.0))
    if not tools:
        return ShardCosts(problem=f"{source} records no tool's seconds", source=source)
    import hashlib  # only where a costs file is given: the plugin's import stays light

    canonical = json.dumps(sorted(tools.items()), separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return ShardCosts(tools, digest, source=source)


def _seconds(record: Any) -> float | None:
    if not isinstance(record, dict):
        return None
    seconds, target, tool = record.get("seconds"), record.get("target"), record.get("tool")
    if not isinstance(target, str) or not isinstance(tool, str) or tool == "*":
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        return None
    if not math.isfinite(seconds) or seconds < 0:  # json reads NaN and Infinity too
        return None
    return float(seconds)


class Weight(NamedTuple):
    """What a server (or a bundle of tools) adds to a shard, in seconds of wall time."""

    #: Its tools' seconds over the concurrency: the time they hold the shard's slots.
    work: float
    #: Its longest tool: no shard holding it ends sooner.
    span: float

    @property
    def alone(self) -> float:
        return max(self.work, self.span)


def weight_of(seconds: Sequence[float], concurrency: int, start: float = 0.0) -> Weight:
    """The weight of tools of these ``seconds``, explored ``concurrency`` at once, plus a
    ``start`` (a server's, its own wall time before its first tool)."""
    return Weight(start + sum(seconds) / max(1, concurrency), max(seconds, default=0.0))


def place(
    weights: Sequence[Weight], shards: int, held: Sequence[float] | None = None
) -> tuple[list[int], list[float]]:
    """Each weight's shard, and each shard's expected time: the heaviest first, each to
    the shard it would leave shortest (ties: the less worked, then the lower).

    A shard lasts its works' sum or its longest span, whichever is longer; ``held``:
    what each shard holds already (its time, as work). Deterministic: every shard
    computes the same from the same weights."""
    work = [float(h) for h in held] if held else [0.0] * shards
    span = [0.0] * shards
    owners = [0] * len(weights)
    for position in sorted(range(len(weights)), key=lambda p: (-weights[p].alone, p)):
        weight = weights[position]
        best = min(
            range(shards),
            key=lambda s: (max(work[s] + weight.work, span[s], weight.span), work[s], s),
        )
        owners[position] = best
        work[best] += weight.work
        span[best] = max(span[best], weight.span)
    return owners, [max(w, s) for w, s in zip(work, span, strict=True)]
