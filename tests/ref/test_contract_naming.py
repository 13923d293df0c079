"""sanitize and the name rule: the vectors, and properties over any text."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from toolnexus_ref import SOURCES, Source, is_valid_name, sanitize

VECTORS = json.loads(
    (Path(__file__).parents[2] / "conformance" / "vectors" / "sanitize.json").read_text(
        encoding="utf-8"
    )
)
ALLOWED = frozenset(string.ascii_letters + string.digits + "_-")
NAME_RULE = re.compile(r"[a-zA-Z0-9_-]+")


def test_the_vector_file_is_big_enough_and_unique() -> None:
    inputs = [case["input"] for case in VECTORS["cases"]]
    assert len(inputs) >= 20
    assert len(set(inputs)) == len(inputs)


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda case: case["note"])
def test_sanitize_vectors(case: dict[str, Any]) -> None:
    assert sanitize(case["input"]) == case["expected"]


def test_emoji_rules_stated_in_the_contract() -> None:
    assert sanitize("\U0001f680") == "_"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert sanitize(family) == "_" * len(family) == "_____"


@given(st.text())
@example("\U0001f468\u200d\U0001f469\u200d\U0001f467")
@example("e\u0301")
def test_sanitize_is_idempotent(value: str) -> None:
    once = sanitize(value)
    assert sanitize(once) == once


@given(st.text(min_size=1))
@example("\U00020000")
@example(" ")
def test_sanitize_output_matches_the_name_rule_code_point_for_code_point(value: str) -> None:
    out = sanitize(value)
    assert NAME_RULE.fullmatch(out)
    assert len(out) == len(value)
    for before, after in zip(value, out, strict=True):
        assert after == (before if before in ALLOWED else "_")


@given(st.text(min_size=1, max_size=64))
def test_sanitized_names_up_to_64_code_points_are_valid(value: str) -> None:
    assert is_valid_name(sanitize(value))


@pytest.mark.parametrize("bad", ["", "a" * 65, "a b", "é", None, 3, b"abc"])
def test_is_valid_name_refuses(bad: object) -> None:
    assert is_valid_name(bad) is False


def test_source_names() -> None:
    assert {"mcp", "skill", "builtin", "a2a", "native", "http", "custom"} == SOURCES
    assert Source("mcp") is Source.MCP
