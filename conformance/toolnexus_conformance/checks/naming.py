"""Naming checks (TN10x): the name a model calls a tool by, and the source it declares.

The source check lives here, in the ``naming`` category: a tool's name and its
source are its identity, the two facts a host reads before anything else, to
route a call and to decide which safety rules apply.

For an MCP tool they judge the server's own name (``own_name``), never the prefix
this kit puts before it (``server_tool``, with the server's label sanitized):
another host prefixes differently or not at all. The prefixed name's length is
TN153's, and the server's name against the contract's characters is TN151's.
Uniqueness (TN104) is of the exposed names: the prefix only ever separates two
servers' names, and two names of one server that collide once sanitized
(``read.file``, ``read_file``) do collide for a host.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

from toolnexus_conformance._model import Category, Finding, Severity, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import MISSING, AttributeProblem, ToolSubject
from toolnexus_ref._naming import MAX_NAME_LENGTH, SOURCES

from ._walk import describe_value, text_attribute

__all__ = [
    "mcp_original_name",
    "name_charset",
    "name_is_string",
    "name_length",
    "name_unique",
    "own_name",
    "source_known",
]

_OUTSIDE = re.compile(r"[^a-zA-Z0-9_-]")
_CONTRACT = (
    "Tool contract, name (toolnexus_ref._naming.NAME_PATTERN); openai-python "
    "types/shared_params/function_definition.py (FunctionDefinition.name); Anthropic "
    "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use "
    "(name: ^[a-zA-Z0-9_-]{1,64}$)"
)


def _name(subject: ToolSubject) -> str:
    return text_attribute(subject, "name", "TN101")


def mcp_original_name(subject: ToolSubject) -> str | None:
    """An MCP tool's name as its server declares it; ``None`` for any other tool."""
    if subject.source != "mcp":
        return None
    try:
        original = subject.extra.get("original_name", getattr(subject.tool, "original_name", None))
    except Exception:  # a hostile property: the checks judge the name itself
        return None
    return original if isinstance(original, str) else None


def own_name(subject: ToolSubject) -> str:
    """The name the tool's author chose: an MCP server's own name, else the tool's name.

    Raises ``Unusable`` (pointing at TN101) when there is none to read.
    """
    original = mcp_original_name(subject)
    return original if original is not None else _name(subject)


@check(
    "TN101",
    "name-is-string",
    title="The name is a non-empty string",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="The model calls a tool by its name; a tool without a readable string name cannot be "
    "offered to any model, and hosts that read it crash or drop the tool.",
    fix="Give the tool a `name` attribute holding a non-empty `str`, and make sure reading it "
    "returns at once and never raises.",
    reference=_CONTRACT,
)
def name_is_string(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    value = subject.name
    if value is MISSING:
        yield Finding("the tool has no `name` attribute", path="name")
    elif isinstance(value, AttributeProblem):
        yield Finding(f"the name cannot be read: {value}", path="name")
    elif not isinstance(value, str):
        yield Finding(f"the name is {describe_value(value)}, not a str", path="name")
    elif not value:
        yield Finding("the name is the empty string", path="name")


@check(
    "TN102",
    "name-charset",
    title="The name uses only [a-zA-Z0-9_-]",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="OpenAI and Anthropic reject a request whose tool name has any other character "
    "(a dot, a space, a slash, a non-ASCII letter) with a 400, so one such tool breaks every "
    "call that offers it.",
    fix="Rename the tool, or pass the name through `toolnexus_ref.sanitize`, which replaces "
    "every other character with `_`.",
    reference=_CONTRACT,
)
def name_charset(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    name = own_name(subject)
    bad = sorted(set(_OUTSIDE.findall(name)))
    if bad:
        shown = ", ".join(repr(c) for c in bad[:8])
        if mcp_original_name(subject) is not None:
            raise Skip(
                f"the MCP server names the tool {name[:80]!r}, with {shown}; reported once,"
                " as TN151 mcp-name-contract (a warning: the MCP specification allows more"
                " characters than the providers do)"
            )
        yield Finding(
            f"the name {name[:80]!r} contains characters outside [a-zA-Z0-9_-]: {shown}",
            path="name",
        )


@check(
    "TN103",
    "name-length",
    title=f"The name is at most {MAX_NAME_LENGTH} characters",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="OpenAI and Anthropic refuse names longer than 64 characters; prefixed MCP names "
    "(server + '_' + tool) are the usual way to cross the limit in production. For an MCP "
    "tool the overlong name is reported once, as TN153, which names the server prefix.",
    fix="Shorten the name (or the server prefix) to 64 characters or fewer; do not truncate "
    "silently, since two truncated names can collide.",
    reference=_CONTRACT,
)
def name_length(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    name = _name(subject)
    if len(name) > MAX_NAME_LENGTH:
        if _judged_by_tn153(subject):
            raise Skip(
                f"the name is over {MAX_NAME_LENGTH} characters; reported once, as TN153"
                " mcp-prefixed-length, which names the server prefix and the tool"
            )
        yield Finding(
            f"the name is {len(name)} characters long, over the limit of {MAX_NAME_LENGTH}"
            f" ({name[:40]!r}...)",
            path="name",
        )


def _judged_by_tn153(subject: ToolSubject) -> bool:
    """An MCP tool whose server-side name is known: TN153 reports its length, better."""
    return mcp_original_name(subject) is not None


@check(
    "TN104",
    "name-unique",
    title="The name is unique within its target",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="A model picks a tool by name: two tools with one name make every call to that name "
    "ambiguous, and providers reject a request that declares a function twice.",
    fix="Rename one of the tools, or prefix names by their source (as MCP tools are: "
    "`server_tool`).",
    reference="Tool contract, name: unique within a toolkit (toolnexus_ref toolkit refuses duplicates)",
)
def name_unique(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    name = _name(subject)
    count = _name_counts(subject.sibling_names).get(str.__str__(name), 0)
    if count > 1:
        yield Finding(
            f"{count} tools in target {subject.target!r} are named {name[:80]!r}", path="name"
        )


#: The name counts of the last few targets. Every subject of a target shares one
#: ``sibling_names`` sequence, so counting it once per target (not once per tool) keeps
#: TN104 linear in the number of tools. Held by identity, with the sequence itself, so a
#: recycled ``id`` can never match a new one.
_COUNTS: OrderedDict[int, tuple[Sequence[Any], Counter[str]]] = OrderedDict()
_COUNTS_KEPT = 4
_COUNTS_LOCK = threading.Lock()


def _name_counts(names: Sequence[Any]) -> Counter[str]:
    """How many tools bear each string name (a ``str`` subclass counts as its text)."""
    with _COUNTS_LOCK:
        cached = _COUNTS.get(id(names))
        if cached is not None and cached[0] is names:
            _COUNTS.move_to_end(id(names))
            return cached[1]
    counts = Counter(str.__str__(n) for n in names if isinstance(n, str))
    with _COUNTS_LOCK:
        _COUNTS[id(names)] = (names, counts)
        while len(_COUNTS) > _COUNTS_KEPT:
            _COUNTS.popitem(last=False)
    return counts


@check(
    "TN105",
    "source-known",
    title="The source is one of the seven source names",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="The source is part of a tool's identity, next to its name: hosts and these suites "
    "decide from it how a tool is named and which safety rules apply before calling it "
    "(an MCP or builtin tool may act on the world). An unknown source leaves that undecided.",
    fix=f"Set `source` to one of: {', '.join(sorted(SOURCES))} (`toolnexus_ref.Source`); use "
    "`custom` when none fits.",
    reference="Tool contract, source (toolnexus_ref._naming.Source)",
)
def source_known(subject: ToolSubject, options: RunOptions) -> Iterator[Finding]:
    value = subject.source
    if isinstance(value, str) and value in SOURCES:
        return
    if value is MISSING or isinstance(value, AttributeProblem):
        yield Finding(f"the source cannot be read: {describe_value(value)}", path="source")
    else:
        yield Finding(
            f"the source is {describe_value(value)}; expected one of {', '.join(sorted(SOURCES))}",
            path="source",
        )
