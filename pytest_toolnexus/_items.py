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

__all__ = [
    "RECORDS",
    "CheckFailed",
    "CheckItem",
    "ToolCollector",
    "ToolnexusWarning",
    "labels",
    "records_of",
]

#: The attribute of an item's call report that holds its verdict records (plain dicts).
#: Not ``user_properties``: pytest's JUnit XML writes every user property into the
#: file, and a record there was a Python dict's repr per test case. A report's other
#: attributes still cross from an xdist worker to its controller (pytest serializes a
#: report's ``__dict__``).
RECORDS = "toolnexus_records"


def records_of(report: Any) -> list[dict[str, Any]]:
    """The verdict records a call report carries (none for other reports)."""
    found = getattr(report, RECORDS, None)
    return found if isinstance(found, list) else []


class ToolnexusWarning(UserWarning):
    """A check of warning severity failed; fails the run only with --toolnexus-strict."""


class CheckFailed(Exception):
    def __init__(self, verdicts: list[Verdict]) -> None:
        super().__init__("; ".join(v.message for v in verdicts))
        self.verdicts = verdicts


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
    """One check on one tool (or on a whole target); or, with
    ``--toolnexus-granularity tool``, every check of one tool in one item."""

    def __init__(
        self,
        *,
        checks: list[tuple[Check, tuple[int, int, int]]],
        subject: ToolSubject | TargetSubject,
        owner: ConformanceSession,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.checks = checks
        self.subject = subject
        self.owner = owner
        #: This run's verdict records, handed to the call report (``take_records``).
        self.records: list[dict[str, Any]] = []
        self.add_marker(_marker())
        # The category and code of each check, in order, as ``-k`` matches them.
        self.keywords.update({name: True for check, _ in checks for name in labels(check)[:2]})

    def runtest(self) -> None:
        failed: list[Verdict] = []
        skipped: list[Verdict] = []
        broken: list[Verdict] = []
        # The baseline's (``_baseline``): findings it accepts, and those it lists that passed.
        baseline = self.owner.baseline
        accepted: list[Verdict] = []
        fixed: list[Verdict] = []
        for check, position in self.checks:
            verdict = self.owner.run(check, self.subject)
            record = verdict.as_record()
            record["position"] = position  # the item's own tuple: no list per record
            state = baseline.mark(record, verdict) if baseline is not None else None
            self.records.append(record)
            if verdict.kit_failure:
                broken.append(verdict)
            elif verdict.outcome == "skipped":
                skipped.append(verdict)
            elif state == "accepted":
                accepted.append(verdict)
            elif state == "fixed":
                fixed.append(verdict)
            elif verdict.fails_run(strict=self.owner.settings.strict):
                failed.append(verdict)
            elif verdict.is_failure:
                _warn(verdict)
        if failed:
            raise CheckFailed(failed)
        if broken:  # the kit could not judge: the run must not pass as if it had
            why = "; ".join(f"{v.check.code}: {v.message}" for v in broken)
            pytest.fail(f"toolnexus could not judge this tool: {why}", pytrace=False)
        if baseline is not None and fixed:  # as xfail(strict=True) does: the baseline shrinks
            pytest.fail(baseline.fixed_message(fixed), pytrace=False)
        if baseline is not None and accepted:
            pytest.xfail(baseline.xfail_reason(accepted))
        if skipped and len(skipped) == len(self.checks):
            reasons = sorted({v.message or "not applicable" for v in skipped})
            pytest.skip("; ".join(reasons))

    def take_records(self) -> list[dict[str, Any]]:
        """The records of the run just made, for its report; the item keeps none."""
        records, self.records = self.records, []
        return records

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> Any:
        if isinstance(excinfo.value, CheckFailed):
            from toolnexus_conformance._explain import explain

            return "\n\n".join(explain(v) for v in excinfo.value.verdicts)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[str, int | None, str]:
        tool = getattr(self.subject, "display_name", "*")
        if len(self.checks) == 1:
            info = self.checks[0][0].info
            return (self.subject.target, 0, f"{tool}: {info.code} {info.title}")
        return (self.subject.target, 0, f"{tool}: {len(self.checks)} checks")


#: Per check (by ``id`` of its ``Check``, which the entry keeps alive): ``labels``.
_LABELS: dict[int, tuple[Check, tuple[str, str, str]]] = {}


def labels(check: Check) -> tuple[str, str, str]:
    """A check's category, code and severity as plain strings, read once per check.

    An enum's ``value`` is a property: read for every check of every item, it is
    a cost the size of the run.
    """
    entry = _LABELS.get(id(check))
    if entry is None or entry[0] is not check:
        info = check.info
        entry = (check, (info.category.value, info.code, info.severity.value))
        _LABELS[id(check)] = entry
    return entry[1]


_MARK: list[pytest.MarkDecorator] = []


def _marker() -> pytest.MarkDecorator:
    """``pytest.mark.toolnexus``, made once (each attribute access makes a new one)."""
    if not _MARK:
        _MARK.append(pytest.mark.toolnexus)
    return _MARK[0]


def _warn(verdict: Verdict) -> None:
    info = verdict.check
    warnings.warn_explicit(
        ToolnexusWarning(f"{info.code} {info.slug}: {verdict.message}"),
        ToolnexusWarning,
        filename=f"{verdict.target}::{verdict.tool}",
        lineno=0,
    )
