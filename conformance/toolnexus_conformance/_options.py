"""How much the suites may do to a tool: examples, grace periods, what may be executed."""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from ._reading import ATTRIBUTE_LIMIT

__all__ = [
    "PROVIDERS",
    "ExecuteMode",
    "Provider",
    "RunOptions",
    "ToolArguments",
    "ToolSettings",
    "providers_named",
]


class ExecuteMode(StrEnum):
    """``auto`` calls only tools that are safe to call; ``all`` calls every tool; ``none`` none."""

    AUTO = "auto"
    ALL = "all"
    NONE = "none"


class Provider(StrEnum):
    """A provider, and the mode of it, that tool declarations are sent to.

    Each names one profile of provider checks: ``openai`` (function calling, TN40x),
    ``openai-strict`` (the same plus strict mode's schema rules, TN41x), ``anthropic``
    (TN42x), ``gemini`` (the name and the ``parameters`` field, TN430-431) and
    ``gemini-json-schema`` (the name and ``parametersJsonSchema``, TN430 and TN432).
    """

    OPENAI = "openai"
    OPENAI_STRICT = "openai-strict"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    GEMINI_JSON_SCHEMA = "gemini-json-schema"


#: Every provider name, in the order the docs list them.
PROVIDERS: tuple[str, ...] = tuple(p.value for p in Provider)


def providers_named(names: str | Iterable[str]) -> frozenset[Provider]:
    """The providers for ``names`` (or one comma-separated string), case-insensitive.

    An unknown name is a ``ValueError`` that lists the known ones.
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    chosen: set[Provider] = set()
    for raw in names:
        name = str(raw).strip().lower()
        try:
            chosen.add(Provider(name))
        except ValueError:
            raise ValueError(
                f"unknown provider {raw!r}; known providers: {', '.join(PROVIDERS)}"
            ) from None
    return frozenset(chosen)


@dataclass(frozen=True, slots=True)
class ToolArguments:
    """Arguments a user gives for one tool, tried before the generated ones.

    A tool that needs a real path, id or key is otherwise judged almost only on its
    error path. Plain data, so it crosses into the process that calls the tool.
    """

    #: Whole argument objects, each called as given.
    examples: tuple[Mapping[str, Any], ...] = ()
    #: Values per top-level property, mixed into that property's generated stream.
    values: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """What a user set for one tool, or for every tool a glob names (``RunOptions.tools``).

    Plain data, so it crosses into the process that calls the tool with the rest of
    the options. ``None`` leaves the run's own setting in force.
    """

    #: ``True``: call it whatever ``execute`` and its hints say; ``False``: never call it.
    call: bool | None = None
    #: Its own bound on a single call, instead of ``RunOptions.call_timeout``.
    call_timeout: float | None = None
    #: Checks not run on it: codes, code prefixes, categories or slugs.
    ignore: tuple[str, ...] = ()


def _matching(keys: Iterable[str], target: str, name: str) -> list[str]:
    """The keys naming the tool (its name or ``target::name``, as globs): in order, exact last."""
    qualified = f"{target}::{name}"
    found = [k for k in keys if fnmatch.fnmatchcase(name, k) or fnmatch.fnmatchcase(qualified, k)]
    return sorted(found, key=lambda k: k in (name, qualified))


@dataclass(frozen=True, slots=True)
class RunOptions:
    #: Warnings fail, and invalid arguments accepted by a tool become errors.
    strict: bool = False
    execute: ExecuteMode = ExecuteMode.AUTO
    #: Tool names (exact, or ``target::name``) that ``auto`` may call anyway.
    allow: frozenset[str] = field(default_factory=frozenset)
    #: Hypothesis examples per property.
    examples: int = 10
    #: Examples past ``examples`` that a tool answering fast gets, for as long as its
    #: stream has spent under ``live._search.DEPTH_TIME``: about what a dedicated fuzzer
    #: spends on one tool, for the bug no edge value reaches. 0 for a quick run: the
    #: floor and every edge value, nothing more.
    depth: int = 100
    #: How long past a cancel or a deadline a tool may take to return.
    grace: float = 1.0
    #: Bound on any single call to a tool that is not about cancellation or deadlines.
    #: Long enough that a tool which takes ten seconds and then answers is not a finding.
    call_timeout: float = 30.0
    #: Wall-clock budget of one property's search: once spent, the remaining examples
    #: are not called, so a tool that takes seconds per call costs seconds per check,
    #: not ``examples`` times that. Every call still has its own bound.
    search_budget: float = 5.0
    #: Seed for argument generation; ``None`` lets hypothesis choose (or its profile).
    seed: int | None = None
    #: Tools explored at once. Each tool's calls stay in order unless it is marked
    #: read-only; different tools (and different tools of one MCP session) overlap.
    concurrency: int = 16
    #: Where hypothesis keeps failing examples: ``None`` is the user's profile,
    #: ``False`` keeps none, a path is a directory database there.
    example_database: Path | Literal[False] | None = None
    #: Where live checks run; a fresh folder per call when ``None``.
    scratch_root: Path | None = None
    #: The providers the tools are shipped to (names from ``PROVIDERS``, kept as a
    #: frozenset of ``Provider``). Their profiles' refusals are errors and the other
    #: profiles do not run. ``None``, the default, declares nothing: every profile runs
    #: as a warning, OpenAI strict mode and Gemini ``parameters`` only when selected.
    providers: Collection[str] | None = None
    #: The user's arguments per tool, keyed as ``allow`` is: a tool name or
    #: ``target::name``, either of which may be a glob (``fnmatch``).
    arguments: Mapping[str, ToolArguments] = field(default_factory=dict)
    #: Targets whose processes run in a sandbox that holds (no network, nothing
    #: writable outside their scratch): ``auto`` may call their tools that are not
    #: marked read-only, since what they can change is their own scratch.
    contained: Collection[str] = field(default_factory=frozenset)
    #: Folders the sandbox gives its processes as writable copies
    #: (``--toolnexus-writable-copy``): there a server may create and change files.
    writable_copies: Collection[Path] = ()
    #: Variables the user passes to the processes the kit starts (``--toolnexus-env``),
    #: beside the allowlist: a server that fails for want of another was not given it.
    passed_variables: Collection[str] = ()
    #: The user's settings per tool, keyed as ``arguments`` is; a tool gets every
    #: matching key's, in order, exact keys last (``settings_for``).
    tools: Mapping[str, ToolSettings] = field(default_factory=dict)
    #: ``settings_for``'s answers: it is asked once per live check of a tool, and
    #: matching globs is not free. Not an argument, so ``replace`` starts it afresh.
    _settings_cache: dict[tuple[str, str], ToolSettings] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def settings_for(self, target: str, name: str) -> ToolSettings:
        """The tool's settings: every matching key's, a later ``call`` or timeout winning."""
        found = self._settings_cache.get((target, name))
        if found is None:
            found = self._settings_cache[(target, name)] = self._settings(target, name)
        return found

    def _settings(self, target: str, name: str) -> ToolSettings:
        call: bool | None = None
        timeout: float | None = None
        ignore: list[str] = []
        for key in _matching(self.tools, target, name):
            given = self.tools[key]
            call = given.call if given.call is not None else call
            timeout = given.call_timeout if given.call_timeout is not None else timeout
            ignore.extend(given.ignore)
        return ToolSettings(call, timeout, tuple(dict.fromkeys(ignore)))

    def for_tool(self, target: str, name: str) -> RunOptions:
        """The options one tool is explored with: the run's, with its own call timeout."""
        if not self.tools:
            return self
        timeout = self.settings_for(target, name).call_timeout
        if timeout is None or timeout == self.call_timeout:
            return self
        return replace(self, call_timeout=timeout)

    def arguments_for(self, target: str, name: str) -> ToolArguments:
        """The user's arguments for a tool, every matching key merged (exact keys last)."""
        examples: list[Mapping[str, Any]] = []
        values: dict[str, tuple[Any, ...]] = {}
        qualified = f"{target}::{name}"
        for key in sorted(self.arguments, key=lambda k: (k in (name, qualified), k)):
            if not (fnmatch.fnmatchcase(name, key) or fnmatch.fnmatchcase(qualified, key)):
                continue
            given = self.arguments[key]
            examples.extend(given.examples)
            for prop, more in given.values.items():
                values[prop] = (*values.get(prop, ()), *more)
        return ToolArguments(tuple(examples), values)

    @property
    def attribute_limit(self) -> float:
        """How long one read of a tool's declaration may go without returning.

        ``_reading.ATTRIBUTE_LIMIT`` (5 s), or the call timeout when that is shorter:
        an attribute is never given longer than a whole call.
        """
        return min(ATTRIBUTE_LIMIT, self.call_timeout)

    def __post_init__(self) -> None:
        if self.providers is not None:  # names are accepted, and checked, here
            object.__setattr__(self, "providers", providers_named(self.providers))
