"""Collection nodes: one collector per target and per tool, one item per check."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolnexus_conformance._model import Verdict
    from toolnexus_conformance._registry import Check
    from toolnexus_conformance._subject import TargetSubject, ToolSubject

    from ._session import ConformanceSession

__all__ = ["CheckFailed", "CheckItem", "ToolCollector", "ToolnexusWarning"]

#: The key under which each item leaves its verdict record in ``user_properties``.
RECORD_KEY = "toolnexus"


class ToolnexusWarning(UserWarning):
    """A check of warning severity failed; fails the run only with --toolnexus-strict."""


class CheckFailed(Exception):
    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


class ToolCollector(pytest.Collector):
    """A target, or a tool within one; holds no logic of its own."""

    def __init__(self, *, children: list[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._children = children or []

    def collect(self) -> list[Any]:
        return self._children

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (self.name, None, self.name)


class CheckItem(pytest.Item):
    """One check on one tool (or on a whole target)."""

    def __init__(
        self,
        *,
        check: Check,
        subject: ToolSubject | TargetSubject,
        owner: ConformanceSession,
        position: tuple[int, int, int],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.subject = subject
        self.owner = owner
        self.position = position
        self.add_marker(pytest.mark.toolnexus)
        self.keywords[check.info.category.value] = True
        self.keywords[check.info.code] = True

    def runtest(self) -> None:
        verdict = self.owner.run(self.check, self.subject)
        record = verdict.as_record()
        record["position"] = list(self.position)
        self.user_properties.append((RECORD_KEY, record))
        if verdict.outcome.value == "skipped":
            pytest.skip(verdict.message or "not applicable")
        if verdict.outcome.value == "failed":
            if verdict.severity.value == "error" or self.owner.settings.strict:
                raise CheckFailed(verdict)
            info = verdict.check
            warnings.warn_explicit(
                ToolnexusWarning(f"{info.code} {info.slug}: {verdict.message}"),
                ToolnexusWarning,
                filename=f"{verdict.target}::{verdict.tool}",
                lineno=0,
            )

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            from toolnexus_conformance._explain import explain

            return explain(excinfo.value.verdict)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[str, int | None, str]:
        info = self.check.info
        tool = getattr(self.subject, "display_name", "*")
        return (self.subject.target, None, f"{tool}: {info.code} {info.title}")
