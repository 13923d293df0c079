"""What the run leaves for people and CI beyond the terminal: HTML, GitHub output, JUnit properties.

A plugin object living beside ``ConformanceSession``. Each check item gets JUnit
properties (check code, category, severity, tool, target) so that ``--junitxml``
carries them, and its records the file and line where the tool is declared. When
the session ends, the HTML page and the GitHub output are made from the JSON
report's data (the file ``--toolnexus-report`` wrote, or the same report written
to a temporary file), so they say what the report says.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._declared_at import DeclaredAt, declared_at
from ._items import CheckItem, labels
from ._output_options import OutputSettings

if TYPE_CHECKING:
    from ._session import ConformanceSession

__all__ = ["JUNIT_PREFIX", "ReportOutputs", "github_output", "reads_report"]

#: JUnit property names are this prefix and the record's key: ``toolnexus.check``...
JUNIT_PREFIX = "toolnexus."


_TARGET = f"{JUNIT_PREFIX}target"
_TOOL = f"{JUNIT_PREFIX}tool"
#: Per check (by ``id``, the entry keeping it alive): its JUnit properties, made once.
_PROPERTIES: dict[int, tuple[Any, tuple[tuple[str, str], ...]]] = {}


def _check_properties(check: Any) -> tuple[tuple[str, str], ...]:
    """A check's code, category and severity as JUnit properties (the same tuples each time)."""
    entry = _PROPERTIES.get(id(check))
    if entry is None or entry[0] is not check:
        category, code, severity = labels(check)
        shown = (
            (f"{JUNIT_PREFIX}check", code),
            (f"{JUNIT_PREFIX}category", category),
            (f"{JUNIT_PREFIX}severity", severity),
        )
        entry = _PROPERTIES[id(check)] = (check, shown)
    return entry[1]


def _is_position(value: Any) -> bool:
    """A file and line as the worker reads them (``declared_at`` reads nothing else of those)."""
    return (
        type(value) is tuple and len(value) == 2 and type(value[0]) is str and type(value[1]) is int
    )


def github_output(settings: OutputSettings) -> bool:
    """Whether the run ends with the GitHub Actions output (``--toolnexus-github``)."""
    from ._github import in_github_actions

    return settings.github == "on" or (settings.github == "auto" and in_github_actions())


def reads_report(settings: OutputSettings) -> bool:
    """Whether the HTML page or the GitHub output will read the run's JSON report."""
    return settings.html is not None or github_output(settings)


class ReportOutputs:
    """Registered with the conformance session; does nothing on an xdist worker at the end."""

    def __init__(self, owner: ConformanceSession, settings: OutputSettings) -> None:
        self.owner = owner
        self.settings = settings
        self.rootdir = Path(str(owner.config.rootpath))
        #: Per tool subject (by id), or per file and line: where it is declared, read once.
        self._where: dict[Any, DeclaredAt | None] = {}
        self._files: dict[str, Any] = {}
        #: Lines for the terminal's summary: the GitHub commands and where files went.
        self._lines: list[tuple[str, dict[str, bool]]] = []

    def _github(self) -> bool:
        return github_output(self.settings)

    # -- per item --------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """JUnit properties, known before the item runs (a skip at setup keeps them)."""
        if not isinstance(item, CheckItem):
            return
        tool = getattr(item.subject, "display_name", "*")
        item.user_properties.append((_TARGET, item.subject.target))
        item.user_properties.append((_TOOL, tool))
        for check, _ in item.checks:
            item.user_properties.extend(_check_properties(check))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        """The tool's file and line into each record the item left (before its report is made)."""
        try:
            return (yield)
        finally:
            if isinstance(item, CheckItem):
                where = self._declared(item.subject)
                if where is not None:
                    # One copy, shared by all of the item's records.
                    shared = dict(where)
                    for record in item.records:
                        record["declared_at"] = shared

    def _declared(self, subject: Any) -> DeclaredAt | None:
        # Tools the worker placed at one file and line are placed once (resolving a
        # path is a system call or more); the others, once per subject.
        position = getattr(subject, "position", None)
        key: Any = position if _is_position(position) else id(subject)
        if key not in self._where:
            try:
                self._where[key] = declared_at(subject, self.rootdir, self._files)
            except Exception:  # where a tool is declared is a courtesy, never a failure
                self._where[key] = None
        return self._where[key]

    # -- at the end ------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        owner = self.owner
        if getattr(owner, "_is_worker", False):
            return
        github = self._github()
        if self.settings.html is None and not github:
            return
        report = self._report()
        if report is None:
            return
        if self.settings.html is not None:
            self._write_html(report, self.settings.html)
        if github:
            self._write_github(report)
        if session.config.pluginmanager.get_plugin("terminalreporter") is None:
            for line, _ in self._lines:  # no terminal summary will print them
                print(line, file=sys.stdout)
            self._lines.clear()

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line, markup in self._lines:
            terminalreporter.write_line(line, **markup)
        self._lines.clear()

    def _report(self) -> dict[str, Any] | None:
        """The JSON report's data: the file written, or the same report written for us."""
        from ._report_view import ReportError, load_report

        path = self.owner._report_path()
        try:
            if path is not None and path.is_file():
                return load_report(path)
            with tempfile.TemporaryDirectory(prefix="toolnexus-report-") as scratch:
                written = Path(scratch) / "report.json"
                self.owner.write_json_report(written)
                return load_report(written)
        except (ReportError, OSError) as exc:
            self._lines.append((f"toolnexus: no HTML or GitHub output: {exc}", {"red": True}))
            return None

    def _write_html(self, report: dict[str, Any], path: Path) -> None:
        from ._html import render_html

        try:
            page = render_html(report)
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f".{path.name}.tmp")
            partial.write_text(page, encoding="utf-8")
            partial.replace(path)
        except OSError as exc:
            self._lines.append((f"toolnexus: cannot write {path}: {exc}", {"red": True}))
            return
        self._lines.append((f"HTML report written to {self._shown(path)}", {}))

    def _shown(self, path: Path) -> str:
        here = Path(str(self.owner.config.invocation_params.dir))
        try:
            return str(path.relative_to(here))
        except ValueError:
            return str(path)

    def _write_github(self, report: dict[str, Any]) -> None:
        import os

        from ._github import annotation_lines, summary_markdown

        workspace = os.environ.get("GITHUB_WORKSPACE")
        lines = annotation_lines(
            report.get("results") or [],
            rootdir=self.rootdir,
            workspace=Path(workspace) if workspace else None,
            strict=self.owner.settings.strict,
        )
        self._lines.extend((line, {}) for line in lines)
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if not target:
            return
        html = self._shown(self.settings.html) if self.settings.html is not None else None
        try:
            with open(target, "a", encoding="utf-8") as out:
                out.write(summary_markdown(report, html=html))
        except OSError as exc:
            self._lines.append(
                (f"toolnexus: cannot append to GITHUB_STEP_SUMMARY {target}: {exc}", {"red": True})
            )
