"""Tools of the upstream ``toolnexus`` package (0.21.0), which pins mcp<2.

Runs in an environment of its own (``.ci/run`` builds it: toolnexus==0.21.0 and this
project without the mcp extra); skipped where ``toolnexus`` is not installed.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("toolnexus")

from _kit import run_kit, shown
from toolnexus import create_builtin_tools
from toolnexus.types import Tool as TheirTool
from toolnexus.types import ToolResult as TheirResult

from toolnexus_ref import ToolContext, as_tools
from toolnexus_ref.adapters.upstream import UpstreamTool


def builtins() -> dict[str, Any]:
    return {t.name: t for t in as_tools(create_builtin_tools())}


def test_builtins_are_classified_so_auto_mode_calls_only_the_harmless_ones() -> None:
    tools = builtins()
    assert all(isinstance(t, UpstreamTool) for t in tools.values())
    for name in ("read", "grep", "glob", "todowrite"):
        assert tools[name].annotations.read_only is True, name
    for name in ("bash", "write", "edit", "apply_patch"):
        assert tools[name].annotations.read_only is False, name
        assert tools[name].annotations.destructive is True, name
    assert tools["webfetch"].annotations.open_world is True


@pytest.mark.anyio
async def test_their_context_is_driven_by_ours() -> None:
    seen: dict[str, Any] = {}

    async def execute(args: dict[str, Any], ctx: Any = None) -> TheirResult:
        seen["timeout"] = ctx.timeout
        seen["before"] = ctx.signal.is_set()
        await ctx.signal.wait()
        seen["after"] = (ctx.signal.is_set(), ctx.signal.aborted)
        return TheirResult(output="stopped", is_error=True)

    (adapted,) = as_tools(
        TheirTool("waits", "Waits for a cancel.", {"type": "object"}, "custom", execute)
    )
    ctx = ToolContext(timeout=30)
    asyncio.get_running_loop().call_later(0.05, ctx.cancel)
    result = await adapted.execute({}, ctx)
    assert result.output == "stopped"
    assert 0 < seen["timeout"] <= 30
    assert seen["before"] is False
    assert seen["after"] == (True, True)
    cancelled = ToolContext()
    cancelled.cancel("stop")
    early = await adapted.execute({}, cancelled)
    assert early.is_error
    assert "stop" in early.output


@pytest.mark.anyio
async def test_a_suspension_is_plain_data_and_an_answer_resumes_it() -> None:
    question = builtins()["question"]
    suspended = await question.execute({"questions": [{"question": "Which file?"}]}, ToolContext())
    assert suspended.is_error
    assert suspended.metadata["suspended"] is True
    pending = suspended.metadata["pending"]
    assert pending["kind"] == "question"
    json.dumps(suspended.metadata)  # JSON, as on the wire
    answer = {"id": pending["id"], "ok": True, "data": {"output": "README.md"}}
    resumed = await question.execute({"questions": []}, ToolContext(answer=answer))
    assert (resumed.is_error, json.loads(resumed.output)) == (False, {"output": "README.md"})


TOOLS = """
from pathlib import Path

from toolnexus import create_builtin_tools

# Confined to a folder of their own, as an agent would be given them: unconfined, grep
# and glob walk whatever path they are sent, synchronously in their event loop, and a
# generated path outside their folder can walk the whole machine (45 s once, right after
# a load test: TN501 "blocked the event loop"): a true finding, but one that depends on
# the machine, not the adapter.
HOME = {"base_dir": str(Path(__file__).resolve().parent / "home"), "confine_to_base_dir": True}
# webfetch is open-world: it would reach the internet, which tests must not do.
builtins = [t for t in create_builtin_tools(HOME) if t.name != "webfetch"]
"""


def test_through_the_plugin_builtins_give_real_verdicts_and_todowrite_is_found(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(up_plugin_tools=TOOLS)
    home = pytester.mkdir("home")
    (home / "notes.md").write_text("# notes\nthe builtins read, grep and glob here\n")
    run = run_kit(pytester, "up_plugin_tools:builtins")
    errors = run.failed(severity="error")
    assert not errors, shown(errors)
    for name in ("read", "grep", "glob", "todowrite"):
        assert {"TN501", "TN601", "TN603", "TN701"} <= set(run.live_passed(name)), name
    todowrite = [r for r in run.failed() if r["tool"] == "todowrite"]
    assert [r["check"] for r in todowrite] == ["TN604"]
    # The first invalid arguments it accepts: {} or a non-object, whichever came first.
    assert "reported success (is_error=False) for arguments" in todowrite[0]["message"]
    # Tools that act on the world are called under auto only where the sandbox holds:
    # there, all they can change is their own scratch folder.
    from toolnexus_conformance.process._sandbox import probe

    contained = probe().available
    for name in ("bash", "write", "edit", "apply_patch"):
        assert (run.outcomes(name)["TN601"] == "skipped") is not contained, name


@pytest.mark.anyio
async def test_an_upstream_skill_source_is_its_skill_tool(tmp_path: Any) -> None:
    from toolnexus import load_skills

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: notes\ndescription: Take notes.\n---\nWrite.\n")
    (adapted,) = as_tools(load_skills(str(tmp_path)))
    assert (adapted.name, adapted.source) == ("skill", "skill")
    loaded = await adapted.execute({"name": "notes"}, ToolContext())
    assert not loaded.is_error
    assert "Write." in loaded.output
