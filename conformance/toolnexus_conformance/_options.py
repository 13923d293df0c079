"""How much the suites may do to a tool: examples, grace periods, what may be executed."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal

__all__ = ["ExecuteMode", "RunOptions"]


class ExecuteMode(StrEnum):
    """``auto`` calls only tools that are safe to call; ``all`` calls every tool; ``none`` none."""

    AUTO = "auto"
    ALL = "all"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class RunOptions:
    #: Warnings fail, and invalid arguments accepted by a tool become errors.
    strict: bool = False
    execute: ExecuteMode = ExecuteMode.AUTO
    #: Tool names (exact, or ``target::name``) that ``auto`` may call anyway.
    allow: frozenset[str] = field(default_factory=frozenset)
    #: Hypothesis examples per property.
    examples: int = 10
    #: How long past a cancel or a deadline a tool may take to return.
    grace: float = 1.0
    #: Bound on any single call to a tool that is not about cancellation or deadlines.
    #: Long enough that a tool which takes ten seconds and then answers is not a finding.
    call_timeout: float = 30.0
    #: Wall-clock budget of one property's search: once spent, the remaining examples
    #: are not called, so a tool that takes seconds per call costs seconds per check,
    #: not ``examples`` times that. Every call still has its own bound.
    search_budget: float = 5.0
    #: Seed for argument generation; ``None`` lets hypothesis choose (or its profile).
    seed: int | None = None
    #: Tools explored at once. Each tool's calls stay in order unless it is marked
    #: read-only; different tools (and different tools of one MCP session) overlap.
    concurrency: int = 16
    #: Where hypothesis keeps failing examples: ``None`` is the user's profile,
    #: ``False`` keeps none, a path is a directory database there.
    example_database: Path | Literal[False] | None = None
    #: Where live checks run; a fresh folder per call when ``None``.
    scratch_root: Path | None = None
