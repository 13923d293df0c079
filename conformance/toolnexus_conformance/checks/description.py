"""Description checks (TN20x): the text a model reads to decide when and how to call a tool."""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import MISSING, AttributeProblem, ToolSubject

from ._walk import describe_value, text_attribute

__all__ = [
    "LONG_DESCRIPTION",
    "description_control_characters",
    "description_length",
    "description_present",
]

#: Past this many characters a description is "very long" (see TN202's why).
LONG_DESCRIPTION = 1024

#: C0/C1 controls other than tab, newline and carriage return; bidi overrides and
#: isolates; zero-width characters and the BOM. All are invisible to a human reviewer.
_HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


@check(
    "TN201",
    "description-present",
    title="The description is a non-blank string",
    category=Category.DESCRIPTION,
    severity=Severity.ERROR,
    why="The description is all a model knows about what a tool does and when to use it; "
    "without one the model guesses from the name, and calls the wrong tool or none.",
    fix="Set `description` to a `str` that says what the tool does, when to use it and what it "
    "returns (for function tools, the docstring's first paragraph).",
    reference="Tool contract, description; MCP 2025-11-25 Tool.description",
)
def description_present(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    value = subject.description
    if value is MISSING:
        yield Finding("the tool has no `description` attribute", path="description")
    elif isinstance(value, AttributeProblem):
        yield Finding(f"the description cannot be read: {value}", path="description")
    elif not isinstance(value, str):
        yield Finding(f"the description is {describe_value(value)}, not a str", path="description")
    elif not value.strip():
        yield Finding(
            "the description is empty" if not value else "the description is only whitespace",
            path="description",
        )


@check(
    "TN202",
    "description-length",
    title=f"The description is at most {LONG_DESCRIPTION} characters",
    category=Category.DESCRIPTION,
    severity=Severity.WARNING,
    why="Every tool description is sent with every request: a very long one costs context "
    "and money on each turn, dilutes the model's attention across tools, and some hosts "
    f"and gateways cut descriptions short (about {LONG_DESCRIPTION} characters is a common "
    "cut-off), losing whatever came last.",
    fix="Keep the description to what the tool does and when to use it; move argument details "
    "into each property's `description` in the schema, and long guidance into a skill or docs.",
)
def description_length(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    text = text_attribute(subject, "description", "TN201")
    if len(text) > LONG_DESCRIPTION:
        yield Finding(
            f"the description is {len(text):,} characters long (over {LONG_DESCRIPTION:,})",
            path="description",
        )


@check(
    "TN203",
    "description-control-characters",
    title="The description has no control or invisible characters",
    category=Category.DESCRIPTION,
    severity=Severity.WARNING,
    why="Control characters garble logs and terminals and some providers reject them; "
    "invisible ones (zero-width, bidirectional overrides) hide text from the human who "
    "reviews a tool while the model still reads it, the trick behind tool-poisoning attacks.",
    fix="Remove the characters (tab, newline and carriage return are fine); if they came from "
    "a third-party server, treat that server's tools as untrusted.",
)
def description_control_characters(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    text = text_attribute(subject, "description", "TN201")
    match = _HIDDEN.search(text)
    if match is not None:
        count = len(_HIDDEN.findall(text))
        yield Finding(
            f"the description contains {count} control or invisible character(s); the first "
            f"is U+{ord(match.group()):04X} at offset {match.start()}",
            path="description",
        )
