"""Running checks: one verdict per check and subject, whatever the tool or the check does.

Static checks read the subject. Live checks read the tool's ``Observation``: the
runner asks ``Explorations`` for it, which explores the tool (and the rest of its
target) once. Whether a tool may be called at all is decided here, before any
exploration, so a run that calls nothing stays as cheap as a static one.
"""

from __future__ import annotations

import functools
import inspect
import time
import types
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeGuard

from ._model import Fail, Finding, KitFailure, NotCalled, Outcome, Scope, Skip, Verdict
from ._options import ExecuteMode, RunOptions
from ._registry import Check, load_catalog, selected, with_providers
from ._safety import may_execute
from ._subject import TargetSubject, ToolSubject, read_subjects
from .live._explorations import Explorations, Judges
from .live._loop import BackgroundLoop, LoopBlocked

__all__ = [
    "applicable_checks",
    "applies",
    "as_tool_list",
    "calls_tools",
    "check_subjects",
    "check_tools",
    "plan",
    "run_check",
]

#: A safety net over a custom check that returns an awaitable.
ASYNC_CHECK_LIMIT = 120.0


def applicable_checks(
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    *,
    scope: Scope | None = None,
    providers: Collection[str] | None = None,
) -> list[Check]:
    """Catalog checks after the declared ``providers`` and ``select``/``ignore``, in order."""
    return [
        c
        for c in with_providers(load_catalog(), providers)
        if selected(c.info, select, ignore) and (scope is None or c.info.scope is scope)
    ]


def calls_tools(select: Sequence[str], ignore: Sequence[str], options: RunOptions) -> bool:
    """Whether any selected check calls tools: if none does, nothing is warmed for calls."""
    if options.execute is ExecuteMode.NONE:
        return False
    selected = applicable_checks(select, ignore, providers=options.providers)
    return any(c.info.live for c in selected)


def applies(check: Check, subject: ToolSubject | TargetSubject) -> bool:
    """Whether a source-specific check concerns this subject at all.

    A check for MCP tools is not collected for a native tool, rather than skipped:
    a skip says "could not judge", and there is nothing here to judge.
    """
    sources = check.info.sources
    if not sources:
        return True
    if isinstance(subject, ToolSubject):
        return subject.source in sources
    present = {t.source for t in subject.tools} | set(subject.extra.get("sources", ()))
    return bool(present & sources)


def plan(
    explorations: Judges, subject: ToolSubject, checks: Iterable[Check], *, group: str
) -> None:
    """Tell ``explorations`` what the live ``checks`` will read of this tool."""
    live = [c for c in checks if c.info.live and applies(c, subject)]
    if live:
        explorations.plan(
            subject,
            {phase for c in live for phase in c.needs},
            {c.code for c in live},
            group=group,
        )


def _mask(text: str) -> str:
    """Every credential the kit expanded, masked: no verdict carries one."""
    mask = _masker()
    return mask(text) if mask is not None else text


def _masking() -> bool:
    """Whether any credential is registered: with none, masking changes no text."""
    registered = _registered()
    return registered is None or registered()


@functools.cache
def _registered() -> Callable[[], bool] | None:
    try:
        from toolnexus_ref import secrets
    except ImportError:  # pragma: no cover - a reference without the secrets registry
        return None
    return secrets.registered


@functools.cache
def _masker() -> Callable[[str], str] | None:
    try:
        from toolnexus_ref import secrets
    except ImportError:  # pragma: no cover - a reference without the secrets registry
        return None
    return secrets.mask


@dataclass(slots=True)
class _Explored:
    """What a live check's verdict tells of the tool's exploration, once it was explored."""

    calls: int | None = None
    seconds: float | None = None


def _verdict(
    subject: ToolSubject | TargetSubject,
    check: Check,
    outcome: Outcome,
    message: str = "",
    findings: tuple[Finding, ...] = (),
    duration: float = 0.0,
    explored: _Explored | None = None,
    kit_failure: bool = False,
    not_called: bool = False,
) -> Verdict:
    tool = subject.display_name if isinstance(subject, ToolSubject) else "*"
    if _masking():
        message = _mask(message)
        findings = tuple(replace(f, message=_mask(f.message)) for f in findings)
    return Verdict(
        subject.target,
        tool,
        check.info,
        outcome,
        message,
        findings,
        duration,
        calls=explored.calls if explored else None,
        seconds=explored.seconds if explored else None,
        kit_failure=kit_failure,
        not_called=not_called,
    )


def run_check(
    check: Check,
    subject: ToolSubject | TargetSubject,
    options: RunOptions,
    *,
    loop: BackgroundLoop | None = None,
    explorations: Judges | None = None,
) -> Verdict:
    """Run one check on one subject. Never raises for anything a tool does."""
    if not applies(check, subject):
        sources = ", ".join(sorted(check.info.sources))
        return _verdict(subject, check, Outcome.SKIPPED, f"only for {sources} tools")
    started = time.perf_counter()
    explored = _Explored()
    try:
        if check.info.live and isinstance(subject, ToolSubject):
            reason = may_execute(subject, options)
            if reason is not None:  # a skip, returned rather than raised: no exception a verdict
                duration = time.perf_counter() - started
                return _verdict(
                    subject, check, Outcome.SKIPPED, reason, duration=duration, not_called=True
                )
            findings = _live(check, subject, options, loop, explorations, explored)
        else:
            outcome = check.run(subject, options)
            # Nearly every check returns a plain generator: told apart first, cheaply.
            if not _plain_generator(outcome) and inspect.isawaitable(outcome):
                owner = loop or BackgroundLoop()  # a custom check written as a coroutine
                outcome = owner.run(_as_coroutine(outcome), timeout=ASYNC_CHECK_LIMIT)
            findings = tuple(outcome)
    except Skip as skip:
        duration = time.perf_counter() - started
        return _verdict(
            subject,
            check,
            Outcome.SKIPPED,
            skip.reason,
            duration=duration,
            kit_failure=isinstance(skip, KitFailure),
            not_called=isinstance(skip, NotCalled),
        )
    except Fail as fail:
        findings = (fail.finding,)
    except LoopBlocked as exc:
        findings = (Finding(f"the check did not finish: {exc}; the tool blocks or hangs"),)
    except RecursionError:
        findings = (Finding("the declaration is nested too deeply to inspect (RecursionError)"),)
    except Exception as exc:
        findings = (Finding(f"checking this tool raised {type(exc).__name__}: {exc}"),)
    duration = time.perf_counter() - started
    if not findings:
        return _verdict(subject, check, Outcome.PASSED, duration=duration, explored=explored)
    message = findings[0].message
    if len(findings) > 1:
        message += f" (+{len(findings) - 1} more)"
    return _verdict(subject, check, Outcome.FAILED, message, findings, duration, explored)


def _live(
    check: Check,
    subject: ToolSubject,
    options: RunOptions,
    loop: BackgroundLoop | None,
    explorations: Judges | None,
    explored: _Explored,
) -> tuple[Finding, ...]:
    """The live check's findings; ``run_check`` has made sure the tool may be called."""
    if explorations is None:  # a lone check: explore just for it
        explorations = Explorations(options, loop or BackgroundLoop())
        plan(explorations, subject, [check], group=subject.target)
    try:
        return explorations.judge(check, subject)
    finally:
        count = getattr(explorations, "calls_of", None)
        explored.calls = count(subject) if callable(count) else None
        timed = getattr(explorations, "seconds_of", None)
        explored.seconds = timed(subject) if callable(timed) else None


def _plain_generator(outcome: Any) -> TypeGuard[Iterable[Finding]]:
    """A generator that is no coroutine: what nearly every check returns, told apart
    without ``inspect.isawaitable``'s ABC check (half a million times for 10,000 tools)."""
    return type(outcome) is types.GeneratorType and not (
        outcome.gi_code.co_flags & inspect.CO_ITERABLE_COROUTINE
    )


async def _as_coroutine(awaitable: Any) -> Any:
    return await awaitable


def check_subjects(
    subjects: Sequence[ToolSubject],
    target: str,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    options: RunOptions | None = None,
    loop: BackgroundLoop | None = None,
    target_extra: Mapping[str, Any] | None = None,
    explorations: Judges | None = None,
) -> list[Verdict]:
    """Every selected check on every subject of one target, the tools explored at once."""
    options = options or RunOptions()
    own_loop = loop is None
    loop = loop or BackgroundLoop()
    if explorations is None:
        explorations = Explorations(options, loop)
    verdicts: list[Verdict] = []
    try:
        target_subject = TargetSubject(target, subjects, dict(target_extra or {}))
        providers = options.providers
        for check in applicable_checks(select, ignore, scope=Scope.TARGET, providers=providers):
            if applies(check, target_subject):
                verdicts.append(run_check(check, target_subject, options, loop=loop))
        tool_checks = applicable_checks(select, ignore, scope=Scope.TOOL, providers=providers)
        for subject in subjects:
            plan(explorations, subject, tool_checks, group=target)
        for subject in subjects:
            for check in tool_checks:
                if applies(check, subject):
                    verdicts.append(
                        run_check(check, subject, options, loop=loop, explorations=explorations)
                    )
    finally:
        if own_loop:
            loop.close()
    return verdicts


def check_tools(
    tools: Any,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    options: RunOptions | None = None,
    target: str = "tools",
) -> list[Verdict]:
    """Every selected check on every tool: the plain API behind the pytest plugin.

    ``tools`` is one tool, an iterable of tools, or anything with a ``tools``
    attribute (a toolkit).
    """
    options = options or RunOptions()
    return check_subjects(
        read_subjects(as_tool_list(tools, target=target), target, limit=options.attribute_limit),
        target,
        select=select,
        ignore=ignore,
        options=options,
    )


def as_tool_list(value: Any, *, target: str = "tools") -> list[Any]:
    """The tools a value holds, by the reference's one rule (``toolnexus_ref.as_tools``).

    Raises ``TypeError`` (``NotToolsError``) naming what was found and the accepted forms.
    """
    from toolnexus_ref import as_tools

    return list(as_tools(value, label=target))
