"""``may_execute``: what ``auto`` calls, what it skips, and that the skip says how to allow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import mcp_types
import pytest
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._safety import may_execute
from toolnexus_conformance._subject import read_subject, read_subjects
from toolnexus_conformance.corpus import Entry, load_corpus

from toolnexus_ref import ToolAnnotations, annotations_of

MARKERS = "TOOLNEXUS_CORPUS_MARKERS"


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


# -- hints in every form authors write them -------------------------------------------------
CORPUS_UNSAFE = Path(__file__).resolve().parents[2] / "conformance" / "corpus" / "unsafe"
UNSAFE = [entry for _, entry in load_corpus(CORPUS_UNSAFE)]
#: The bound on each read of an unsafe corpus tool (one's hints never return).
READ_LIMIT = 0.5


@pytest.fixture
def release_unsafe() -> Iterator[None]:
    """Lets go of the reads that never return once the test is over."""
    yield
    for entry in UNSAFE:
        if entry.release is not None:
            entry.release()


class _Hints:
    def __init__(self, **hints: Any) -> None:
        self.__dict__.update(hints)


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, ToolAnnotations()),
        (ToolAnnotations(read_only=True), ToolAnnotations(read_only=True)),
        ({"readOnlyHint": True, "title": "T"}, ToolAnnotations(read_only=True, title="T")),
        ({"destructive_hint": True}, ToolAnnotations(destructive=True)),
        (
            {"idempotent": True, "open_world": False},
            ToolAnnotations(idempotent=True, open_world=False),
        ),
        (_Hints(openWorldHint=True), ToolAnnotations(open_world=True)),
        (
            _Hints(read_only=True, destructive=False),
            ToolAnnotations(read_only=True, destructive=False),
        ),
        (
            mcp_types.ToolAnnotations(read_only_hint=True, destructive_hint=False, title="x"),
            ToolAnnotations(read_only=True, destructive=False, title="x"),
        ),
    ],
    ids=[
        "none",
        "ours",
        "mcp-dict",
        "snake-dict",
        "our-names-dict",
        "mcp-attrs",
        "our-attrs",
        "mcp-sdk",
    ],
)
def test_annotations_are_read_in_every_form(annotations: Any, expected: ToolAnnotations) -> None:
    assert annotations_of(_Tool("native", annotations)) == expected


def test_hints_on_the_tool_itself_and_the_less_safe_one_wins() -> None:
    tool = _Tool("native", ToolAnnotations(read_only=True, destructive=False))
    tool.destructiveHint = True  # type: ignore[attr-defined]
    hints = annotations_of(tool)
    assert hints.destructive is True
    assert hints.read_only is True


@pytest.mark.parametrize(
    ("annotations", "needle"),
    [
        ({"destructiveHint": "no"}, "destructiveHint = 'no', not true or false"),
        (_Hints(readOnlyHint=1), "readOnlyHint = 1, not true or false"),
    ],
)
def test_a_hint_that_is_not_a_boolean_cannot_be_read(annotations: Any, needle: str) -> None:
    hints = annotations_of(_Tool("native", annotations))
    assert not hints.readable
    assert hints.unreadable is not None
    assert needle in hints.unreadable
    assert hints == ToolAnnotations.cannot_read(hints.unreadable)


@pytest.mark.parametrize("entry", UNSAFE, ids=lambda e: e.tool.name)
def test_unsafe_corpus_tools_are_not_called_under_auto_and_the_reason_says_why(
    entry: Entry, release_unsafe: None
) -> None:
    reason = may_execute(read_subject(entry.tool, "tgt", limit=READ_LIMIT), AUTO)
    assert reason is not None, entry.note
    assert reason.startswith("not called under --toolnexus-execute auto: its ")
    assert "allow it with --toolnexus-execute all" in reason
    if "raises" in entry.note:
        assert "its safety hints cannot be read (" in reason
        assert "RuntimeError" in reason
    if "never returns" in entry.note:
        assert "its safety hints cannot be read (reading 'annotations' or a hint" in reason
        assert f"did not return within {READ_LIMIT:g}s" in reason


def test_an_open_world_tool_is_not_called_by_default() -> None:
    reason = may_execute(
        read_subject(_Tool("native", ToolAnnotations(open_world=True)), "tgt"), AUTO
    )
    assert reason is not None
    assert "its owner marked it open-world (openWorldHint" in reason
    assert "toolnexus_allow" in reason
    closed = ToolAnnotations(read_only=True, open_world=False)
    assert may_execute(read_subject(_Tool("mcp", closed), "tgt"), AUTO) is None


@pytest.mark.parametrize(
    ("mode", "called"), [(ExecuteMode.AUTO, False), (ExecuteMode.ALL, True)], ids=["auto", "all"]
)
def test_live_checks_never_call_the_unsafe_corpus_under_auto(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: ExecuteMode,
    called: bool,
    release_unsafe: None,
) -> None:
    """Marker files, not skip messages: under ``auto`` none is written; ``all`` proves the gate."""
    monkeypatch.setenv(MARKERS, str(tmp_path))
    tools = [entry.tool for entry in UNSAFE]
    options = RunOptions(execute=mode, examples=2, grace=0.5, call_timeout=2.0)
    verdicts = check_subjects(
        read_subjects(tools, "unsafe", limit=READ_LIMIT), "unsafe", select=["TN5"], options=options
    )
    assert verdicts
    written = sorted(p.name for p in tmp_path.glob("*.called"))
    if called:
        assert written == sorted(f"{t.name}.called" for t in tools)
    else:
        assert written == []
        assert all(v.outcome is Outcome.SKIPPED for v in verdicts)
        assert all("not called under --toolnexus-execute auto" in v.message for v in verdicts)
