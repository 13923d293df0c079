"""What a check looks at: a tool's declaration read once, safely, plus where it came from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MISSING",
    "AttributeProblem",
    "TargetSubject",
    "ToolSubject",
    "extra_of",
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
    """Reading an attribute raised; checks report it instead of crashing collection."""

    attribute: str
    error: str

    def __str__(self) -> str:
        return f"reading {self.attribute!r} raised {self.error}"


_DECLARATION = ("name", "description", "input_schema", "source")


@dataclass(slots=True)
class ToolSubject:
    """A tool as the checks see it.

    Each declaration attribute is read once: a value, ``MISSING``, or an
    ``AttributeProblem`` when reading it raised. ``extra`` carries source-specific
    facts (an MCP tool's original name, its server, its output schema).
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

    def attribute(self, name: str) -> Any:
        return getattr(self, name)


@dataclass(slots=True)
class TargetSubject:
    """A whole target, for checks that judge the source rather than one tool."""

    target: str
    tools: Sequence[ToolSubject]
    extra: Mapping[str, Any] = field(default_factory=dict)


def _read(tool: Any, attribute: str) -> Any:
    try:
        return getattr(tool, attribute, MISSING)
    except BaseException as exc:  # a property that raises (even SystemExit) is a verdict
        return AttributeProblem(attribute, f"{type(exc).__name__}: {exc}")


def read_subject(
    tool: Any,
    target: str,
    *,
    index: int = 0,
    sibling_names: Sequence[Any] = (),
    extra: Mapping[str, Any] | None = None,
) -> ToolSubject:
    """Read a tool's declaration once; never raises, whatever the tool does."""
    values = {attribute: _read(tool, attribute) for attribute in _DECLARATION}
    name = values["name"]
    display = name if isinstance(name, str) and name.strip() else f"tool[{index}]"
    return ToolSubject(
        tool=tool,
        target=target,
        display_name=display,
        sibling_names=sibling_names,
        extra=dict(extra or {}),
        **values,
    )


def extra_of(tool: Any) -> Mapping[str, Any]:
    """Source-specific facts a tool offers the checks through ``conformance_extra()``.

    An MCP tool tells its server's own name for the tool, its output schema and
    its connection; a tool whose method raises or returns junk offers nothing.
    """
    provider = getattr(type(tool), "conformance_extra", None)
    if not callable(provider):
        return {}
    try:
        value = provider(tool)
    except BaseException:
        return {}
    return dict(value) if isinstance(value, Mapping) else {}


def read_subjects(
    tools: Sequence[Any], target: str, extras: Sequence[Mapping[str, Any] | None] | None = None
) -> list[ToolSubject]:
    """Subjects for every tool of a target, each knowing its siblings' names."""
    names = [_read(tool, "name") for tool in tools]
    subjects = []
    for index, tool in enumerate(tools):
        extra = extras[index] if extras is not None else extra_of(tool)
        subjects.append(read_subject(tool, target, index=index, sibling_names=names, extra=extra))
    # Two broken names must not share one display id.
    seen: dict[str, int] = {}
    for subject in subjects:
        count = seen.get(subject.display_name, 0)
        seen[subject.display_name] = count + 1
        if count:
            subject.display_name = f"{subject.display_name}#{count + 1}"
    return subjects
