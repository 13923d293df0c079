"""What a shard plan weighs each tool by: the seconds a previous run's report measured.

Dealt out in turn, servers of very different cost leave one shard with the slow
ones: a shard cannot weigh a server before listing it. A report of an earlier run
(``--toolnexus-shard-costs REPORT``: a shard's, a merged one's, a serial run's)
knows: each live record carries ``seconds``, the time its tool's exploration took.
Every shard must cut alike, so every shard must read the same file; each says in
its report which costs it was cut by (``shard_costs``, a digest), and
``merge_reports`` refuses shards cut by different ones. A file that is missing or
is no report is said, and the shards are cut by count, as without one.

Imports only the standard library.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SHARD_COSTS", "ShardCosts", "read_costs"]

SHARD_COSTS = "--toolnexus-shard-costs"
_PREFIX = "toolnexus:"


@dataclass(frozen=True, slots=True)
class ShardCosts:
    """The measured seconds of each tool, keyed as the units name them, and whence."""

    #: ``toolnexus:<target>::<tool>`` -> seconds; empty where none could be read.
    tools: Mapping[str, float] = field(default_factory=dict)
    #: What the shards' reports record (``shard_costs``): equal only for equal costs.
    digest: str = "none"
    #: Why no cost was read (the file is missing, or no report), for the header.
    problem: str = ""
    source: str = ""

    def describe(self) -> str:
        """The report header's words for how this shard was cut."""
        if self.tools:
            return f"balanced by the seconds measured in {self.source} ({len(self.tools)} tools)"
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
        key = f"{_PREFIX}{record['target']}::{record['tool']}"
        tools[key] = max(seconds, tools.get(key, 0.0))
    if not tools:
        return ShardCosts(problem=f"{source} records no tool's seconds", source=source)
    canonical = json.dumps(sorted(tools.items()), separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return ShardCosts(tools, digest, source=source)


def _seconds(record: Any) -> float | None:
    if not isinstance(record, dict):
        return None
    seconds, target, tool = record.get("seconds"), record.get("target"), record.get("tool")
    if not isinstance(target, str) or not isinstance(tool, str) or tool == "*":
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
        return None
    return float(seconds)
