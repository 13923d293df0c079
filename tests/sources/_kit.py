"""Running the kit through the plugin, as a user would, and reading its JSON report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, Session, start_session

from pytest_toolnexus._options import CONFORMANCE, ONLY, REPORT, TARGET

#: Checks whose verdict comes from calling the tool (result, errors, cancel, timeout).
LIVE_PREFIXES = ("TN5", "TN6", "TN7", "TN8", "TN9")


@dataclass
class KitRun:
    result: pytest.RunResult
    records: list[dict[str, Any]]

    @classmethod
    def of(cls, session: Session) -> KitRun:
        """A session ``start_kit`` started, ended."""
        return cls(session.run_result(), session.report()["results"])

    def failed(self, *, severity: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.records
            if r["outcome"] == "failed" and (severity is None or r["severity"] == severity)
        ]

    def outcomes(self, tool: str) -> dict[str, str]:
        return {r["check"]: r["outcome"] for r in self.records if r["tool"] == tool}

    def live_passed(self, tool: str) -> list[str]:
        return [
            code
            for code, outcome in self.outcomes(tool).items()
            if code.startswith(LIVE_PREFIXES) and outcome == "passed"
        ]


def _kit_args(targets: tuple[str, ...], extra: tuple[str, ...]) -> list[str]:
    args: list[str] = ["-p", "no:cacheprovider", CONFORMANCE, ONLY, REPORT, "report.json"]
    for target in targets:
        args += [TARGET, target]
    return [*args, *extra]


def run_kit(pytester: pytest.Pytester, *targets: str, extra: tuple[str, ...] = ()) -> KitRun:
    """``pytest --toolnexus-conformance --toolnexus-only`` on the targets, in process."""
    result = pytester.runpytest(*_kit_args(targets, extra))
    report = json.loads((pytester.path / "report.json").read_text(encoding="utf-8"))
    return KitRun(result, report["results"])


def start_kit(
    folder: Path,
    *targets: str,
    extra: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
) -> RunningSession:
    """``run_kit`` as a session of its own in ``folder`` (for an early fixture):
    ``KitRun.of`` reads it once ended."""
    return start_session(folder, *_kit_args(targets, extra), env=env)


def shown(records: list[dict[str, Any]]) -> str:
    return "\n".join(f"{r['tool']} {r['check']}: {r['message']}" for r in records)
