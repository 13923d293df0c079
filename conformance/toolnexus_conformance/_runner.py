"""Running checks: one verdict per check and subject, whatever the tool or the check does."""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._loop import BackgroundLoop, LoopBlocked
from ._model import Fail, Finding, Outcome, Scope, Skip, Verdict
from ._options import RunOptions
from ._registry import Check, load_catalog, selected
from ._subject import TargetSubject, ToolSubject, read_subjects

__all__ = ["applicable_checks", "applies", "check_subjects", "check_tools", "run_check"]

#: A safety net over a whole live check; each call inside it has its own, tighter bound.
LIVE_CHECK_LIMIT = 120.0


def applicable_checks(
    select: Sequence[str] = (), ignore: Sequence[str] = (), *, scope: Scope | None = None
) -> list[Check]:
    """Catalog checks after ``select``/``ignore``, in catalog order."""
    return [
        c
        for c in load_catalog()
        if selected(c.info, select, ignore) and (scope is None or c.info.scope is scope)
    ]


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


def run_check(
    check: Check,
    subject: ToolSubject | TargetSubject,
    options: RunOptions,
    *,
    loop: BackgroundLoop | None = None,
) -> Verdict:
    """Run one check on one subject. Never raises for anything a tool does."""
    target = subject.target
    tool = subject.display_name if isinstance(subject, ToolSubject) else "*"
    sources = check.info.sources
    if sources and isinstance(subject, ToolSubject) and subject.source not in sources:
        return Verdict(
            target,
            tool,
            check.info,
            Outcome.SKIPPED,
            f"only for {', '.join(sorted(sources))} tools",
        )
    started = time.perf_counter()
    try:
        outcome = check.run(subject, options)
        if inspect.isawaitable(outcome):
            owner = loop or BackgroundLoop()
            outcome = owner.run(
                _as_coroutine(outcome),
                timeout=LIVE_CHECK_LIMIT,
                stall=options.call_timeout + options.grace,
            )
        findings = tuple(outcome)
    except Skip as skip:
        return Verdict(
            target,
            tool,
            check.info,
            Outcome.SKIPPED,
            skip.reason,
            duration=time.perf_counter() - started,
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
        return Verdict(target, tool, check.info, Outcome.PASSED, duration=duration)
    message = findings[0].message
    if len(findings) > 1:
        message += f" (+{len(findings) - 1} more)"
    return Verdict(target, tool, check.info, Outcome.FAILED, message, findings, duration)


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
) -> list[Verdict]:
    options = options or RunOptions()
    own_loop = loop is None
    loop = loop or BackgroundLoop()
    verdicts: list[Verdict] = []
    try:
        target_subject = TargetSubject(target, subjects, dict(target_extra or {}))
        for check in applicable_checks(select, ignore, scope=Scope.TARGET):
            if applies(check, target_subject):
                verdicts.append(run_check(check, target_subject, options, loop=loop))
        tool_checks = applicable_checks(select, ignore, scope=Scope.TOOL)
        for subject in subjects:
            for check in tool_checks:
                if applies(check, subject):
                    verdicts.append(run_check(check, subject, options, loop=loop))
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
    return check_subjects(
        read_subjects(as_tool_list(tools), target),
        target,
        select=select,
        ignore=ignore,
        options=options,
    )


def as_tool_list(value: Any) -> list[Any]:
    """One tool, a toolkit (``.tools``) or an iterable of tools, as a list."""
    if hasattr(value, "execute") and hasattr(value, "name"):
        return [value]
    inner = getattr(value, "tools", None)
    if inner is not None and not callable(inner):
        return list(inner)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return list(value)
    raise TypeError(
        f"expected a tool, a toolkit or an iterable of tools, got {type(value).__name__}"
    )
