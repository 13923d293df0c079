"""Description checks (TN20x), including a 10 MB description."""

from __future__ import annotations

from typing import Any

import pytest
from _conformance_helpers import Plain, failed, passed


@pytest.mark.parametrize("code", ["TN201", "TN202", "TN203"])
def test_a_good_description_passes(code: str) -> None:
    assert passed(code, Plain(description="Search the web.\nReturns\tthe top hits.\r\n"))


@pytest.mark.parametrize(
    ("value", "shown"),
    [("", "empty"), ("  \n", "whitespace"), (None, "NoneType"), (["a"], "list")],
)
def test_blank_or_non_string(value: Any, shown: str) -> None:
    assert shown in failed("TN201", Plain(description=value))


def test_raising_description() -> None:
    class Raising(Plain):
        @property
        def description(self) -> str:  # type: ignore[override]
            raise ValueError("no catalog")

        @description.setter
        def description(self, value: str) -> None:
            pass

    assert "ValueError: no catalog" in failed("TN201", Raising())
    assert "see TN201" in failed("TN202", Raising())


def test_long_description_warns_at_1025() -> None:
    assert passed("TN202", Plain(description="x" * 1024))
    assert "1,025 characters" in failed("TN202", Plain(description="x" * 1025))


def test_ten_megabyte_description_gets_verdicts() -> None:
    huge = Plain(description="word " * 2_000_000)
    assert "10,000,000" in failed("TN202", huge)
    assert passed("TN203", huge)
    assert passed("TN201", huge)


@pytest.mark.parametrize(
    ("char", "code"),
    [
        ("\x1b", "U+001B"),
        ("\x00", "U+0000"),
        ("\u200b", "U+200B"),
        ("\u202e", "U+202E"),
        ("\ufeff", "U+FEFF"),
    ],
)
def test_control_and_invisible_characters(char: str, code: str) -> None:
    message = failed("TN203", Plain(description=f"Read a file.{char} Then more."))
    assert code in message
    assert "offset 12" in message
