"""``may_execute``: what ``auto`` calls, what it skips, and that the skip says how to allow."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._safety import may_execute
from toolnexus_conformance._subject import read_subject

from toolnexus_ref import ToolAnnotations


class _Tool:
    description = "d"
    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}

    def __init__(
        self, source: str, annotations: ToolAnnotations | None = None, **extra: Any
    ) -> None:
        self.name = "t"
        self.source = source
        self.annotations = annotations
        self.__dict__.update(extra)

    def execute(self, args: Any, ctx: Any = None) -> Any:
        raise AssertionError("never called here")


READ_ONLY = ToolAnnotations(read_only=True)
DESTRUCTIVE = ToolAnnotations(read_only=True, destructive=True)
AUTO = RunOptions()


@pytest.mark.parametrize(
    ("tool", "allowed"),
    [
        (_Tool("native"), True),
        (_Tool("custom"), True),
        (_Tool("skill"), True),
        (_Tool("mcp"), False),
        (_Tool("mcp", ToolAnnotations(read_only=False)), False),
        (_Tool("mcp", READ_ONLY), True),
        (_Tool("mcp", DESTRUCTIVE), False),
        (_Tool("builtin"), False),
        (_Tool("builtin", READ_ONLY), True),
        (_Tool("http", method="GET"), True),
        (_Tool("http", method="get"), True),
        (_Tool("http", method="POST"), False),
        (_Tool("http"), False),
        (_Tool("native", ToolAnnotations(destructive=True)), False),
        (_Tool("custom", ToolAnnotations(destructive=False)), True),
    ],
    ids=lambda v: (
        repr(v) if isinstance(v, bool) else f"{v.source}-{v.annotations}-{getattr(v, 'method', '')}"
    ),
)
def test_auto_calls_only_safe_tools(tool: _Tool, allowed: bool) -> None:
    reason = may_execute(read_subject(tool, "tgt"), AUTO)
    assert (reason is None) is allowed
    if reason is not None:
        assert "--toolnexus-execute all" in reason
        assert "toolnexus_allow" in reason


def test_the_reason_says_why() -> None:
    reason = may_execute(read_subject(_Tool("http", method="DELETE"), "tgt"), AUTO)
    assert reason is not None
    assert "DELETE" in reason
    assert "not GET" in reason


@pytest.mark.parametrize("name", ["t", "tgt::t"])
def test_allow_list_lets_auto_call_a_named_tool(name: str) -> None:
    subject = read_subject(_Tool("mcp"), "tgt")
    assert may_execute(subject, RunOptions(allow=frozenset({name}))) is None
    assert may_execute(subject, RunOptions(allow=frozenset({"other::t"}))) is not None


def test_all_calls_everything_and_none_calls_nothing() -> None:
    risky = read_subject(_Tool("mcp", ToolAnnotations(destructive=True)), "tgt")
    harmless = read_subject(_Tool("native"), "tgt")
    assert may_execute(risky, RunOptions(execute=ExecuteMode.ALL)) is None
    reason = may_execute(harmless, RunOptions(execute=ExecuteMode.NONE))
    assert reason is not None
    assert "static checks only" in reason


def test_a_method_attribute_that_raises_means_not_called() -> None:
    class Hostile(_Tool):
        @property
        def method(self) -> str:
            raise RuntimeError("boom")

    assert may_execute(read_subject(Hostile("http"), "tgt"), AUTO) is not None
