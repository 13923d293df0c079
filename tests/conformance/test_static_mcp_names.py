"""For MCP tools, the naming and provider name checks judge the server's name, not our prefix."""

from __future__ import annotations

from typing import Any

import pytest
from _conformance_helpers import Plain, failed, passed, verdict
from toolnexus_conformance._model import Outcome

from toolnexus_ref import sanitize

NAME_CHECKS = ("TN101", "TN102", "TN103", "TN104", "TN401", "TN420", "TN430")


class Remote(Plain):
    """A stand-in for an MCP tool: prefixed name, the server's own name in the extra facts."""

    def __init__(self, server: str, original: str) -> None:
        super().__init__(name=f"{sanitize(server)}_{sanitize(original)}", source="mcp")
        self.server_name = server
        self.original_name = original

    def conformance_extra(self) -> dict[str, Any]:
        return {"original_name": self.original_name, "server_name": self.server_name}


@pytest.mark.parametrize("code", NAME_CHECKS)
def test_a_server_labelled_by_its_address_trips_no_name_check(code: str) -> None:
    """'127_0_0_1_echo' starts with a digit; Gemini would refuse it, but it is our prefix."""
    tool = Remote("127.0.0.1", "echo")
    assert tool.name == "127_0_0_1_echo"
    assert passed(code, tool)


def test_the_same_name_on_a_tool_of_our_own_is_still_judged() -> None:
    assert "Gemini rejects the name '127_0_0_1_echo'" in failed(
        "TN430", Plain(name="127_0_0_1_echo")
    )


def test_provider_name_checks_judge_the_servers_own_name() -> None:
    message = failed("TN401", Remote("files", "read.file"))
    assert "OpenAI rejects the MCP tool name 'read.file'" in message
    assert verdict("TN401", Remote("files", "read.file")).findings[0].path == "original_name"
    assert "Anthropic rejects the MCP tool name" in failed("TN420", Remote("files", "read file"))
    assert "Gemini rejects the MCP tool name '9lives'" in failed("TN430", Remote("cats", "9lives"))


@pytest.mark.parametrize("code", ["TN401", "TN420", "TN430"])
def test_a_prefix_past_64_characters_is_not_a_provider_name_finding(code: str) -> None:
    """Only TN153 speaks of the prefixed length; the server's own name is short and valid."""
    tool = Remote("a-very-long-server-name-for-documents", "search_documents_by_full_text")
    assert len(tool.name) > 64
    assert passed(code, tool)
    assert "server prefix" in failed("TN153", tool)


def test_an_own_name_past_64_characters_is_a_provider_finding() -> None:
    assert "70 characters" in failed("TN401", Remote("s", "x" * 70))


def test_charset_defers_to_tn151_for_a_server_name() -> None:
    result = verdict("TN102", Remote("files", "read.file"))
    assert result.outcome is Outcome.SKIPPED
    assert "'read.file'" in result.message
    assert "TN151 mcp-name-contract" in result.message
    assert "MCP specification" in failed("TN151", Remote("files", "read.file"))
    assert "'.'" in failed("TN102", Plain(name="read.file"))


def test_length_still_defers_to_tn153_for_a_long_prefixed_name() -> None:
    result = verdict("TN103", Remote("warehouse", "t" * 60))
    assert result.outcome is Outcome.SKIPPED
    assert "TN153" in result.message


def test_an_mcp_tool_without_an_original_name_is_judged_by_its_name() -> None:
    tool = Plain(name="9lives", source="mcp")
    assert "Gemini rejects the name '9lives'" in failed("TN430", tool)


def test_an_original_name_that_raises_falls_back_to_the_name() -> None:
    class Hostile(Remote):
        def conformance_extra(self) -> dict[str, Any]:
            raise RuntimeError("boom")

        @property  # type: ignore[override]
        def original_name(self) -> str:
            raise RuntimeError("boom")

        @original_name.setter
        def original_name(self, value: str) -> None:
            pass

    tool = Hostile("127.0.0.1", "echo")
    assert "Gemini rejects the name '127_0_0_1_echo'" in failed("TN430", tool)


def test_uniqueness_is_of_the_exposed_names() -> None:
    """Two servers may both have 'echo'; only names that collide once exposed clash."""
    assert passed("TN104", Remote("a", "echo"), siblings=(Remote("b", "echo"),))
    # 'read.file' and 'read_file' of one server collide once sanitized: a host sees one name
    assert "2 tools" in failed(
        "TN104", Remote("s", "read.file"), siblings=(Remote("s", "read_file"),)
    )
