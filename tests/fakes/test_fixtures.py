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


def test_xfail_with_the_strict_fixture_is_just_xfail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from pytest_toolnexus.fakes import text

        @pytest.mark.xfail(reason="known bug", strict=True)
        def test_known_bug(fake_llm):
            fake_llm.script(text("unused"))
            assert False
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=1)


def test_provider_checks_marker_and_unplanned_request_body(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import openai, pytest
        from pytest_toolnexus.fakes import text

        BAD = [{"role": "user", "content": "hi"},
               {"role": "tool", "tool_call_id": "nope", "content": "1"}]

        @pytest.mark.toolnexus_llm(provider_checks=False)
        def test_lenient(fake_llm, fake_llm_respx):
            fake_llm.script(text("fine"))
            client = openai.OpenAI(api_key="k", max_retries=0)
            client.chat.completions.create(model="m", messages=BAD)

        def test_refused(fake_llm, fake_llm_respx):
            fake_llm.script(text("never"))
            client = openai.OpenAI(api_key="k", max_retries=0)
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="m", messages=BAD)

        def test_unplanned(fake_llm, fake_llm_respx):
            fake_llm.script(text("one"))
            client = openai.OpenAI(api_key="k", max_retries=0)
            ask = [{"role": "user", "content": "first"}]
            client.chat.completions.create(model="m", messages=ask)
            with pytest.raises(openai.BadRequestError) as info:
                client.chat.completions.create(model="m", messages=ask)
            assert "Requests so far:" in info.value.message
            assert "#1 openai: user 'first' | tools: none -> text \\"one\\"" in info.value.message
            fake_llm.strict = False
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*request #1 was refused as the provider would (tool_result_without_call)*",
            "*provider_checks=False*",
        ]
    )
    assert "_core.py" not in result.stdout.str()  # the plugin's own frames are hidden


def test_one_loopback_server_serves_each_tests_fake(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import httpx, pytest
        from pytest_toolnexus.fakes import text

        servers = []

        @pytest.mark.parametrize("n", range(3))
        def test_each(fake_llm, fake_llm_server, fake_llm_loopback, n):
            servers.append(fake_llm_loopback)
            fake_llm.script(text(f"reply {n}"))
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            with httpx.Client() as http:
                r = http.post(fake_llm_server.openai_base_url + "/chat/completions", json=body)
            assert r.json()["choices"][0]["message"]["content"] == f"reply {n}"
            assert r.http_version == "HTTP/1.1"
            assert len(set(map(id, servers))) == 1
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)


def test_the_marker_replays_a_cassette(pytester: pytest.Pytester) -> None:
    from pytest_toolnexus.fakes import Cassette, text
    from toolnexus_ref.wire import Message, Request

    cassette = Cassette()
    cassette.add(Request("m", (Message("user", "hi"),)), text("recorded hello"))
    cassette.save(pytester.path / "hello.yaml")
    pytester.makepyfile(
        """
        import openai, pytest

        @pytest.mark.toolnexus_llm(cassette="hello.yaml")
        def test_replayed(fake_llm, fake_llm_respx):
            client = openai.OpenAI(api_key="k", max_retries=0)
            done = client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hello there"}]
            )
            assert done.choices[0].message.content == "recorded hello"
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_forgotten_transport_fixture_is_named_in_the_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import openai
        from pytest_toolnexus.fakes import text

        def test_forgot(fake_llm):
            fake_llm.script(text("hi"))
            client = openai.OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1", max_retries=0)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])

        def test_served(fake_llm, fake_llm_server):
            fake_llm.script(text("hi"))
            assert False, "fails for another reason"
        """
    )
    result = pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*Connection error*", "*fake_llm received no request*"])
    assert result.stdout.str().count("fake_llm received no request") == 1
