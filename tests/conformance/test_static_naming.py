"""Naming checks (TN10x) on ordinary and hostile tools."""

from __future__ import annotations

from typing import Any

import pytest
from _conformance_helpers import Plain, failed, passed
from hypothesis import given
from hypothesis import strategies as st
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import RunOptions

from toolnexus_ref import is_valid_name


class RaisingName(Plain):
    @property
    def name(self) -> str:  # type: ignore[override]
        raise RuntimeError("boom")

    @name.setter
    def name(self, value: str) -> None:
        pass


@pytest.mark.parametrize("code", ["TN101", "TN102", "TN103", "TN104", "TN105"])
def test_a_good_tool_passes(code: str) -> None:
    assert passed(code, Plain())


def test_missing_name() -> None:
    class NoName:
        description = "x"

    assert "no `name`" in failed("TN101", NoName())


def test_a_name_property_that_raises_is_a_verdict_for_every_name_check() -> None:
    assert "RuntimeError: boom" in failed("TN101", RaisingName())
    for code in ("TN102", "TN103", "TN104", "TN401", "TN420", "TN430"):
        assert "see TN101" in failed(code, RaisingName())


@pytest.mark.parametrize(
    ("value", "shown"), [(42, "int 42"), (None, "NoneType"), (b"x", "bytes"), ("", "empty")]
)
def test_a_name_that_is_not_a_non_empty_str(value: Any, shown: str) -> None:
    assert shown in failed("TN101", Plain(name=value))


def test_charset_lists_the_offending_characters() -> None:
    message = failed("TN102", Plain(name="get weather/now"))
    assert "' '" in message
    assert "'/'" in message


def test_length_limit_is_64() -> None:
    assert passed("TN103", Plain(name="a" * 64))
    assert "65 characters" in failed("TN103", Plain(name="a" * 65))


def test_unique_within_target() -> None:
    assert "2 tools" in failed("TN104", Plain(name="dup"), siblings=(Plain(name="dup"),))
    assert passed("TN104", Plain(name="one"), siblings=(Plain(name="two"), Plain(name=3)))


@pytest.mark.parametrize("source", ["mcp", "skill", "builtin", "a2a", "native", "http", "custom"])
def test_every_source_name_passes(source: str) -> None:
    assert passed("TN105", Plain(source=source))


@pytest.mark.parametrize("source", ["plugin", "MCP", None, 7])
def test_unknown_sources_fail(source: Any) -> None:
    assert "expected one of" in failed("TN105", Plain(source=source))


@given(st.text(max_size=80))
def test_charset_and_length_agree_with_the_reference_rule(name: str) -> None:
    from _conformance_helpers import verdict
    from toolnexus_conformance._model import Outcome

    outcomes = {
        code: verdict(code, Plain(name=name)).outcome for code in ("TN101", "TN102", "TN103")
    }
    all_pass = all(o is Outcome.PASSED for o in outcomes.values())
    assert all_pass == is_valid_name(name)


class _CountingNames(list[Any]):
    """A sibling-name list that counts how often it is walked."""

    walks = 0

    def __iter__(self) -> Any:
        type(self).walks += 1
        return super().__iter__()


def test_uniqueness_counts_the_names_of_a_target_once() -> None:
    """TN104 is linear: 200 tools of one target walk the shared name list once, not 200 times."""
    from toolnexus_conformance._registry import load_catalog
    from toolnexus_conformance._runner import run_check
    from toolnexus_conformance._subject import read_subject

    names = _CountingNames([f"tool_{i}" for i in range(199)] + ["tool_0"])
    _CountingNames.walks = 0
    check = load_catalog()["TN104"]
    verdicts = [
        run_check(check, read_subject(Plain(name=n), "t", sibling_names=names), RunOptions())
        for n in list.__iter__(names)
    ]
    assert _CountingNames.walks == 1
    failed = [v.tool for v in verdicts if v.outcome is Outcome.FAILED]
    assert failed == ["tool_0", "tool_0"]


def test_uniqueness_is_judged_per_target_even_for_equal_lists() -> None:
    assert "2 tools" in failed("TN104", Plain(name="a"), siblings=(Plain(name="a"),))
    assert passed("TN104", Plain(name="a"), siblings=(Plain(name="b"),))
    assert "2 tools" in failed("TN104", Plain(name="a"), siblings=(Plain(name="a"),))


def test_a_str_subclass_name_counts_as_its_text() -> None:
    class Sneaky(str):
        def __eq__(self, other: object) -> bool:
            return False

        __hash__ = str.__hash__

    assert "2 tools" in failed("TN104", Plain(name="dup"), siblings=(Plain(name=Sneaky("dup")),))
