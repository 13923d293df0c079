"""The corpus tools that end, freeze or leave their process, as one target per module.

Judged together in one worker (``test_corpus_live``): each still gets a process of its
own, so each verdict is its own, and the run pays one worker's start, not one per tool.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "bad"))

import live_process
import live_sandbox

live_process_tools = [
    live_process.exits_zero,
    live_process.exits_three,
    live_process.segfaults,
    live_process.holds_the_gil,
    live_process.freezes_the_clock,
    live_process.kills_its_worker,
    live_process.memory_bomb,
]
live_sandbox_tools = [live_sandbox.writes_outside]
