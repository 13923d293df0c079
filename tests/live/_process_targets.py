"""The corpus tools that end, freeze or leave their process, as one target per module.

Judged together in one worker (``test_corpus_live``): each still gets a process of its
own, so each verdict is its own, and the run pays one worker's start, not one per tool.
The corpus modules are loaded from their files: the corpus folder holds modules named
like the standard library's (``http.py``), so it never goes on ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

_BAD = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "bad"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, _BAD / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


live_process = _load("live_process")
live_sandbox = _load("live_sandbox")

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
