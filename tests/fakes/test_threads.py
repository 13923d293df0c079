"""Anthropic message threads: the SDK's ``tool_runner`` with its defaults creates a
server-held thread, then sends only each new turn; the fake rebuilds the whole
conversation, and refuses a continue from a reply it never served as the API does."""

from __future__ import annotations

from types import ModuleType

import pytest
from _installed import skip_unless_installed

from pytest_toolnexus.fakes import FakeLLM, text, tool_calls

skip_unless_installed("anthropic")


@pytest.fixture(scope="module")
def anthropic() -> ModuleType:
    """The anthropic SDK, imported when a test here first runs rather than at collection."""
    return pytest.importorskip("anthropic")


def _tool() -> object:
    from anthropic import beta_tool

    @beta_tool
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    return add


def test_tool_runner_continues_a_thread(anthropic: ModuleType) -> None:
    fake = FakeLLM(
        [
            tool_calls(("add", {"a": 2, "b": 3})),
            tool_calls(("add", {"a": 5, "b": 1})),
            text("It is 6."),
        ]
    )
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-x",
            max_tokens=100,
            system="Be brief.",
            tools=[_tool()],
            messages=[{"role": "user", "content": "2 + 3 + 1?"}],
        )
        final = list(runner)[-1]
    assert final.content[0].text == "It is 6."
    fake.verify()
    sent = [r.raw.get("thread") for r in fake.requests]
    assert sent == [
        {"type": "create"},
        {"type": "continue", "previous_message_id": "msg_fake1"},
        {"type": "continue", "previous_message_id": "msg_fake2"},
    ]
    # only the new turn went over the wire (after the held reply it answers, which
    # the fake puts in front for the provider's checks), without system prompt or tools
    assert [m["role"] for m in fake.requests[2].raw["messages"]] == ["assistant", "user"]
    assert "tools" not in fake.requests[2].raw
    # the fake saw the whole conversation, its tools and every result by name
    last = fake.last_request
    assert [m.role for m in last.messages] == [
        "system", "user", "assistant", "tool", "assistant", "tool",
    ]  # fmt: skip
    assert [t.name for t in last.tools] == ["add"]
    assert [r.output for r in last.tool_results] == ["5", "6"]
    fake.assert_tool_called("add", {"a": 5, "b": 1})


def test_a_continue_from_an_unknown_reply_is_refused_as_the_api_does(anthropic: ModuleType) -> None:
    fake = FakeLLM([text("never")])
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        with pytest.raises(anthropic.NotFoundError) as info:
            client.beta.messages.create(
                model="claude-x",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                thread={"type": "continue", "previous_message_id": "msg_nowhere"},
            )
    assert info.value.body["error"]["details"] == {"error_code": "thread_not_found"}
    assert [rule for _, rule, _ in fake.refusals] == ["thread_not_found"]
    with pytest.raises(AssertionError, match="thread_not_found"):
        fake.verify()


def test_a_reply_without_a_thread_cannot_be_continued(anthropic: ModuleType) -> None:
    fake = FakeLLM([text("one"), text("two")])
    with fake.respx():
        client = anthropic.Anthropic(api_key="x", max_retries=0)
        first = client.messages.create(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
        with pytest.raises(anthropic.NotFoundError):
            client.beta.messages.create(
                model="claude-x",
                max_tokens=10,
                messages=[{"role": "user", "content": "again"}],
                thread={"type": "continue", "previous_message_id": first.id},
            )
    fake.strict = False
