"""--toolnexus-providers / toolnexus_providers: the providers the tools ship to, in real sessions."""

from __future__ import annotations

import json
import re

import pytest
from toolnexus_conformance import PROVIDERS as PROVIDER_NAMES

from pytest_toolnexus._options import (
    CONFORMANCE,
    ONLY,
    PROVIDERS,
    REPORT,
    TARGET,
    providers_from,
    read_settings,
)

BASE = ["-p", "no:cacheprovider", CONFORMANCE, ONLY, "--toolnexus-execute", "none"]
TOOLS = """
from toolnexus_ref import BaseTool


class NineLives(BaseTool):
    name = "9lives"  # fine for the contract, OpenAI and Anthropic; Gemini wants a letter first
    description = "Counts the lives a cat has left."
    input_schema = {
        "type": "object",
        "properties": {"cat": {"type": "string", "description": "The cat's name."}},
        "required": ["cat"],
        "additionalProperties": False,
    }

    def run(self, args, ctx):
        return 9


tools = [NineLives()]
"""
TARGET_ARGS = [TARGET, "provtools:tools"]
_CODE = re.compile(r"::(TN4\d\d)-")


@pytest.fixture
def provtools(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(provtools=TOOLS)
    pytester.syspathinsert()
    return pytester


def _collected(pytester: pytest.Pytester, *args: str) -> set[str]:
    result = pytester.runpytest(*BASE, *TARGET_ARGS, *args, "--collect-only", "-q")
    return {m.group(1) for line in result.outlines if (m := _CODE.search(line))}


def test_help_lists_the_option_and_every_name(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines([f"*{PROVIDERS}=NAMES*"])
    text = " ".join(result.stdout.str().split())
    assert all(name in text for name in PROVIDER_NAMES)


@pytest.mark.parametrize(
    ("args", "ini"),
    [([PROVIDERS, "openai,gemni"], ""), ([], "[pytest]\ntoolnexus_providers = openai gemni\n")],
)
def test_an_unknown_provider_is_a_usage_error_that_lists_the_known_ones(
    provtools: pytest.Pytester, args: list[str], ini: str
) -> None:
    if ini:
        provtools.makeini(ini)
    result = provtools.runpytest(*BASE, *TARGET_ARGS, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*{PROVIDERS}*unknown providers: gemni; known providers: {', '.join(PROVIDER_NAMES)}*"]
    )


def test_settings_from_the_command_line_and_the_ini(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig(PROVIDERS, "OpenAI,gemini", PROVIDERS, "anthropic,openai")
    settings = read_settings(config)
    assert settings.providers == ("openai", "gemini", "anthropic")
    assert providers_from(settings) == {"providers": frozenset({"openai", "gemini", "anthropic"})}

    pytester.makeini("[pytest]\ntoolnexus_providers = gemini-json-schema\n")
    assert read_settings(pytester.parseconfig()).providers == ("gemini-json-schema",)
    assert read_settings(pytester.parseconfig(PROVIDERS, "openai-strict")).providers == (
        "openai-strict",
    )


def test_nothing_declared_gives_no_keyword(pytester: pytest.Pytester) -> None:
    settings = read_settings(pytester.parseconfig())
    assert settings.providers is None
    assert providers_from(settings) == {}


def test_without_a_declaration_the_profiles_are_as_before(provtools: pytest.Pytester) -> None:
    """Every profile but the opt-in ones, as warnings: a Gemini refusal does not fail the run."""
    collected = _collected(provtools)
    assert collected == {
        "TN401",
        "TN402",
        "TN403",
        "TN404",
        "TN420",
        "TN421",
        "TN422",
        "TN430",
        "TN432",
    }
    result = provtools.runpytest(*BASE, *TARGET_ARGS, REPORT, "report.json")
    assert result.ret == pytest.ExitCode.OK
    rows = json.loads((provtools.path / "report.json").read_text())["results"]
    gemini = next(r for r in rows if r["check"] == "TN430")
    assert (gemini["outcome"], gemini["severity"]) == ("failed", "warning")


def test_a_declared_providers_refusal_is_an_error(provtools: pytest.Pytester) -> None:
    result = provtools.runpytest(*BASE, *TARGET_ARGS, PROVIDERS, "gemini", REPORT, "report.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*9lives::TN430-gemini-name*"])
    rows = json.loads((provtools.path / "report.json").read_text())["results"]
    gemini = next(r for r in rows if r["check"] == "TN430")
    assert (gemini["outcome"], gemini["severity"]) == ("failed", "error")


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ("openai", {"TN401", "TN402", "TN403", "TN404"}),
        ("anthropic", {"TN420", "TN421", "TN422"}),
        ("gemini", {"TN430", "TN431"}),
        ("gemini-json-schema", {"TN430", "TN432"}),
        (
            "openai-strict",
            {"TN401", "TN402", "TN403", "TN404", "TN410", "TN411", "TN412", "TN413", "TN414"},
        ),
    ],
)
def test_undeclared_profiles_are_not_collected(
    provtools: pytest.Pytester, declared: str, expected: set[str]
) -> None:
    assert _collected(provtools, PROVIDERS, declared) == expected


def test_the_ini_key_declares_too(provtools: pytest.Pytester) -> None:
    provtools.makeini("[pytest]\ntoolnexus_providers = openai anthropic\n")
    assert _collected(provtools) == {"TN401", "TN402", "TN403", "TN404", "TN420", "TN421", "TN422"}
    result = provtools.runpytest(*BASE, *TARGET_ARGS)
    assert result.ret == pytest.ExitCode.OK  # 9lives is fine for both
