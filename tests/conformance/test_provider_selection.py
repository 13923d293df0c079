"""Provider profiles chosen by the user: declared ones are errors, the others do not run."""

from __future__ import annotations

from typing import Any

import pytest
from _conformance_helpers import Plain
from toolnexus_conformance import PROVIDERS, Provider, RunOptions
from toolnexus_conformance._model import Category, Outcome, Severity
from toolnexus_conformance._registry import (
    for_providers,
    load_catalog,
    selected,
    with_providers,
)
from toolnexus_conformance._runner import run_check
from toolnexus_conformance._subject import read_subjects

#: What each declared provider runs: its profile, and nothing else of the provider checks.
EXPECTED = {
    "openai": {"TN401", "TN402", "TN403", "TN404"},
    "openai-strict": {
        "TN401",
        "TN402",
        "TN403",
        "TN404",
        "TN410",
        "TN411",
        "TN412",
        "TN413",
        "TN414",
    },
    "anthropic": {"TN420", "TN421", "TN422"},
    "gemini": {"TN430", "TN431"},
    "gemini-json-schema": {"TN430", "TN432"},
}


def _provider_codes(checks: Any) -> set[str]:
    return {c.code for c in checks if c.info.category is Category.PROVIDER}


def test_the_names_are_stable() -> None:
    assert PROVIDERS == ("openai", "openai-strict", "anthropic", "gemini", "gemini-json-schema")
    assert [p.value for p in Provider] == list(PROVIDERS)


def test_no_declaration_changes_nothing() -> None:
    catalog = list(load_catalog())
    assert all(for_providers(c, None) is c for c in catalog)
    assert with_providers(catalog, None) == catalog


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_declared_provider_runs_its_profile_as_errors(provider: str) -> None:
    checks = with_providers(load_catalog(), [provider])
    assert _provider_codes(checks) == EXPECTED[provider]
    for c in checks:
        if c.info.category is Category.PROVIDER:
            assert c.info.severity is Severity.ERROR
            assert not c.info.opt_in  # the strict and parameters profiles run unselected
            assert selected(c.info)


def test_providers_combine() -> None:
    checks = with_providers(load_catalog(), ["anthropic", "gemini-json-schema"])
    assert _provider_codes(checks) == EXPECTED["anthropic"] | EXPECTED["gemini-json-schema"]


def test_checks_of_the_contract_are_never_touched() -> None:
    catalog = list(load_catalog())
    kept = {c.code: c for c in with_providers(catalog, ["openai"])}
    for c in catalog:
        if c.info.category is not Category.PROVIDER:
            assert kept[c.code] is c


def test_every_provider_check_belongs_to_a_profile() -> None:
    for c in load_catalog():
        if c.info.category is Category.PROVIDER:
            assert c.providers, c.code
            assert c.providers <= set(PROVIDERS), c.code


def test_ignore_still_removes_a_declared_check() -> None:
    checks = with_providers(load_catalog(), ["openai"])
    kept = {c.code for c in checks if selected(c.info, (), ["TN404"])}
    assert "TN404" not in kept
    assert "TN401" in kept


def test_a_declared_refusal_reaches_the_verdict_as_an_error() -> None:
    subject = read_subjects([Plain(name="9lives")], "t")[0]
    gemini = load_catalog()["TN430"]
    default = run_check(gemini, subject, RunOptions())
    declared_check = for_providers(gemini, ["gemini"])
    assert declared_check is not None
    declared = run_check(declared_check, subject, RunOptions(providers=["gemini"]))
    assert default.outcome is declared.outcome is Outcome.FAILED
    assert default.severity is Severity.WARNING
    assert declared.severity is Severity.ERROR
    assert declared.as_record()["severity"] == "error"


def test_run_options_take_names_and_check_them() -> None:
    assert RunOptions().providers is None
    assert RunOptions(providers=["OpenAI", " gemini "]).providers == {
        Provider.OPENAI,
        Provider.GEMINI,
    }
    assert RunOptions(providers="anthropic,openai-strict").providers == {
        Provider.ANTHROPIC,
        Provider.OPENAI_STRICT,
    }
    assert RunOptions(providers=[]).providers == frozenset()
    with pytest.raises(ValueError, match="unknown provider 'opnai'; known providers: openai, "):
        RunOptions(providers=["opnai"])


def test_an_empty_declaration_runs_no_provider_check() -> None:
    assert _provider_codes(with_providers(load_catalog(), [])) == set()
