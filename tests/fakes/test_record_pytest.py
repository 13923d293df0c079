"""Recording from pytest (``--toolnexus-record``) and replay that judges what it
serves: a LangGraph ReAct agent is recorded against a stand-in for the real API,
replayed offline, and replayed again after its tool was renamed, which must fail
naming the tool that vanished."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, FakeLLMServer, text, tool_calls

skip_unless_installed("langgraph", "langchain_openai")

PLUGIN = ("-p", "pytest_toolnexus._llm_fixtures", "-p", "no:cacheprovider")
KEY = "sk-live-do-not-write-me"

AGENT = """
import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import create_react_agent


@tool
def {name}(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b


@pytest.mark.toolnexus_llm(cassette="cassettes/agent.yaml", upstream="{upstream}")
def test_agent(fake_llm, fake_llm_server):
    model = ChatOpenAI(
        model="gpt-x", api_key="{key}", base_url=fake_llm_server.openai_base_url, max_retries=0
    )
    agent = create_react_agent(model, [{name}])
    out = agent.invoke({{"messages": [("user", "2 + 3?")]}})
    assert out["messages"][-1].content == "It is 5."
"""


@pytest.fixture(scope="module", autouse=True)
def _agent_libraries() -> None:
    """LangGraph and langchain-openai, imported when a test here first runs rather than at
    collection, and before pytester snapshots ``sys.modules``: each in-process run drops
    the modules it imported, so each would import them again."""
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain_openai")


@pytest.fixture
def real_api() -> Iterator[tuple[FakeLLM, FakeLLMServer]]:
    """A stand-in for the provider: it answers like the real API and checks the key."""
    api = FakeLLM([tool_calls(("add", {"a": 2, "b": 3})), text("It is 5.")])
    with api.serve() as server:
        yield api, server


def _write(pytester: pytest.Pytester, name: str, upstream: str) -> None:
    pytester.makepyfile(test_agent=AGENT.format(name=name, upstream=upstream, key=KEY))


def test_record_once_then_replay_then_a_renamed_tool_fails(
    pytester: pytest.Pytester, real_api: tuple[FakeLLM, FakeLLMServer]
) -> None:
    api, server = real_api
    _write(pytester, "add", server.url)
    # none (the default): no cassette yet, nothing recorded, a clear failure
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*no cassette at*record one first*"])
    # once: records through the real API, which saw the key; the cassette does not
    result = pytester.runpytest_inprocess(*PLUGIN, "--toolnexus-record=once")
    result.assert_outcomes(passed=1)
    api.verify()
    assert len(api.requests) == 2
    cassette = Path(pytester.path, "cassettes", "agent.yaml")
    written = cassette.read_text()
    assert KEY not in written
    assert "add(" in written
    # replay offline: the real API is not asked again
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(passed=1)
    assert len(api.requests) == 2
    # once, with the cassette there, replays too
    result = pytester.runpytest_inprocess(*PLUGIN, "--toolnexus-record=once")
    result.assert_outcomes(passed=1)
    assert len(api.requests) == 2
    # new_episodes: every turn matches the cassette, so nothing new is asked or written
    result = pytester.runpytest_inprocess(*PLUGIN, "--toolnexus-record=new_episodes")
    result.assert_outcomes(passed=1)
    assert len(api.requests) == 2
    assert cassette.read_text() == written
    # the agent's tool is renamed: the recorded call to `add` must not be served
    _write(pytester, "plus", server.url)
    result = pytester.runpytest_inprocess(*PLUGIN)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*tool_not_offered*Tool 'add' vanished from the agent*"])
    assert cassette.read_text() == written


def test_record_all_rewrites_and_a_failing_recording_keeps_the_old_cassette(
    pytester: pytest.Pytester, real_api: tuple[FakeLLM, FakeLLMServer]
) -> None:
    api, server = real_api
    _write(pytester, "add", server.url)
    cassette = Path(pytester.path, "cassettes", "agent.yaml")
    cassette.parent.mkdir()
    cassette.write_text("turns: []\n")
    result = pytester.runpytest_inprocess(*PLUGIN, "--toolnexus-record=all")
    result.assert_outcomes(passed=1)
    assert "add(" in cassette.read_text()
    # the real API now refuses (its script ran out): the test fails, the cassette stays
    before = cassette.read_text()
    result = pytester.runpytest_inprocess(*PLUGIN, "--toolnexus-record=all")
    result.assert_outcomes(failed=1)
    assert cassette.read_text() == before
    api.strict = False  # the second run's request past the script was the point
