"""The vocabulary of the suites: categories, severities, catalog entries, findings, verdicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "SPELLED",
    "Category",
    "CheckInfo",
    "Fail",
    "Finding",
    "KitFailure",
    "Outcome",
    "Scope",
    "Severity",
    "Skip",
    "Verdict",
    "exhaustion",
]

#: Said in an invalid-arguments mutation whose value is the declared one written as a
#: string ("1" for 1, "true" for true): accepting it is lenience, not a mistake hidden
#: (TN604). Here, not with the generator, so the checks read it without importing it.
SPELLED = "the same value, spelled as a string"


class Category(StrEnum):
    NAMING = "naming"
    DESCRIPTION = "description"
    SCHEMA = "schema"
    PROVIDER = "provider"
    RESULT = "result"
    ERRORS = "errors"
    CANCELLATION = "cancellation"
    TIMEOUT = "timeout"
    CONCURRENCY = "concurrency"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"


class Scope(StrEnum):
    """What one run of a check looks at: one tool, or a whole target (a server, a module)."""

    TOOL = "tool"
    TARGET = "target"


@dataclass(frozen=True, slots=True)
class CheckInfo:
    """A catalog entry. ``code`` is stable across releases; docs and reports come from here."""

    code: str
    slug: str
    title: str
    category: Category
    severity: Severity
    why: str
    fix: str
    #: Where the rule comes from (a spec section, an SDK file), for provider and MCP rules.
    reference: str | None = None
    #: Live checks call the tool; static checks only read it.
    live: bool = False
    scope: Scope = Scope.TOOL
    #: Only for tools of these sources (empty: every source).
    sources: frozenset[str] = frozenset()
    #: A profile that runs only when ``select`` names it (a code, prefix, category or
    #: slug): OpenAI strict mode and Gemini's ``parameters`` field demand opposite
    #: things of ``additionalProperties``, so no schema can pass both by default.
    opt_in: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    """One concrete way a tool fails a check, with the evidence a user needs to fix it."""

    message: str
    #: JSON path inside the declaration, e.g. ``input_schema.properties.when.format``.
    path: str | None = None
    #: What was sent to the tool (arguments), when the check called it.
    sent: Any = None
    #: What came back (a result, an exception text), when the check called it.
    got: Any = None


class Fail(Exception):
    """Raised by a check to fail with one finding, from however deep it found it.

    Lets a helper that reads an attribute the check needs (a name that is not a
    string, a schema that is not JSON) end the check with its own explanation.
    """

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


class Skip(Exception):
    """Raised by a check that cannot judge this tool; the reason is shown to the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KitFailure(Skip):
    """The kit itself failed to judge (never the tool's doing): the run must not pass."""


class NotCalled(Skip):
    """No live check may call this tool (the safety rule's reason): counted in the report."""


def exhaustion(exc: BaseException) -> str | None:
    """How ``exc`` says a process ran out of memory, threads or processes; ``None`` otherwise.

    Raised while a tool is explored in a process of its own, these are the tool's doing
    (it allocated, or started threads or processes, until none were left).
    """
    if isinstance(exc, MemoryError):
        return "it ran out of memory (MemoryError)"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return "it ran out of threads (RuntimeError: can't start new thread)"
    if isinstance(exc, BlockingIOError) or (
        isinstance(exc, OSError) and exc.errno in (11, 12)  # EAGAIN, ENOMEM: fork, clone
    ):
        return f"it ran out of processes or memory ({type(exc).__name__}: {exc})"
    return None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of one check on one tool of one target: one row of the report."""

    target: str
    tool: str
    check: CheckInfo
    outcome: Outcome
    message: str = ""
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    duration: float = 0.0
    #: Calls the live engine made to the tool (all its checks share them); ``None`` when
    #: the check made none or the count is not known where the verdict was made.
    calls: int | None = None
    #: Seconds the tool's exploration took once it had its slot (all its checks share
    #: it): what the next run's shards are balanced by (``--toolnexus-shard-costs``).
    seconds: float | None = None
    #: Skipped because the kit failed (``KitFailure``): the run does not pass.
    kit_failure: bool = False
    #: Skipped because no live check may call the tool (``NotCalled``).
    not_called: bool = False

    @property
    def severity(self) -> Severity:
        return self.check.severity

    @property
    def is_failure(self) -> bool:
        return self.outcome is Outcome.FAILED

    def fails_run(self, *, strict: bool = False) -> bool:
        """The one rule for a verdict failing the run: errors always, warnings when strict."""
        return self.outcome is Outcome.FAILED and (strict or self.severity is Severity.ERROR)

    def as_record(self) -> dict[str, Any]:
        """The report's JSON record for this verdict."""
        check = self.check
        # ``_value_``, not ``value``: the same str, without the property's call per read
        # (three a record, half a million records in a run of ten thousand tools).
        record: dict[str, Any] = {
            "target": self.target,
            "tool": self.tool,
            "check": check.code,
            "category": check.category._value_,
            "severity": check.severity._value_,
            "outcome": self.outcome._value_,
            "message": self.message,
            # Every finding, not only the first that ``message`` shows.
            "findings": [f.message for f in self.findings],
        }
        # One dict, built in place: a run of ten thousand tools makes half a million.
        if self.calls is not None:
            record["calls"] = self.calls
        if self.seconds is not None:
            record["seconds"] = round(self.seconds, 3)
        if self.kit_failure:
            record["kit_failure"] = True
        if self.not_called:
            record["not_called"] = True
        if self.findings:
            record.update(self._evidence())
        return record

    def _evidence(self) -> dict[str, Any]:
        """Where each finding is and what was sent and came back, as short text.

        One entry per finding, in order, only when some finding has any: the report's
        readers (the HTML page) show the screen ``explain`` shows in the terminal.
        """
        if not any(f.path or f.sent is not None or f.got is not None for f in self.findings):
            return {}
        from ._explain import short

        try:
            from toolnexus_ref.secrets import mask
        except ImportError:  # pragma: no cover - a reference without the secrets registry

            def mask(text: str) -> str:
                return text

        def shown(value: Any) -> str:
            # What came back may echo a credential (TN561): masked where it is made,
            # as the verdict's message is, so no reader of the report ever sees it.
            try:
                return mask(short(value))
            except Exception:  # a repr that raises: the record is still written
                return f"<{type(value).__name__} that cannot be shown>"

        entries: list[dict[str, str]] = []
        for finding in self.findings:
            entry: dict[str, str] = {}
            if finding.path:
                entry["path"] = str(finding.path)
            if finding.sent is not None:
                entry["sent"] = shown(finding.sent)
            if finding.got is not None:
                entry["got"] = shown(finding.got)
            entries.append(entry)
        return {"evidence": entries}
