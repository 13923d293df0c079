"""Failure messages that fit one screen: the check, the tool, the evidence, why, and the fix."""

from __future__ import annotations

import json
from typing import Any

from ._model import Verdict

__all__ = ["explain", "short"]

_MAX_VALUE = 400
_MAX_FINDINGS = 5


def short(value: Any, limit: int = _MAX_VALUE) -> str:
    """A value as compact text, cut to ``limit`` characters with the size said."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=repr)
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    if len(text) > limit:
        return f"{text[:limit]}... ({len(text):,} characters)"
    return text


def explain(verdict: Verdict) -> str:
    info = verdict.check
    lines = [
        f"{info.code} {info.slug} [{info.category.value}, {info.severity.value}]: {info.title}",
        f"tool:   {verdict.tool}   (target {verdict.target})",
    ]
    for finding in verdict.findings[:_MAX_FINDINGS]:
        lines.append(f"found:  {finding.message}")
        if finding.path:
            lines.append(f"  at:   {finding.path}")
        if finding.sent is not None:
            lines.append(f"  sent: {short(finding.sent)}")
        if finding.got is not None:
            lines.append(f"  got:  {short(finding.got)}")
    hidden = len(verdict.findings) - _MAX_FINDINGS
    if hidden > 0:
        lines.append(f"        ... and {hidden} more")
    lines.append(f"why:    {info.why}")
    lines.append(f"fix:    {info.fix}")
    if info.reference:
        lines.append(f"source: {info.reference}")
    return "\n".join(lines)
