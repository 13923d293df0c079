"""Requests and transcripts snapshot as structured data that does not depend on which
tests ran before: the same under ``-k``, another order and ``-n 2``."""

from __future__ import annotations

import json

import pytest

PLUGIN = ("-p", "pytest_toolnexus._llm_fixtures", "-p", "no:cacheprovider")

TEST = """
import asyncio, pytest
from pytest_toolnexus.fakes import text, tool_calls
from toolnexus_ref import tool
from toolnexus_ref.host import run_loop

@tool
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

def _run(fake_llm, n):
    fake_llm.script(tool_calls(("add", {"a": n, "b": 1}), ("add", {"a": 1, "b": n})), text("done"))
    return asyncio.run(run_loop(fake_llm, [add], f"add {n}"))

@pytest.fixture
def anyio_backend():
    return "asyncio"
"""

BODIES = {
    name: f"""
def test_{name}(fake_llm, toolnexus_snapshot):
    transcript = _run(fake_llm, {n})
    assert fake_llm.to_data() == toolnexus_snapshot(name="requests")
    assert transcript == toolnexus_snapshot(name="transcript")
"""
    for n, name in enumerate(["first", "second", "third"], 1)
}


def _write(pytester: pytest.Pytester, order: list[str]) -> None:
    pytester.makepyfile(test_agent=TEST + "".join(BODIES[n] for n in order))


def test_snapshots_hold_under_k_reordering_and_xdist(pytester: pytest.Pytester) -> None:
    _write(pytester, ["first", "second", "third"])
    pytester.runpytest(*PLUGIN, "--snapshot-update").assert_outcomes(passed=3)
    stored = sorted(pytester.path.glob("__snapshots__/**/*.json"))
    assert len(stored) == 6
    data = json.loads(
        next(p for p in stored if "second" in p.name and "requests" in p.name).read_text()
    )
    ids = [c["id"] for c in data["requests"][1]["messages"][1]["tool_calls"]]
    assert ids == ["call_1", "call_2"]  # per fake, not per process
    pytester.runpytest(*PLUGIN, "-k", "second or third").assert_outcomes(passed=2)
    _write(pytester, ["third", "second", "first"])
    pytester.runpytest(*PLUGIN).assert_outcomes(passed=3)
    pytester.runpytest(*PLUGIN, "-p", "xdist", "-n", "2").assert_outcomes(passed=3)
