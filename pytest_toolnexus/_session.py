"""The conformance run inside pytest: targets in, items out, verdicts to the table and report.

Registered only when ``--toolnexus-conformance`` is given, so everything heavy is
imported here rather than in the entry-point module.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Generator
from pathlib import Path
from typing import Any, Literal

import pytest
from toolnexus_conformance._model import Scope, Verdict
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._registry import Check
from toolnexus_conformance._report import LiveReport, Records
from toolnexus_conformance._runner import applicable_checks, applies, plan, run_check
from toolnexus_conformance._subject import TargetSubject, ToolSubject, read_subjects
from toolnexus_conformance.live._explorations import Explorations, Judges
from toolnexus_conformance.live._loop import BackgroundLoop
from toolnexus_conformance.process._isolation import IsolatedExplorations, TargetWorker, WorkerError
from toolnexus_conformance.targets import (
    SPEC_FORMS,
    LoadedTarget,
    TargetError,
    TargetKind,
    TargetSpec,
    load_target,
    parse_target,
)

from ._completeness import Completeness
from ._interrupts import InterruptGuard
from ._items import RECORD_KEY, CheckItem, ToolCollector
from ._options import CONFORMANCE, TARGET, Settings, providers_from

__all__ = ["ConformanceSession"]


class ConformanceSession:
    """A pytest plugin object living for one session."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.loop = BackgroundLoop()
        self.options = RunOptions(
            strict=settings.strict,
            execute=ExecuteMode(settings.execute),
            allow=settings.allow,
            examples=settings.examples,
            grace=settings.grace,
            call_timeout=settings.call_timeout,
            seed=settings.seed if settings.seed is not None else _hypothesis_seed(config),
            concurrency=settings.concurrency,
            example_database=_example_database(config),
            providers=providers_from(settings).get("providers"),
        )
        self.records = Records()
        from toolnexus_ref import secrets

        # Credentials in this process's environment are masked in every output, and
        # a tool returning one is TN561 (the worker registers its own environment's).
        secrets.register_environment()
        #: The report file as the run goes (``--toolnexus-report``): a killed run leaves it.
        self.live_report: LiveReport | None = None
        self._loaded: list[LoadedTarget] = []
        self._is_worker = hasattr(config, "workerinput")
        # Under xdist a worker explores only the tools of the items queued on it.
        prefetch = self._queued_here if self._is_worker else True
        self.explorations = Explorations(self.options, self.loop, prefetch=prefetch)
        #: Python targets are imported and called in worker processes (``_isolation``).
        self.isolated: IsolatedExplorations | None = None
        if settings.isolation == "process" and hasattr(os, "fork"):
            self.isolated = IsolatedExplorations(self.options, prefetch=prefetch)
        elif settings.isolation == "process":
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(
                    "toolnexus: this platform has no os.fork, so the tools of Python targets"
                    " are called in pytest's own process (as --toolnexus-isolation none): a"
                    " tool that exits or crashes ends the run"
                ),
                stacklevel=2,
            )
        self._workers: list[TargetWorker] = []
        self._early: dict[str, concurrent.futures.Future[LoadedTarget]] = {}
        self._early_workers: dict[str, concurrent.futures.Future[TargetWorker]] = {}
        self._start_early()

    def _queued_here(self) -> set[int]:
        """The tools of the items this xdist worker has been handed and not yet run.

        Read from xdist's worker queue (``WorkerInteractor.torun``); if that ever
        moves, a worker explores one tool at a time, which is slower but as right.
        """
        for plugin in self.config.pluginmanager.get_plugins():
            queue = getattr(plugin, "torun", None)
            session = getattr(plugin, "session", None)
            if queue is None or session is None or not hasattr(queue, "lock"):
                continue
            try:
                with queue.lock() as pending:
                    indexes = [i for i in pending if isinstance(i, int)]
                items = session.items
                return {id(items[i].subject) for i in indexes if isinstance(items[i], CheckItem)}
            except Exception:
                return set()
        return set()

    def _start_early(self) -> None:
        """Start loading the command line's targets now, while pytest starts up.

        Starting an MCP server and importing the SDK take seconds; begun at configure
        time they overlap with the rest of pytest's start-up and with hypothesis's
        import, which the first live check needs (warmed in a daemon thread).
        """
        base_dir = Path(str(self.config.rootpath))
        for raw in self.settings.targets:
            try:
                spec = parse_target(raw, base_dir=base_dir)
            except TargetError:
                continue  # reported at collection, with the others
            if spec.kind.value in ("mcp.json", "stdio", "http"):
                self._early[raw] = asyncio.run_coroutine_threadsafe(
                    load_target(spec, base_dir=base_dir), self.loop.loop
                )
            elif spec.kind is TargetKind.PYTHON and self.isolated is not None:
                self._early_workers[raw] = self._start_worker(spec, base_dir)
        if self.options.execute != ExecuteMode.NONE:
            threading.Thread(
                target=_warm_generation, args=(self.options,), name="toolnexus-warm", daemon=True
            ).start()

    def _start_worker(
        self, spec: TargetSpec, base_dir: Path
    ) -> concurrent.futures.Future[TargetWorker]:
        """A worker process importing the target, started on a thread: it overlaps start-up."""
        from toolnexus_conformance._registry import CATALOG

        modules = sorted({c.run.__module__ for c in CATALOG if c.info.live})
        worker = TargetWorker(
            spec.value, spec.label, base_dir=base_dir, options=self.options, modules=modules
        )
        self._workers.append(worker)
        future: concurrent.futures.Future[TargetWorker] = concurrent.futures.Future()

        def load() -> None:
            try:
                worker.load(self.settings.load_timeout)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(worker)

        threading.Thread(target=load, name="toolnexus-worker-load", daemon=True).start()
        return future

    def _load(
        self, raw: Any, spec: TargetSpec, base_dir: Path
    ) -> tuple[LoadedTarget, TargetWorker | None]:
        """The target's tools, and the worker process its live calls go to (if isolated).

        A Python target is imported in its worker only: an import that exits, crashes
        or hangs there is the target's load error, and its declarations come back as
        plain data (``process._declared``), so none of its code runs in pytest's process.
        """
        limit = self.settings.load_timeout
        worker = None
        if spec.kind is TargetKind.PYTHON and self.isolated is not None:
            started = self._early_workers.pop(raw, None) if isinstance(raw, str) else None
            started = started or self._start_worker(spec, base_dir)
            try:
                worker = started.result(limit + 5.0)
            except WorkerError as exc:
                raise TargetError(str(exc)) from None
            # Its declarations came from the worker as plain data: the target's code
            # never runs in this process.
            return LoadedTarget(spec.label, [], info=dict(worker.info)), worker
        early = self._early.pop(raw, None) if isinstance(raw, str) else None
        if early is None:
            return self.loop.run(load_target(spec, base_dir=base_dir), timeout=limit), worker
        try:
            return early.result(limit), worker
        except concurrent.futures.TimeoutError:
            early.cancel()
            raise TargetError(f"loading {spec.label!r} took longer than {limit:g}s") from None

    # -- interrupts and completeness ---------------------------------------------------
    #: SIGTERM raised as KeyboardInterrupt while the suites are on (``_interrupts``).
    sigterm: InterruptGuard
    #: What was meant to run and was not judged (``_completeness``); not on xdist workers.
    completeness: Completeness | None

    def pytest_configure(self, config: pytest.Config) -> None:
        """Called once, as pytest registers this plugin (``pytest_configure`` is historic).

        The guard goes in on every process, xdist workers included: a worker that
        dies of SIGTERM orphans its MCP servers as surely as a serial run does.
        """
        self.sigterm = InterruptGuard()
        self.sigterm.install()
        config.pluginmanager.register(self.sigterm, "toolnexus-sigterm")
        self.completeness = None
        if not self._is_worker:
            self.completeness = Completeness(config, self.sigterm)
            config.pluginmanager.register(self.completeness, "toolnexus-completeness")

    # -- collection ------------------------------------------------------------------
    def _target_specs(self) -> list[Any]:
        specs: list[Any] = list(self.settings.targets)
        for result in self.config.hook.pytest_toolnexus_targets(config=self.config):
            if result:
                specs.extend(result)
        if not specs:
            raise pytest.UsageError(
                f"{CONFORMANCE} needs at least one target. Declare one with"
                f" {TARGET} SPEC, the ini key toolnexus_targets (one per line), or a conftest"
                " hook pytest_toolnexus_targets(config). A target is one of:\n  "
                + "\n  ".join(SPEC_FORMS)
            )
        return specs

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        new: list[pytest.Item] = []
        base_dir = Path(str(config.rootpath))
        seen_labels: dict[str, int] = {}
        for t_index, raw in enumerate(self._target_specs()):
            load_error: str | None = None
            loaded: LoadedTarget | None = None
            worker: TargetWorker | None = None
            try:
                spec = parse_target(raw, base_dir=base_dir)
                label = spec.label
                loaded, worker = self._load(raw, spec, base_dir)
                self._loaded.append(loaded)
            except TargetError as exc:
                label = raw if isinstance(raw, str) else type(raw).__name__
                load_error = str(exc)
            except Exception as exc:  # a timeout of the loader itself, and the unforeseen
                label = raw if isinstance(raw, str) else type(raw).__name__
                load_error = f"loading the target failed: {type(exc).__name__}: {exc}"
            count = seen_labels.get(label, 0)
            seen_labels[label] = count + 1
            if count:
                label = f"{label}#{count + 1}"
            new.extend(self._target_nodes(session, t_index, label, loaded, load_error, worker))
        items.extend(new)
        session.testscollected += len(new)  # pytest counts only what its collectors report

    def _target_nodes(
        self,
        session: pytest.Session,
        t_index: int,
        label: str,
        loaded: LoadedTarget | None,
        load_error: str | None,
        worker: TargetWorker | None = None,
    ) -> list[pytest.Item]:
        settings = self.settings
        name = f"toolnexus:{label}"
        target_node = ToolCollector.from_parent(session, name=name, nodeid=name)
        subjects: list[ToolSubject] = []
        if worker is not None:
            subjects = worker.subjects(label)
        elif loaded is not None:
            subjects = read_subjects(
                loaded.tools, label, loaded.extras or None, limit=self.options.attribute_limit
            )
        judges: Judges = self.explorations
        if worker is not None and self.isolated is not None:
            self.isolated.add(label, worker, subjects)
            judges = self.isolated
        target_extra: dict[str, Any] = dict(loaded.info) if loaded is not None else {}
        target_extra["load_error"] = load_error
        target_subject = TargetSubject(label, subjects, target_extra)
        items: list[pytest.Item] = []
        providers = self.options.providers
        target_checks = applicable_checks(
            settings.select, settings.ignore, scope=Scope.TARGET, providers=providers
        )
        if load_error is not None:  # a target that did not load gets exactly one verdict
            target_checks = [c for c in applicable_checks(scope=Scope.TARGET) if c.code == "TN001"]
        for c_index, check in enumerate(target_checks):
            if load_error is None and not applies(check, target_subject):
                continue
            items.append(self._item(target_node, [(check, (t_index, -1, c_index))], target_subject))
        tool_checks = applicable_checks(
            settings.select, settings.ignore, scope=Scope.TOOL, providers=providers
        )
        for s_index, subject in enumerate(subjects):
            tool_node = ToolCollector.from_parent(target_node, name=subject.display_name)
            mine = [
                (check, (t_index, s_index, c_index))
                for c_index, check in enumerate(tool_checks)
                if applies(check, subject)
            ]
            plan(judges, subject, (c for c, _ in mine), group=label)
            if settings.granularity == "tool":
                if mine:
                    items.append(self._item(tool_node, mine, subject, name="checks"))
            else:
                items.extend(self._item(tool_node, [pair], subject) for pair in mine)
        return items

    def _item(
        self,
        parent: pytest.Collector,
        checks: list[tuple[Check, tuple[int, int, int]]],
        subject: ToolSubject | TargetSubject,
        *,
        name: str | None = None,
    ) -> CheckItem:
        if name is None:
            info = checks[0][0].info
            name = f"{info.code}-{info.slug}"
        return CheckItem.from_parent(parent, name=name, checks=checks, subject=subject, owner=self)

    # -- running ---------------------------------------------------------------------
    def run(self, check: Check, subject: ToolSubject | TargetSubject) -> Verdict:
        judges: Judges = self.explorations
        if self.isolated is not None and self.isolated.handles(subject.target):
            judges = self.isolated
        return run_check(check, subject, self.options, loop=self.loop, explorations=judges)

    # -- reporting -------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, CheckItem) and report.skipped and isinstance(report.longrepr, tuple):
            # Say which item was skipped, not which line of the plugin raised the skip.
            report.longrepr = (item.nodeid, None, report.longrepr[2])  # type: ignore[assignment]
        return report

    def _report_path(self) -> Path | None:
        if self._is_worker or not self.settings.report:
            return None
        path = Path(self.settings.report)
        if not path.is_absolute():
            path = Path(str(self.config.invocation_params.dir)) / path
        return path

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        path = self._report_path()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.live_report = LiveReport(path)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == RECORD_KEY and isinstance(value, dict):
                self.records.add(value)
                if self.live_report is not None:
                    with self.sigterm.holding():
                        self.live_report.add(value, self.records.summary())

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._is_worker:
            return
        incomplete = self.completeness.lines() if self.completeness is not None else []
        if not len(self.records) and not incomplete:
            return
        terminalreporter.section("toolnexus conformance")
        for line in self.records.table():
            terminalreporter.write_line(line)
        for line in incomplete:
            terminalreporter.write_line(line, red=True, bold=line is incomplete[0])
        if self.settings.report:
            terminalreporter.write_line(f"report written to {self.settings.report}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        path = self._report_path()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            state = self.completeness.state() if self.completeness is not None else None
            with self.sigterm.holding():  # a half-written report would serve nobody
                if self.live_report is not None:
                    self.live_report.close()
                self.records.write_report(path, **(state.as_report() if state else {}))

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        for early in self._early.values():  # started at configure, never collected
            if not early.done():
                early.cancel()
            elif not early.cancelled() and early.exception() is None:
                self._loaded.append(early.result())
        self._early.clear()
        for worker in self._workers:
            worker.close()
        for loaded in self._loaded:
            if loaded.close is not None:
                try:
                    self.loop.run(_await(loaded.close()), timeout=15.0)
                except Exception:
                    pass
        self.loop.close()
        self.records.close()
        if self.live_report is not None:
            self.live_report.close()


async def _await(awaitable: Awaitable[None]) -> None:
    await awaitable


def _hypothesis_seed(config: pytest.Config) -> int | None:
    try:
        seed = config.getoption("hypothesis_seed")
    except ValueError:
        return None
    return int(seed) if seed is not None else None


def _example_database(config: pytest.Config) -> Path | Literal[False]:
    """Hypothesis's failing examples live under pytest's cache, and nowhere without it."""
    cache = getattr(config, "cache", None)
    if cache is None:
        return False
    return Path(cache.mkdir("toolnexus-hypothesis"))


def _warm_generation(options: RunOptions) -> None:
    """Import and warm the argument generator (hypothesis, jsonschema) off the main thread."""
    try:
        from toolnexus_conformance.live._search import warm_generation

        warm_generation(options)
    except Exception:  # the real import, later, reports it
        pass
