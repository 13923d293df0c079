"""The fixtures, tested the way users load them: in pytester runs."""

from __future__ import annotations

import pytest

PLUGIN = ("-p", "pytest_toolnexus._llm_fixtures")


def test_unused_scripted_turn_fails_with_a_clear_message(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio
        from pytest_toolnexus.fakes import text, tool_calls
        from toolnexus_ref.host import run_loop

        def test_agent(fake_llm):
            fake_llm.script(text("hello"), tool_calls(("add", {"a": 1})))
            transcript = asyncio.run(run_loop(fake_llm, [], "hi"))
            assert transcript.final_text == "hello"
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*FakeLLM: 1 planned reply never served.",
            "*Expected but never served:",
            '*#2: tool calls: add({"a": 1})',
            "*Requests received (1):",
            "*#1 inprocess: user 'hi' | tools: none -> text \"hello\"",
            "*@pytest.mark.toolnexus_llm(strict=False)*",
        ]
    )


def test_request_after_the_script_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import asyncio, pytest
        from pytest_toolnexus.fakes import text
        from toolnexus_ref.host import run_loop, ProviderRequestError

        def test_agent(fake_llm):
            fake_llm.script(text("one"))
            asyncio.run(run_loop(fake_llm, [], "a"))
            with pytest.raises(ProviderRequestError):
                asyncio.run(run_loop(fake_llm, [], "b"))
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*1 request(s) after the plan ran out*", "*#2 inprocess: user 'b'*"]
    )


def test_marker_relaxes_and_misspelt_option_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from pytest_toolnexus.fakes import text

        @pytest.mark.toolnexus_llm(strict=False)
        def test_relaxed(fake_llm):
            fake_llm.script(text("never used"))

        @pytest.mark.toolnexus_llm(strikt=False)
        def test_typo(fake_llm):
            pass
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", "--strict-markers")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*got unknown options*strikt*"])


def test_a_failing_test_is_not_buried_under_verify(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from pytest_toolnexus.fakes import text

        def test_fails(fake_llm):
            fake_llm.script(text("unused"))
            assert 1 == 2
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)


def test_server_respx_and_context_fixtures(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx
        from pytest_toolnexus.fakes import text

        def test_server(fake_llm, fake_llm_server):
            fake_llm.script(text("via server"))
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            r = httpx.post(fake_llm_server.openai_base_url + "/chat/completions", json=body)
            assert r.json()["choices"][0]["message"]["content"] == "via server"

        def test_respx(fake_llm, fake_llm_respx):
            fake_llm.script(text("via respx"))
            body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
            r = httpx.post("https://api.anthropic.com/v1/messages", json=body)
            assert r.json()["content"][0]["text"] == "via respx"

        def test_context(tool_context):
            assert not tool_context.is_cancelled()
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_tool_context_is_cancelled_at_teardown(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        seen = []

        def test_first(tool_context):
            seen.append(tool_context)
            assert not tool_context.is_cancelled()

        def test_second():
            assert seen[0].is_cancelled()
            assert seen[0].cancel_reason == "test finished"
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
