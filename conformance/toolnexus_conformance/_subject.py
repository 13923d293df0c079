"""What a check looks at: a tool's declaration read once, safely and in bounded time.

Every attribute of a foreign tool the suites rely on is read here, in one bounded
pass per target (``_reading``): the declaration, the safety hints, how its code
runs, an http tool's method and what it offers through ``conformance_extra()``.
The static checks, the safety gate and the exploration judge these values instead
of reading the tool again, so a property that raises or never returns costs a
finding, not the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolnexus_ref import ToolAnnotations, annotations_of

from ._execution import code_on_loop, execute_is_async
from ._reading import Hung, NotRead, Raised, Step, read_bounded

__all__ = [
    "MISSING",
    "AttributeProblem",
    "TargetSubject",
    "ToolSubject",
    "extra_of",
    "extras_of",
    "hints_of",
    "read_subject",
    "read_subjects",
]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


#: The value of an attribute the tool does not have at all.
MISSING: Any = _Missing()


@dataclass(frozen=True, slots=True)
class AttributeProblem:
    """Reading an attribute went wrong; checks report it instead of crashing or hanging.

    ``kind`` says how: reading it ``raised`` (``error`` is ``Type: message``), it
    ``hung`` (did not return within the bound), or it was ``not-read`` because an
    earlier read of the same tool hung (``error`` says which).
    """

    attribute: str
    error: str
    kind: Literal["raised", "hung", "not-read"] = "raised"

    def __str__(self) -> str:
        if self.kind == "hung":
            return f"reading {self.attribute!r} {self.error}"
        if self.kind == "not-read":
            return f"{self.attribute!r} was not read: {self.error}"
        return f"reading {self.attribute!r} raised {self.error}"


_DECLARATION = ("name", "description", "input_schema", "source")


@dataclass(slots=True)
class ToolSubject:
    """A tool as the checks see it.

    Each declaration attribute is read once: a value, ``MISSING``, or an
    ``AttributeProblem`` when reading it raised or did not return. ``extra`` carries
    source-specific facts (an MCP tool's original name, its server, its output
    schema). The fields after it are what decides how the tool may be called, read
    in the same pass; ``None`` (``MISSING`` for ``http_method``) on a subject built
    without that pass, whose users then read the tool themselves.
    """

    tool: Any
    target: str
    name: Any
    description: Any
    input_schema: Any
    source: Any
    #: Display id, safe for node ids and reports even when ``name`` is broken.
    display_name: str
    #: Every tool name in the same target, this one included (for uniqueness).
    sibling_names: Sequence[Any] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: The safety hints (``annotations_of``), or ``ToolAnnotations.cannot_read(why)``
    #: when reading them raised, hung or never happened: never evidence of safety.
    hints: ToolAnnotations | None = None
    #: Whether ``execute`` is ``async def`` (false when it cannot be told).
    execute_async: bool | None = None
    #: Whether the tool's own code runs on the event loop (true when it cannot be told).
    on_loop: bool | None = None
    #: An http tool's ``method``, upper-cased; ``None`` when it has none or it cannot be read.
    http_method: Any = MISSING
    #: Where the tool is declared (file, first line), when the worker could tell.
    position: tuple[str, int] | None = None

    def attribute(self, name: str) -> Any:
        return getattr(self, name)


def hints_of(subject: ToolSubject) -> ToolAnnotations:
    """The tool's safety hints as read with its declaration (read now for a hand-built subject)."""
    return subject.hints if subject.hints is not None else annotations_of(subject.tool)


@dataclass(slots=True)
class TargetSubject:
    """A whole target, for checks that judge the source rather than one tool."""

    target: str
    tools: Sequence[ToolSubject]
    extra: Mapping[str, Any] = field(default_factory=dict)


# -- the steps of the bounded pass, in the order they are read -----------------------
def _attribute(name: str) -> Callable[[Any, dict[str, Any]], Any]:
    def read(tool: Any, values: dict[str, Any]) -> Any:
        return getattr(tool, name, MISSING)

    return read


def _hints(tool: Any, values: dict[str, Any]) -> ToolAnnotations:
    return annotations_of(tool)


def _execution(tool: Any, values: dict[str, Any]) -> tuple[bool, bool]:
    execute_async = execute_is_async(tool)
    return execute_async, code_on_loop(tool, values.get("source"), execute_async=execute_async)


def _http_method(tool: Any, values: dict[str, Any]) -> str | None:
    if values.get("source") != "http":
        return None  # only an http tool's method decides anything
    value = getattr(tool, "method", None)
    return value.upper() if isinstance(value, str) else None


def _extra(tool: Any, values: dict[str, Any]) -> Mapping[str, Any]:
    provider = getattr(type(tool), "conformance_extra", None)
    if not callable(provider):
        return {}
    value = provider(tool)
    return dict(value) if isinstance(value, Mapping) else {}


_STEPS: tuple[Step, ...] = (
    *((name, _attribute(name)) for name in _DECLARATION),
    ("annotations", _hints),
    ("execute", _execution),
    ("method", _http_method),
)
_EXTRA: Step = ("conformance_extra", _extra)


# -- what a step's outcome means -----------------------------------------------------
def _declared(attribute: str, value: Any) -> Any:
    if isinstance(value, Raised):
        return AttributeProblem(attribute, value.error)
    if isinstance(value, Hung):
        return AttributeProblem(attribute, str(value), "hung")
    if isinstance(value, NotRead):
        return AttributeProblem(attribute, str(value), "not-read")
    return value


def _hints_of(value: Any) -> ToolAnnotations:
    if isinstance(value, ToolAnnotations):
        return value
    if isinstance(value, Raised):
        return ToolAnnotations.cannot_read(f"reading them raised {value.error}")
    if isinstance(value, Hung):
        return ToolAnnotations.cannot_read(f"reading 'annotations' or a hint attribute {value}")
    return ToolAnnotations.cannot_read(f"they were not read: {value}")


def _extra_of(value: Any) -> Mapping[str, Any]:
    """A provider that raised, hung or returned junk offers nothing."""
    return value if isinstance(value, dict) else {}


def _declaration(values: dict[str, Any]) -> dict[str, Any]:
    return {attribute: _declared(attribute, values[attribute]) for attribute in _DECLARATION}


def _subject(
    tool: Any,
    values: dict[str, Any],
    declared: dict[str, Any],
    target: str,
    index: int,
    sibling_names: Sequence[Any],
    extra: Mapping[str, Any] | None,
) -> ToolSubject:
    name = declared["name"]
    display = name if isinstance(name, str) and str.strip(name) else f"tool[{index}]"
    execution = values["execute"]
    execute_async, on_loop = execution if isinstance(execution, tuple) else (False, True)
    method = values["method"]
    if extra is None:
        extra = _extra_of(values.get(_EXTRA[0]))
    return ToolSubject(
        tool=tool,
        target=target,
        display_name=display,
        sibling_names=sibling_names,
        extra=dict(extra),
        hints=_hints_of(values["annotations"]),
        execute_async=execute_async,
        on_loop=on_loop,
        http_method=method if method is None or isinstance(method, str) else None,
        **declared,
    )


# -- the entry points ----------------------------------------------------------------
def read_subject(
    tool: Any,
    target: str,
    *,
    index: int = 0,
    sibling_names: Sequence[Any] = (),
    extra: Mapping[str, Any] | None = None,
    limit: float | None = None,
) -> ToolSubject:
    """Read a tool's declaration once; never raises, never waits past ``limit`` per read.

    ``limit`` defaults to ``_reading.current_limit()`` (``ATTRIBUTE_LIMIT``). The
    tool's ``conformance_extra()`` is not called: pass ``extra`` (``extra_of``).
    """
    (values,) = read_bounded([tool], _STEPS, limit=limit)
    return _subject(tool, values, _declaration(values), target, index, sibling_names, extra or {})


def extras_of(tools: Sequence[Any], *, limit: float | None = None) -> list[Mapping[str, Any]]:
    """``extra_of`` for many tools, in one bounded pass."""
    if not any(_offers_extra(tool) for tool in tools):
        return [{} for _ in tools]
    return [_extra_of(values[_EXTRA[0]]) for values in read_bounded(tools, (_EXTRA,), limit=limit)]


def extra_of(tool: Any, *, limit: float | None = None) -> Mapping[str, Any]:
    """Source-specific facts a tool offers the checks through ``conformance_extra()``.

    An MCP tool tells its server's own name for the tool, its output schema and
    its connection; a tool whose method raises, returns junk or does not return
    within ``limit`` offers nothing.
    """
    return extras_of([tool], limit=limit)[0]


def _offers_extra(tool: Any) -> bool:
    """Whether the tool's class defines ``conformance_extra``, found without running its code."""
    return any("conformance_extra" in vars(cls) for cls in type(tool).__mro__)


def read_subjects(
    tools: Sequence[Any],
    target: str,
    extras: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    limit: float | None = None,
) -> list[ToolSubject]:
    """Subjects for every tool of a target, each knowing its siblings' names.

    All of them are read in one bounded pass: a read that makes no progress for
    ``limit`` seconds (``_reading.current_limit()`` when ``None``) is a finding for
    its tool, which is read no further; its neighbours are read as usual.
    """
    steps = _STEPS if extras is not None else (*_STEPS, _EXTRA)
    rows = read_bounded(tools, steps, limit=limit)
    declarations = [_declaration(values) for values in rows]
    names = [declared["name"] for declared in declarations]
    subjects = [
        _subject(
            tool,
            values,
            declarations[index],
            target,
            index,
            names,
            (extras[index] or {}) if extras is not None else None,
        )
        for index, (tool, values) in enumerate(zip(tools, rows, strict=True))
    ]
    # Two broken names must not share one display id.
    seen: dict[str, int] = {}
    for subject in subjects:
        count = seen.get(subject.display_name, 0)
        seen[subject.display_name] = count + 1
        if count:
            subject.display_name = f"{subject.display_name}#{count + 1}"
    return subjects
