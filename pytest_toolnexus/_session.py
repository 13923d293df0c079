"""The conformance run inside pytest: targets in, items out, verdicts to the table and report.

Registered only when ``--toolnexus-conformance`` is given, so everything heavy is
imported here rather than in the entry-point module.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import importlib
import json
import os
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance._imports import IMPORTS
from toolnexus_conformance._model import Finding, KitFailure, Scope, Verdict
from toolnexus_conformance._options import ExecuteMode, RunOptions
from toolnexus_conformance._registry import Check
from toolnexus_conformance._report import LiveReport, Records
from toolnexus_conformance._runner import applicable_checks, applies, calls_tools, plan, run_check
from toolnexus_conformance._safety import may_execute
from toolnexus_conformance._subject import TargetSubject, ToolSubject, read_subjects
from toolnexus_conformance.live._explorations import Explorations, Judges
from toolnexus_conformance.live._loop import LoopBlocked
from toolnexus_conformance.process._early import sdk_installed
from toolnexus_conformance.process._forkserver import ForkServer
from toolnexus_conformance.process._isolation import IsolatedExplorations, TargetWorker, WorkerError
from toolnexus_conformance.process._pool import WorkerPool
from toolnexus_conformance.process._sandbox import copy_folder
from toolnexus_conformance.targets import (
    SPEC_FORMS,
    LoadedTarget,
    TargetError,
    TargetKind,
    TargetSpec,
    load_target,
)

from . import _arguments
from ._baseline import Baseline, BaselineError, Key
from ._completeness import Completeness
from ._coverage import carried, measuring, unmeasured_line
from ._distribution import (
    SECONDS_KEY,
    is_xdist_controller,
    keep_costs,
    last_costs,
    read_shard,
    read_shard_costs,
    sent_costs,
    worker_prefetch,
)
from ._exit import skip_exit_collection
from ._heap import HeapFreeze, paused
from ._interrupts import InterruptGuard
from ._items import RECORDS, CheckItem, ToolCollector, records_of
from ._listed import (
    ListedWorker,
    listing_of,
    loaded_from,
    mcp_from_listing,
    needs_client,
    python_from_listing,
    ready_to_build,
    server_prefixes,
    shareable,
)
from ._options import ARGUMENTS, BASELINE, CONFORMANCE, TARGET, Settings, providers_from
from ._prestart import (
    Prestart,
    config_start,
    example_database,
    mcp_json_entries,
    prestart,
    spec_of,
    spec_starts,
    start_all,
    target_key,
)
from ._server_listings import (
    NotListed,
    Started,
    list_by_server,
    server_costs,
    share_of,
    shares,
)
from ._shard_targets import ShardTargets, shard_targets
from ._shared_loads import POLL, Claim, Listing, SharedListings, shared_for
from ._tool_settings import ignores, read_tables
from ._units import server_unit

__all__ = ["ConformanceSession"]

#: How many tool names the error about arguments that match no tool lists.
LISTED_TOOLS = 100
#: A target's load and its worker, if its calls are made in one.
_Loaded = tuple[LoadedTarget, TargetWorker | None]
#: How long the session, ending, waits for loads still running (to close what they opened).
UNLOAD_WAIT = 5.0
#: How long closing the loaded targets (their MCP servers) may take, all together.
CLOSE_WAIT = 15.0


class ConformanceSession:
    """A pytest plugin object living for one session."""

    def __init__(
        self, config: pytest.Config, settings: Settings, started: Prestart | None = None
    ) -> None:
        from toolnexus_conformance._parser_lock import install

        install()  # before the loader and warm-up threads start parsing (CPython < 3.13)
        self.config = config
        self.settings = settings
        #: What collection made, frozen until the very end (``_heap``): the thaw is
        #: registered now, before pytest's own cleanups, so it runs after them.
        self._heap = HeapFreeze()
        config.add_cleanup(self._heap.thaw)
        arguments = _file_arguments(config, settings)  # a bad file stops the run before it starts
        #: The arguments file's keys: those that match no tool are its own error.
        self._argument_keys = list(arguments)
        #: Settings per tool (``_tool_settings``) and the baseline (``_baseline``).
        self.tool_tables = read_tables(config, settings.tool_settings)
        self.baseline = _read_baseline(settings)
        if started is None:  # what the plugin makes first, before importing this module
            started = prestart(config, settings, serial=False)
        self.loop = started.loop
        self.sandbox = started.sandbox
        #: How MCP stdio servers are started: the sandbox's launcher, holding the
        #: servers of ``stdio:`` targets started before the SDK is imported.
        self.early = started.early
        #: The command line's targets this run loads (under a shard, its share).
        self._given = started.targets
        #: Targets whose processes the sandbox holds (``RunOptions.contained``), as they load.
        self._contained: set[str] = set()
        self.options = RunOptions(
            contained=self._contained,
            writable_copies=tuple(copy_folder(p) for p in settings.writable_copies),
            passed_variables=settings.env,
            strict=settings.strict,
            execute=ExecuteMode(settings.execute),
            allow=settings.allow,
            examples=settings.examples,
            depth=settings.depth,
            grace=settings.grace,
            call_timeout=settings.call_timeout,
            seed=settings.seed if settings.seed is not None else _hypothesis_seed(config),
            concurrency=settings.concurrency,
            example_database=example_database(config),
            providers=providers_from(settings).get("providers"),
            arguments=_arguments.merge(arguments, self.tool_tables.arguments),
            tools=self.tool_tables.tools,
        )
        #: ``(target, tool name)`` of every tool collected, and the targets that did not load.
        self._collected: list[tuple[str, str]] = []
        self._unloaded: list[str] = []
        from toolnexus_ref import secrets

        # Credentials in this process's environment are masked in every output, and
        # a tool returning one is TN561 (the worker registers its own environment's).
        secrets.register_environment()
        #: The report file as the run goes (``--toolnexus-report``): a killed run leaves it.
        self.live_report: LiveReport | None = None
        self._loaded: list[LoadedTarget] = []
        #: Held while loaded targets are being closed (``_close_loaded``), and set
        #: once unconfigure has closed the loop.
        self._closing = threading.Lock()
        self._ended = False
        self._is_worker = hasattr(config, "workerinput")
        #: The verdict records: kept (JSON-encoded) only where a report will read them.
        self.records = Records(keep=self._reads_records())
        #: Call reports read, by node id: their records are let go once the item's
        #: teardown is reported (every reader of a call report has read it by then).
        self._calls: dict[str, pytest.TestReport] = {}
        #: xdist's controller: it schedules and reports, and loads and explores nothing.
        self._is_controller = is_xdist_controller(config)
        #: Under xdist, the tools a worker explores together: its unit's (``_distribution``).
        self._groups: dict[int, set[int]] | None = None
        #: The subject whose check is running (its unit is what the worker explores next).
        self._asking = 0
        prefetch = self._unit_of_asking if self._is_worker else True
        #: Each tool's seconds in the last serial run here: the slowest begin first.
        self._last_seconds: dict[str, float] | None = None
        self.explorations = Explorations(
            self.options, self.loop, prefetch=prefetch, expected=self._expected_seconds
        )
        #: The worker processes of Python targets alive at once, loading or exploring.
        self.pool = WorkerPool(settings.workers)
        #: Python targets are imported and called in worker processes (``_isolation``).
        self.isolated: IsolatedExplorations | None = None
        if settings.isolation == "process" and hasattr(os, "fork"):
            self.isolated = IsolatedExplorations(self.options, prefetch=prefetch, pool=self.pool)
        elif settings.isolation == "process":
            config.issue_config_time_warning(
                pytest.PytestConfigWarning(
                    "toolnexus: this platform has no os.fork, so the tools of Python targets"
                    " are called in pytest's own process (as --toolnexus-isolation none): a"
                    " tool that exits or crashes ends the run"
                ),
                stacklevel=2,
            )
        #: Coverage carried into the processes the kit starts (``_coverage``).
        self._tool_coverage = started.coverage
        self._workers: list[TargetWorker] = []
        #: The warm template workers are forked from (``process._forkserver``), started
        #: with the first worker when tools will be called.
        self._forkserver: ForkServer | None = None
        self._forkserver_lock = threading.Lock()
        #: The first Python targets (explored first) keep their worker, warmed for their
        #: tools' processes, in half the pool; the rest are stopped after loading and
        #: started again to be explored. The other half loads: it never waits on
        #: an exploration, which begins only once collection is over.
        self._warm = self.pool.size // 2 if self._explores() else 0
        self._loader = concurrent.futures.ThreadPoolExecutor(
            max(1, self.pool.size - self._warm), thread_name_prefix="toolnexus-load"
        )
        #: Each distinct target's load, begun at most once (``target_key``).
        self._loads: dict[tuple[str, Any], concurrent.futures.Future[_Loaded]] = {}
        #: Under xdist, the targets the run's local workers list once (``_shared_loads``).
        self.shared: SharedListings | None = None
        if self._is_worker:
            self.shared = shared_for(getattr(config, "workerinput", None))
        #: Shared listings waiting for a loader thread: one that finds its target held
        #: by another worker takes the next of these rather than wait.
        self._queued = 0
        #: The targets this worker lists first (``_rotated``): it takes the others'
        #: only once its own are listed, so that each worker lists its share.
        self._own: set[tuple[str, Any]] = set()
        self._own_left = 0
        self._own_listed = threading.Event()
        self._started = time.monotonic()
        #: Python targets this worker listed with their worker kept warm (``_warm``).
        self._warm_listed = 0
        self._queued_lock = threading.Lock()
        #: MCP targets built from another worker's listing, their servers not started
        #: yet (``_listed``), and those whose servers then listed other tools.
        self._unconnected: dict[str, Any] = {}
        self._refused: dict[tuple[str, str], str] = {}
        #: Each server of those is started at its first live check: those asked for.
        self._asked: set[tuple[str, str]] = set()
        #: The servers' tool-name prefixes of each mcp.json explored by server, by node
        #: name: from the listing every worker reads, so all cut the same units.
        self._servers: dict[str, list[str]] = {}
        #: ``(K, N)`` of ``--toolnexus-shard``, and this shard's targets once collected.
        self._shard = read_shard(config)
        self.shard_targets: ShardTargets | None = None
        #: The units (``_units``) of the servers and whole targets this worker listed,
        #: and has running: explored together (``_distribution.prefetch_groups``).
        self._listed_here: set[str] = set()
        self._start_early()

    def _explores(self) -> bool:
        """Whether any selected check calls tools: if none does, no worker is warmed."""
        return calls_tools(self.settings.select, self.settings.ignore, self.options)

    def _unit_of_asking(self) -> set[int]:
        """The tools this xdist worker explores at once: those of the running item's unit.

        The controller gives units whole (``_scheduler``), so none of them is
        another worker's. Without the toolnexus scheduler, the one tool asked for.
        """
        if self._groups is None:
            return set()
        return self._groups.get(self._asking, set())

    def _start_early(self) -> None:
        """Start loading the command line's targets now, while pytest starts up.

        Starting an MCP server and importing the SDK take seconds, and so does
        warming a worker; begun at configure time they overlap with the rest of
        pytest's start-up and with hypothesis's import, which the first live check
        needs (warmed in a daemon thread). Loads run a few at a time (``_loader``).
        """
        if self._is_controller:
            return  # the xdist controller collects nothing: its workers load the targets
        _import_shared_modules()
        base_dir = Path(str(self.config.rootpath))
        specs: list[TargetSpec] = []
        ordered, own = _rotated(self._given, getattr(self.config, "workerinput", None))
        for position, raw in enumerate(ordered):
            try:
                spec = spec_of(raw, base_dir)
            except TargetError:
                continue  # reported at collection, with the others
            if position < own:
                self._own.add(target_key(spec))
            specs.append(spec)
            if spec.kind is TargetKind.PYTHON and self.isolated is None:
                continue  # imported in this process: at collection, as before
            self._submit_load(spec, base_dir)
        with self._queued_lock:
            if self._own_left <= 0:
                self._own_listed.set()
        hooked = _hooked_targets(self.config)
        kinds = [spec.kind for spec in specs]
        here = explored_here(kinds, isolated=self.isolated is not None, hooked=hooked)
        if self.options.execute != ExecuteMode.NONE and here:
            client = next((spec for spec in specs if needs_client(spec)), None)
            threading.Thread(
                target=_warm_generation,
                args=(self.options, client),
                name="toolnexus-warm",
                daemon=True,
            ).start()

    def _submit_load(self, spec: TargetSpec, base_dir: Path) -> concurrent.futures.Future[_Loaded]:
        """The target's load, begun now unless it already was: a target loads once."""
        key = target_key(spec)
        found = self._loads.get(key)
        if found is None:
            isolated = spec.kind is TargetKind.PYTHON and self.isolated is not None
            warm = (
                isolated and sum(k[0] == TargetKind.PYTHON.value for k in self._loads) < self._warm
            )
            if self.shared is not None and shareable(spec, isolated=isolated):
                found = self._loads[key] = concurrent.futures.Future()
                with self._queued_lock:
                    self._queued += 1
                    if key in self._own:
                        self._own_left += 1
                        found.add_done_callback(self._one_listed)
                self._loader.submit(self._list_shared, spec, base_dir, warm, found)
            else:
                found = self._loads[key] = self._loader.submit(self._load, spec, base_dir, warm)
        return found

    # -- targets listed once per run (xdist) ----------------------------------------------
    def _list_shared(
        self,
        spec: TargetSpec,
        base_dir: Path,
        warm: bool,
        future: concurrent.futures.Future[_Loaded],
        again: bool = False,
    ) -> None:
        """The target's load, or another worker's listing of it, into ``future``.

        Runs on a ``_loader`` thread. A target another worker is listing now is put
        back behind the listings still waiting here, so that each worker lists
        while the other does; when none is left it waits for that worker, and
        loads the target itself if that worker gives it up (or dies: the lock goes
        with its process) or takes longer than a load may.
        """
        with self._queued_lock:
            self._queued -= 1
        if not again and not future.set_running_or_notify_cancel():
            return
        assert self.shared is not None
        key = " ".join(target_key(spec)[1:])
        if (
            target_key(spec) not in self._own
            and not self._own_listed.is_set()
            and time.monotonic() - self._started < self.settings.load_timeout
        ):
            # Another's share: behind this worker's own (never blocking a thread that
            # one of its own, put back behind it, needs), for a load's time at most.
            time.sleep(POLL)
            with self._queued_lock:
                self._queued += 1
            self._loader.submit(self._list_shared, spec, base_dir, warm, future, True)
            return
        try:
            if spec.kind is TargetKind.MCP_JSON and self.shared.read(key) is None:
                by_server = self._list_by_server(spec, base_dir, key)
                if by_server is not None:
                    future.set_result(by_server)
                    return
            try:
                taken = self.shared.take(key)
            except OSError:  # the folder cannot be used: this worker loads for itself
                future.set_result(self._load(spec, base_dir, warm))
                return
            if taken is None:
                with self._queued_lock:
                    others = self._queued
                    if others:
                        self._queued += 1
                if others:
                    if again:  # only others' targets left: not a busy loop
                        time.sleep(POLL)
                    self._loader.submit(self._list_shared, spec, base_dir, warm, future, True)
                    return
                ready_to_build(spec)  # while the other lists it
                try:
                    taken = self.shared.wait(key, 2 * self.settings.load_timeout + 10.0)
                except OSError:
                    taken = None
            if taken is None:
                result = self._load(spec, base_dir, warm)  # listed by nobody in time
            elif isinstance(taken, Claim):
                result = self._load_and_publish(spec, base_dir, warm, taken)
            else:
                result = self._from_listing(spec, base_dir, warm, taken)
        except BaseException as exc:
            future.set_exception(exc)
            return
        future.set_result(result)

    def _list_by_server(self, spec: TargetSpec, base_dir: Path, key: str) -> _Loaded | None:
        """An mcp.json's servers listed by the workers between them (``_server_listings``):
        its own share started here and kept running, the others' read from their listings.

        ``None`` where the file is listed whole instead: one server, a server named by
        its own ``serverInfo`` (its name is known only once started), a file that does
        not read (the whole load says why), or a folder that cannot be shared.
        """
        assert self.shared is not None
        from toolnexus_ref._naming import sanitize

        configs = mcp_json_entries(spec, base_dir)
        if configs is None:
            return None
        names = [c.name for c in configs]
        if len(names) < 2 or len(set(names)) < len(names):
            return None
        if any(c.named_by_server for c in configs):
            return None
        limit = self.settings.load_timeout
        prefixes = [f"{sanitize(name)}_" for name in names]
        share = share_of(getattr(self.config, "workerinput", None))
        costs = server_costs(sent_costs(self.config) or {}, f"toolnexus:{spec.label}", prefixes)
        owners = shares(costs, share[1])
        self._contain(spec)
        if not sdk_installed():
            return None  # the whole load says what is missing
        if share[0] not in owners:
            ready_to_build(spec)  # no share to start: the others' listings need the SDK

        def start(positions: list[int]) -> Started:
            # Claimed, they are this worker's: started first, they boot while the SDK
            # is imported (the load adopts them), as a serial run's do.
            claimed = (config_start(configs[position]) for position in positions)
            start_all(self.loop, self.early, [s for s in claimed if s is not None], limit)
            ready_to_build(spec)
            from toolnexus_ref import mcp

            try:
                source = self.loop.run(
                    mcp.open_servers([configs[i] for i in positions], launcher=self.launcher),
                    timeout=limit,
                )
            except LoopBlocked:
                raise TargetError(
                    f"starting servers of {spec.label!r} took longer than {limit:g}s"
                ) from None
            listed = dict(zip(positions, source.listing(), strict=True))
            running = dict(zip(positions, source.connections.values(), strict=True))
            return listed, running

        try:
            entries, running = list_by_server(
                self.shared,
                key,
                spec.label,
                names,
                prefixes,
                share=share,
                start=start,
                patience=self._started + limit,
                limit=2 * limit + 10.0,
                owners=owners,
            )
        except OSError:  # the folder cannot be used: listed whole, as without sharing
            return None
        except NotListed as exc:
            raise TargetError(f"{spec.label!r}: {exc}") from None
        from toolnexus_ref import mcp

        source = mcp.listed_servers(
            configs,
            entries,
            launcher=self.launcher,
            running={names[i]: connection for i, connection in running.items()},
        )
        loaded = loaded_from(spec.label, source)
        self._loaded.append(loaded)
        failed = any(s.state == "failed" for s in source.statuses.values())
        if not loaded.tools and not failed and spec.only is None:  # a shard's share may list none
            states = ", ".join(f"{n} ({s.state})" for n, s in source.statuses.items())
            raise TargetError(
                f"{spec.label!r} yields no tools: its servers list none (servers: {states})"
            )
        data = json.dumps(entries).encode()
        servers = server_prefixes(spec, data)
        if servers:
            node = f"toolnexus:{spec.label}"
            self._servers[node] = servers
            self._listed_here.update(server_unit(node, prefixes[i]) for i in running)
        # The whole listing too: a worker that comes late reads it as one.
        with contextlib.suppress(OSError):
            self.shared.write(key, spec.label, data, None, servers)
        return loaded, None

    def _one_listed(self, future: concurrent.futures.Future[_Loaded]) -> None:
        with self._queued_lock:
            self._own_left -= 1
            if self._own_left <= 0:
                self._own_listed.set()

    def _load_and_publish(
        self, spec: TargetSpec, base_dir: Path, warm: bool, claim: Claim
    ) -> _Loaded:
        """Load the target for real and write its listing (or its error) for the others.

        A Python target keeps its worker warm if it is one of the first this worker
        lists (not of the first it was given: the others' are not loaded here).
        """
        if spec.kind is TargetKind.PYTHON:
            with self._queued_lock:
                warm = self._warm_listed < self._warm
                self._warm_listed += warm
        try:
            loaded, worker = self._load(spec, base_dir, warm)
        except Exception as exc:
            why = (
                str(exc)
                if isinstance(exc, TargetError)
                else (f"loading the target failed: {type(exc).__name__}: {exc}")
            )
            claim.publish(spec.label, error=why)
            raise
        except BaseException:
            claim.release()
            raise
        try:
            data = listing_of(loaded, worker)
            servers = server_prefixes(spec, data)
        except Exception:
            claim.release()  # the others load it themselves: slower, the same verdicts
        else:
            claim.publish(spec.label, data, servers=servers)
            node = f"toolnexus:{spec.label}"
            if servers:
                self._servers[node] = servers
            if spec.kind is not TargetKind.PYTHON:  # its servers run here: units of its own
                self._listed_here.update([server_unit(node, p) for p in servers] or [node])
        return loaded, worker

    def _from_listing(
        self, spec: TargetSpec, base_dir: Path, warm: bool, listing: Listing
    ) -> _Loaded:
        """The target as another worker listed it, nothing of it loaded here.

        A listing this worker cannot use (the mcp.json changed since) is loaded
        here after all: every worker must collect the same items.
        """
        if listing.error is not None:
            raise TargetError(listing.error)
        self._contain(spec)
        try:
            if spec.kind is TargetKind.PYTHON:
                declared, info = python_from_listing(listing.data)
                worker = self._new_worker(spec, base_dir, listed=(declared, info))
                return LoadedTarget(spec.label, [], info=dict(info)), worker
            loaded = mcp_from_listing(spec, listing.data, base_dir=base_dir, launcher=self.launcher)
            servers = server_prefixes(spec, listing.data)
        except Exception:
            return self._load(spec, base_dir, warm)
        if servers:
            self._servers[f"toolnexus:{spec.label}"] = servers
        self._loaded.append(loaded)
        return loaded, None

    def _new_worker(
        self,
        spec: TargetSpec,
        base_dir: Path,
        listed: tuple[list[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> TargetWorker:
        """The target's worker process (not started); ``listed``: its declarations as
        another xdist worker listed them, started when its first tool is explored."""
        from toolnexus_conformance._registry import CATALOG

        modules = sorted({c.run.__module__ for c in CATALOG if c.info.live})
        self._contain(spec)
        # Each explore request carries its tool's arguments: the load message need not.
        options = dataclasses.replace(self.options, arguments={})
        common: dict[str, Any] = {
            "base_dir": base_dir,
            "options": options,
            "modules": modules,
            "sandbox": self.sandbox,
            "forkserver": self._template(options, modules),
        }
        worker: TargetWorker
        if listed is None:
            worker = TargetWorker(spec.value, spec.label, **common)
        else:
            worker = ListedWorker(
                spec.value,
                spec.label,
                declared=listed[0],
                info=listed[1],
                load_timeout=self.settings.load_timeout,
                **common,
            )
        self._workers.append(worker)
        return worker

    def _template(self, options: RunOptions, modules: list[str]) -> ForkServer | None:
        """The warm template of every worker, started once; none if no tool is called.

        Without it each worker warms for itself (seconds of CPU a target); with it
        the warm-up is paid once and each worker is a fork that imports its target.
        """
        if not self._explores():
            return None
        with self._forkserver_lock:
            if self._forkserver is None:
                self._forkserver = ForkServer(self.sandbox, options, modules)
                self._forkserver.start()
            return self._forkserver

    def _load(self, spec: TargetSpec, base_dir: Path, warm: bool) -> _Loaded:
        """The target's tools, and the worker process its live calls go to (if isolated).

        Runs on a ``_loader`` thread. A Python target is imported in its worker only,
        in a slot of the pool: an import that exits, crashes or hangs there is the
        target's load error, and its declarations come back as plain data
        (``process._declared``), so none of its code runs in pytest's process. A worker
        that is not ``warm`` is stopped once it has loaded, freeing its slot.
        """
        limit = self.settings.load_timeout
        worker = None
        self._contain(spec)
        if spec.kind is TargetKind.PYTHON and self.isolated is not None:
            worker = self._new_worker(spec, base_dir)
            worker.prepare = warm
            self.pool.acquire(worker)
            loaded_there = False
            try:
                worker.load(limit)
                loaded_there = True
            except WorkerError as exc:
                raise TargetError(str(exc)) from None
            finally:
                self.pool.release(worker, keep=warm and loaded_there)
            # Its declarations came from the worker as plain data: the target's code
            # never runs in this process.
            return LoadedTarget(spec.label, [], info=dict(worker.info)), worker
        if spec.kind in (TargetKind.STDIO, TargetKind.MCP_JSON):
            self._start_servers(spec, base_dir, limit)
        ready_to_build(spec)  # here, not on the loop's thread: it may wait its turn
        # A Python target imported in this process takes the plugin's import turn too
        # (``_imports``): held here while the loop's thread imports it. Nothing on that
        # thread waits for the turn, so holding it across ``run`` cannot stall the loop.
        turn = IMPORTS if spec.kind is TargetKind.PYTHON else contextlib.nullcontext()
        try:
            with turn:
                loaded = self.loop.run(
                    load_target(spec, base_dir=base_dir, launcher=self.launcher), timeout=limit
                )
        except BaseException as exc:
            if worker is not None:
                self.pool.drop(worker)  # no tool of it will be explored
            if isinstance(exc, LoopBlocked):
                raise TargetError(f"loading {spec.label!r} took longer than {limit:g}s") from None
            raise
        self._loaded.append(loaded)
        return loaded, worker

    def _start_servers(self, spec: TargetSpec, base_dir: Path, limit: float) -> None:
        """Start a target's stdio servers now, for its load to adopt (``process._early``).

        The load imports the MCP SDK first, which takes about as long as a server's
        own start-up: begun here, the two overlap. What cannot be read or started is
        left to the load, which says why.
        """
        if sdk_installed():
            start_all(self.loop, self.early, spec_starts(spec, base_dir), limit)

    # -- the sandbox ---------------------------------------------------------------------
    @property
    def launcher(self) -> Any:
        """How MCP stdio servers are started: the sandbox, the environment, the limits."""
        return self.early

    def _contain(self, spec: TargetSpec) -> None:
        """Mark a target whose processes the sandbox holds (``auto`` may call all its tools)."""
        kinds = (TargetKind.STDIO, TargetKind.MCP_JSON)
        isolated = spec.kind is TargetKind.PYTHON and self.isolated is not None
        if self.sandbox.active and not self.sandbox.network and (isolated or spec.kind in kinds):
            self._contained.add(spec.label)

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        """What is contained here: one line when it is not (or with -v), nothing otherwise."""
        if self._is_worker:
            return []
        if not self.sandbox.active or config.get_verbosity() > 0:
            return [self.sandbox.describe()]
        return []

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
    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        """Collection imports the project (conftests, packages, test modules) in the
        kit's import turn (``toolnexus_conformance._imports``).

        The plugin's threads are importing by then: a load the MCP SDK, the warm-up
        hypothesis. A test module that imports the SDK too was handed it half made
        ("cannot import name 'Client' from 'mcp.client.client'", in half the runs of
        a project beside a stdio target, or more). Nothing of the plugin's in
        collecting a node waits for those threads (targets load after it, in
        ``pytest_collection_modifyitems``), and a module that runs the suites as it is
        imported sets the turn aside while it waits for their searches.
        """
        with IMPORTS:
            return (yield)

    def _shard_share(self, raws: list[Any], base_dir: Path) -> ShardTargets:
        """This shard's share of the targets (``_shard_targets``); all of them outside shards."""
        if self._shard is None:
            return ShardTargets(raws, [], frozenset())
        costs = read_shard_costs(self.config)
        measured = costs.tools if costs else None
        return shard_targets(raws, base_dir, *self._shard, measured, self.settings.concurrency)

    def _target_specs(self) -> list[Any]:
        specs: list[Any] = list(self.settings.targets)
        with IMPORTS:  # a conftest's hook imports the project, as collection does
            added = self.config.hook.pytest_toolnexus_targets(config=self.config)
        for result in added:
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
        base_dir = Path(str(config.rootpath))
        # Every target's load is begun first (those of the command line at configure),
        # so they load at once; their nodes are then made in the order given.
        pending: list[tuple[Any, TargetSpec | None, concurrent.futures.Future[_Loaded] | str]] = []
        given: dict[tuple[str, Any], list[str]] = {}
        share = self._shard_share(self._target_specs(), base_dir)
        if self._shard is not None:
            self.shard_targets = share
            self._unloaded.extend(share.elsewhere)  # their tools are collected elsewhere
        for raw in share.kept:
            try:
                spec = spec_of(raw, base_dir)
            except TargetError as exc:
                pending.append((raw, None, str(exc)))
                continue
            key = target_key(spec)
            if key in given:
                given[key].append(spec.label)
                continue
            given[key] = [spec.label]
            pending.append((raw, spec, self._submit_load(spec, base_dir)))
        for labels in given.values():
            if len(labels) > 1:
                warnings.warn(
                    pytest.PytestCollectionWarning(
                        f"toolnexus: target {labels[0]!r} is given {len(labels)} times;"
                        " it is loaded and checked once"
                    ),
                    stacklevel=1,
                )
        new: list[pytest.Item] = []
        seen_labels: dict[str, int] = {}
        for t_index, (raw, target, load) in enumerate(pending):
            load_error: str | None = None
            loaded: LoadedTarget | None = None
            worker: TargetWorker | None = None
            label = _given_label(raw)
            if isinstance(load, str) or target is None:
                load_error = str(load)
            else:
                try:
                    loaded, worker = load.result()
                    label = target.label
                except TargetError as exc:
                    load_error = str(exc)
                except Exception as exc:  # a timeout of the loader itself, and the unforeseen
                    load_error = f"loading the target failed: {type(exc).__name__}: {exc}"
            count = seen_labels.get(label, 0)
            seen_labels[label] = count + 1
            if count:
                label = f"{label}#{count + 1}"
            kind = getattr(target, "kind", None)
            in_worker = self.isolated is not None and kind is TargetKind.PYTHON
            with paused():  # its nodes all live on (``_heap``)
                nodes = self._target_nodes(
                    session, t_index, label, loaded, load_error, worker, in_worker
                )
                new.extend(nodes)
        new.extend(self._give_arguments(session))
        # -- settings per tool and the baseline: both judged against what was collected
        problems = self.tool_tables.problems(self._collected, self._unloaded)
        if problems:  # a collection error: no tool is called with settings that are wrong
            _collection_error(session, "toolnexus-settings", "\n\n".join(problems))
            new = [item for item in new if not isinstance(item, CheckItem)]
        if self.baseline is not None:
            self.baseline.warn_absent(*_collected_keys(new, self._collected), self._unloaded)
        # -- end of settings and baseline
        items.extend(new)
        session.testscollected += len(new)  # pytest counts only what its collectors report
        _report_collected(session, new)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Plan the explorations of the items that survived selection, and no others.

        Called once every plugin has deselected (``-k``, ``-m``, ``--deselect``): a
        tool none of whose items is left is never called, and a tool's exploration
        makes only the calls its remaining checks need. Nothing is explored before
        the first item runs.
        """
        for item in session.items:
            if not isinstance(item, CheckItem) or not isinstance(item.subject, ToolSubject):
                continue
            subject = item.subject
            judges: Judges = self.explorations
            if self.isolated is not None and self.isolated.handles(subject.target):
                judges = self.isolated
            plan(judges, subject, (c for c, _ in item.checks), group=subject.target)
        if self.isolated is not None:
            self.isolated.planned()
        self._groups = worker_prefetch(
            self.config,
            session.items,
            self.options.concurrency,
            servers=self._servers if self.shared is not None else None,
            listed_here=self._listed_here,
        )
        self._heap.freeze()  # until the very end (``_heap``)

    def _target_nodes(
        self,
        session: pytest.Session,
        t_index: int,
        label: str,
        loaded: LoadedTarget | None,
        load_error: str | None,
        worker: TargetWorker | None = None,
        in_worker: bool = False,
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
        if load_error is not None:
            self._unloaded.append(label)
        self._collected.extend((label, _tool_name(s)) for s in subjects)
        if worker is not None and self.isolated is not None:
            self.isolated.add(label, worker, subjects)
        source = loaded.info.get("mcp_source") if loaded is not None else None
        if getattr(source, "listed", False):
            self._unconnected[label] = source
        target_extra: dict[str, Any] = dict(loaded.info) if loaded is not None else {}
        target_extra["load_error"] = load_error
        target_extra["loaded_in_worker"] = in_worker  # its environment cut, maybe sandboxed
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
        # Whether a check applies to a tool depends on the tool's source alone: the
        # checks of each source are chosen once, not once per tool.
        of_source: dict[Any, list[tuple[int, Check]]] = {}
        for s_index, subject in enumerate(subjects):
            tool_node = ToolCollector.from_parent(target_node, name=subject.display_name)
            fitting = _fitting(of_source, tool_checks, subject)
            if self.options.tools:  # [tool.toolnexus] may ignore checks of this tool
                own = self.options.settings_for(label, _tool_name(subject))
                fitting = [(i, check) for i, check in fitting if not ignores(own, check.info)]
            mine = [(check, (t_index, s_index, c_index)) for c_index, check in fitting]
            if settings.granularity == "tool":
                if mine:
                    items.append(self._item(tool_node, mine, subject, name="checks"))
            else:
                items.extend(self._item(tool_node, [pair], subject) for pair in mine)
        return items

    def _give_arguments(self, session: pytest.Session) -> list[pytest.Item]:
        """The hook's arguments joined to the file's, before any tool is explored.

        Explorations start when the first check runs, so the options replaced here are
        the ones every exploration reads; a Python target's worker gets each tool's
        arguments with its explore request. Problems become one failing item.
        """
        with IMPORTS:  # the hook imports the project, its strategies hypothesis's modules
            given, problems = _arguments.from_hook(
                self.config, self._collected, count=self.options.examples, seed=self.options.seed
            )
        lost = _arguments.unmatched_keys(self._argument_keys, self._collected, self._unloaded)
        if lost:
            names = sorted({f"{target}::{name}" for target, name in self._collected})
            if len(names) > LISTED_TOOLS:
                names[LISTED_TOOLS:] = [f"... and {len(names) - LISTED_TOOLS} more"]
            problems.append(
                f"{ARGUMENTS}: {len(lost)} key(s) match no tool of any target:"
                f" {', '.join(map(repr, lost))}. A key is a tool name or target::name, either"
                " may be a glob; the tools are:\n  " + ("\n  ".join(names) or "(none)")
            )
        if given:
            self.options = dataclasses.replace(
                self.options, arguments=_arguments.merge(self.options.arguments, given)
            )
            self.explorations.options = self.options
            if self.isolated is not None:
                self.isolated.options = self.options
        if not problems:
            return []
        # Not "toolnexus:...": that prefix marks the check items the report expects verdicts of.
        name = "toolnexus-arguments"
        return [
            _arguments.ArgumentsItem.from_parent(session, name=name, nodeid=name, problems=problems)
        ]

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
        self._asking = id(subject)
        judges: Judges = self.explorations
        if self.isolated is not None and self.isolated.handles(subject.target):
            judges = self.isolated
        if (
            (self._unconnected or self._refused)
            and isinstance(subject, ToolSubject)
            and check.info.live
            and may_execute(subject, self.options) is None  # it will call tools
        ):
            refused = self._connect(subject.target, subject.extra.get("server_name"))
            if refused is not None:
                judges = _Refused(refused)
        return run_check(check, subject, self.options, loop=self.loop, explorations=judges)

    def _connect(self, target: str, server: Any) -> str | None:
        """Start a server of a target another worker listed, at its first live check.

        Only the tool's own server starts (an mcp.json's servers may be explored by
        several workers, ``_units``). ``None`` once it lists the tools it listed
        there; else why none of its tools is judged here.
        """
        source = self._unconnected.get(target)
        asked = (target, str(server))
        if source is not None and asked not in self._asked:
            self._asked.add(asked)
            names = [server] if isinstance(server, str) and server in source.connections else None
            limit = self.settings.load_timeout
            try:
                problems = self.loop.run(source.connect(names), timeout=limit)
            except LoopBlocked:
                problems = [f"its servers did not start again within {limit:g}s"]
            except Exception as exc:
                problems = [f"starting its servers again raised {type(exc).__name__}: {exc}"]
            if problems:
                self._refused[asked] = (
                    f"{target!r} was listed by another xdist worker at collection, and here"
                    " its servers do not list the same tools, so none is judged against"
                    " that listing: " + "; ".join(problems)
                )
        return self._refused.get(asked)

    # -- reporting -------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if isinstance(item, CheckItem) and call.when == "call":
            setattr(report, RECORDS, item.take_records())
        if isinstance(item, CheckItem) and report.skipped and isinstance(report.longrepr, tuple):
            # Say which item was skipped, not which line of the plugin raised the skip.
            report.longrepr = (item.nodeid, None, report.longrepr[2])  # type: ignore[assignment]
        return report

    def _reads_records(self) -> bool:
        """Whether anything will read the records themselves: the JSON report, and the
        HTML page and GitHub output made from it. An xdist worker's go to its controller
        with its reports; its own serve nobody. The table and the counts need none."""
        from ._output_options import read_outputs
        from ._outputs import reads_report

        if self._is_worker:
            return False
        return self._report_path() is not None or reads_report(read_outputs(self.config))

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
            called = self._calls.pop(report.nodeid, None) if report.when == "teardown" else None
            if called is not None:
                # pytest keeps every report until the run ends, and nothing reads these
                # records again: the table keeps each cell's worst status, the JSON
                # report the records encoded.
                setattr(called, RECORDS, [])
            return
        records = records_of(report)
        if records:
            self._calls[report.nodeid] = report
        for value in records:
            self.records.add(value)
            if self.baseline is not None:
                self.baseline.observe(value)
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
        for line in not_called_lines(self.records.not_called()):
            terminalreporter.write_line(line)
        for target, why in self.records.unjudged().items():
            terminalreporter.write_line(f"{target}: not judged: {why}", yellow=True, bold=True)
        unmeasured = self._unmeasured_by_coverage()
        if unmeasured is not None:
            terminalreporter.write_line(unmeasured, yellow=True)
        if self._tool_coverage is not None and self._tool_coverage.problem:
            terminalreporter.write_line(self._tool_coverage.problem, yellow=True)
        for line in self.baseline.summary_lines() if self.baseline is not None else []:
            terminalreporter.write_line(line)
        if self.baseline is not None and self.baseline.updating and self._shard is not None:
            terminalreporter.write_line(
                f"the baseline holds shard {self._shard[0]}/{self._shard[1]}'s changes alone:"
                " rewrite it from all the shards' reports with python -m"
                f" pytest_toolnexus.update_baseline {self.baseline.path} REPORT...",
                yellow=True,
            )
        for line in incomplete:
            terminalreporter.write_line(line, red=True, bold=line is incomplete[0])
        if self.settings.report:
            terminalreporter.write_line(f"report written to {self.settings.report}")

    def _unmeasured_by_coverage(self) -> str | None:
        """What the summary says when coverage measures this run but the Python
        targets ran in processes it cannot see (``_coverage``)."""
        if self.isolated is None or not measuring(self.config) or carried(self.config):
            return None
        base_dir = Path(str(self.config.rootpath))
        python: list[str] = []
        for raw in self._given:
            try:
                spec = spec_of(raw, base_dir)
            except TargetError:
                continue
            if spec.kind is TargetKind.PYTHON:
                python.append(str(raw))
        return unmeasured_line(python)

    def _kept_seconds(self) -> dict[str, float]:
        """Each tool's seconds as the last serial run here kept them: read once."""
        if self._last_seconds is None:
            self._last_seconds = last_costs(self.config, SECONDS_KEY)
        return self._last_seconds

    def _expected_seconds(self, subject: ToolSubject) -> float | None:
        """What the tool's exploration took in the last serial run here, if measured."""
        return self._kept_seconds().get(_cost_key(subject))

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.baseline is not None and self.baseline.updating and not self._is_worker:
            self.baseline.write()
        if not self._is_worker:  # workers read what serial runs kept, and write nothing
            measured = {_cost_key(s): round(t, 4) for s, t in self.explorations.measured()}
            if measured:  # xdist's controller explores nothing: no cache read for it
                keep_costs(self.config, SECONDS_KEY, measured, self._kept_seconds())
        path = self._report_path()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with self.sigterm.holding():  # a half-written report would serve nobody
                if self.live_report is not None:
                    self.live_report.close()
                self.write_json_report(path)

    def write_json_report(self, path: Path) -> None:
        """The final JSON report to ``path`` (also what the HTML page and GitHub output read)."""
        state = self.completeness.state() if self.completeness is not None else None
        extra = {
            "sandbox": self.sandbox.as_report(),
            "not_called": self.records.not_called(),
        }
        if self.baseline is not None:
            extra["baseline"] = str(self.baseline.path)
        if self._shard is not None:  # what merge_reports reads to join the shards
            extra["shard"] = f"{self._shard[0]}/{self._shard[1]}"
            costs = read_shard_costs(self.config)
            extra["shard_costs"] = costs.cut_by(self.settings.concurrency) if costs else "none"
        self.records.write_report(path, **(state.as_report() if state else {}), extra=extra)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        """Once the last item has run, close the targets' servers while the run reports.

        An MCP server is given its stdin's end and a grace to exit (then signals), and
        a Python server takes half a second or more to exit: that wait overlaps with
        the report and the summary rather than follow them. Nothing calls a tool
        after the test loop. The innermost wrapper (``trylast``): what the tools'
        processes measured joins pytest's coverage before pytest-cov, a wrapper
        outside this one, stops it and combines; a Python server saves its own as it
        exits, so under coverage the servers are closed first, and waited for.
        """
        if not self._is_worker:  # a worker prints no summary
            _import_for_the_summary(self.config)
        try:
            return (yield)
        finally:
            if self._tool_coverage is not None:
                # A Python server saves what it measured as it exits: closed first.
                self._close_loaded()
                self._tool_coverage.combine()
            else:  # closed meanwhile, while the run reports
                threading.Thread(
                    target=self._close_loaded, name="toolnexus-close", daemon=True
                ).start()

    def _close_loaded(self) -> None:
        """Close every target loaded so far, together, and the servers no load adopted.

        Runs on its own thread at the end of the test loop, and again at unconfigure
        for what is left (it waits there for the first run to finish). Once
        unconfigure has closed the loop, a thread that comes late does nothing: a
        call on the loop would start another one, which nothing would close.
        """
        with self._closing:
            if self._ended:
                return
            closes = []
            while self._loaded:  # a load that ends meanwhile is left for the next call
                close = self._loaded.pop().close
                if close is not None:
                    closes.append(close)
            try:
                self.loop.run(_close_all([*closes, self.early.close]), timeout=CLOSE_WAIT)
            except Exception:
                pass

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self._loader.shutdown(wait=False, cancel_futures=True)  # begun, never collected
        if self.isolated is not None:
            self.isolated.close()
        # Each close on its own: one that fails must not leave the others' processes,
        # and their sandboxes, running past the session.
        for worker in list(self._workers):
            # A load still waiting on its worker ends with it.
            _close_or_say(worker.close, f"the worker of {worker.label!r}")
        if self._forkserver is not None:
            _close_or_say(self._forkserver.close, "the workers' template process")
        concurrent.futures.wait(list(self._loads.values()), timeout=UNLOAD_WAIT)
        self._close_loaded()  # what the run's end left open, once that close is over
        with self._closing:
            self._ended = True
            self.loop.close()
        self.records.close()
        if self.live_report is not None:
            self.live_report.close()
        self.sandbox.close()
        if self._tool_coverage is not None:
            self._tool_coverage.close()
        if config.getoption("toolnexus_only", False):
            # Only a run of the kit's own items: a project's tests and fixtures, which
            # may count on their objects being finalised at exit, are not in it.
            skip_exit_collection()


class _Refused:
    """The judges of a target whose tools cannot be judged here: each live check says why."""

    def __init__(self, why: str) -> None:
        self.why = why

    def plan(self, subject: ToolSubject, phases: Any, codes: Any, *, group: str) -> None:
        return None

    def judge(self, check: Check, subject: ToolSubject) -> tuple[Finding, ...]:
        raise KitFailure(self.why)


def _rotated(targets: Sequence[Any], workerinput: Any) -> tuple[list[Any], int]:
    """The targets in the order this xdist worker lists them, and how many are its own.

    Worker ``i`` of ``n`` begins ``i/n`` of the way in, and its own are those up
    to where worker ``i + 1`` begins: the workers list different targets at once
    (``_shared_loads``). Outside xdist, the order given.
    """
    if not isinstance(workerinput, dict) or not targets:
        return list(targets), len(targets)
    index, count = share_of(workerinput)
    start = index * len(targets) // count
    own = (index + 1) * len(targets) // count - start
    return [*targets[start:], *targets[:start]], own


def _given_label(raw: Any) -> str:
    """How a target as given is named where its load fails: a shard's share of an
    mcp.json by its file's label, an object from the targets hook by its type."""
    if isinstance(raw, TargetSpec):
        return raw.label
    return raw if isinstance(raw, str) else type(raw).__name__


async def _close_all(closes: Sequence[Callable[[], Awaitable[None]]]) -> None:
    """Run every close at once; one that fails does not stop the others."""
    await asyncio.gather(*(close() for close in closes), return_exceptions=True)


def _fitting(
    of_source: dict[Any, list[tuple[int, Check]]], checks: list[Check], subject: ToolSubject
) -> list[tuple[int, Check]]:
    """The checks (with their index in ``checks``) that apply to the tool: per source, once."""
    try:
        found = of_source.get(subject.source)
    except TypeError:  # a source that cannot be a key: chosen for this tool alone
        return [(i, c) for i, c in enumerate(checks) if applies(c, subject)]
    if found is None:
        found = of_source[subject.source] = [
            (i, c) for i, c in enumerate(checks) if applies(c, subject)
        ]
    return found


def _cost_key(subject: ToolSubject) -> str:
    """The tool's key among the kept seconds: its node id, as xdist's controller keys costs."""
    return f"toolnexus:{subject.target}::{subject.display_name}"


def _tool_name(subject: ToolSubject) -> str:
    """The name users key arguments by: the declared one, else the display id."""
    return subject.name if isinstance(subject.name, str) else subject.display_name


def _file_arguments(config: pytest.Config, settings: Settings) -> dict[str, Any]:
    """The ``--toolnexus-arguments`` file's arguments; a file that is not right stops the run."""
    if settings.arguments is None:
        return {}
    try:
        return _arguments.read_file(settings.arguments, rootdir=Path(str(config.rootpath)))
    except _arguments.ArgumentsError as exc:
        raise pytest.UsageError(f"{ARGUMENTS} (ini toolnexus_arguments): {exc}") from None


def _read_baseline(settings: Settings) -> Baseline | None:
    """The baseline named, if any; a file that is not right stops the run before it starts."""
    if settings.baseline is None:
        return None
    try:
        return Baseline.read(settings.baseline, updating=settings.update_baseline)
    except BaselineError as exc:
        raise pytest.UsageError(f"{BASELINE} (ini toolnexus_baseline): {exc}") from None


def _collected_keys(
    items: list[pytest.Item], collected: list[tuple[str, str]]
) -> tuple[set[Key], dict[str, set[str]]]:
    """The ``(target, tool, check)`` of every check item, and each target's tools (those
    whose every check is ignored too)."""
    keys: set[Key] = set()
    tools: dict[str, set[str]] = {}
    for target, name in collected:
        tools.setdefault(target, set()).add(name)
    for item in items:
        if not isinstance(item, CheckItem):
            continue
        target = item.subject.target
        tool = item.subject.display_name if isinstance(item.subject, ToolSubject) else "*"
        names = tools.setdefault(target, set())
        if tool != "*":
            names.add(tool)
        keys.update((target, tool, check.code) for check, _ in item.checks)
    return keys, tools


def _report_collected(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Report the items made here as each target's collector had collected them.

    The header's "collected N items / D deselected / S selected" counts what collect
    reports carry, and deselection counts every item: without these reports a run of
    the suites alone said "collected 0 items", and with ``-k`` or a shard a negative
    number selected.
    """
    by_top: dict[str, list[pytest.Item]] = {}
    for item in items:
        top: pytest.Item | pytest.Collector = item
        while top.parent is not None and top.parent is not session:
            top = top.parent
        by_top.setdefault(top.nodeid, []).append(item)
    for nodeid, collected in by_top.items():
        report = pytest.CollectReport(nodeid, "passed", None, list(collected))
        session.ihook.pytest_collectreport(report=report)


def _collection_error(session: pytest.Session, name: str, text: str) -> None:
    """Report ``text`` as pytest reports a module that cannot be collected: the run stops."""
    report = pytest.CollectReport(name, "failed", text, [])
    session.ihook.pytest_collectreport(report=report)


def not_called_lines(counts: dict[str, int]) -> list[str]:
    """The summary's lines on tools no live check called, and why."""
    total = sum(counts.values())
    if not total:
        return []
    lines = [f"{total} tool(s) got no live call:"]
    lines += [f"  {count} {why}" for why, count in sorted(counts.items(), key=lambda kv: -kv[1])]
    return lines


def _hypothesis_seed(config: pytest.Config) -> int | None:
    try:
        seed = config.getoption("hypothesis_seed")
    except ValueError:
        return None
    return int(seed) if seed is not None else None


def explored_here(kinds: list[TargetKind], *, isolated: bool, hooked: bool) -> bool:
    """Whether pytest's own process explores tools, so warming its generator pays.

    It explores every target's tools but those of Python targets called in worker
    processes (each worker warms its own), and whatever targets a conftest's
    ``pytest_toolnexus_targets`` adds, unknown until collection.
    """
    if hooked or not kinds:
        return True
    return not isolated or any(kind is not TargetKind.PYTHON for kind in kinds)


def _hooked_targets(config: pytest.Config) -> bool:
    """Whether a plugin or conftest implements ``pytest_toolnexus_targets`` (more targets)."""
    return bool(config.pluginmanager.hook.pytest_toolnexus_targets.get_hookimpls())


def _import_for_the_summary(config: pytest.Config) -> None:
    """Import now, off the main thread, what hypothesis's pytest plugin imports to print
    its summary.

    Its ``pytest_terminal_summary`` imports hypothesis in every session, one where
    nothing used it too: 0.09 s at the very end of a run whose tools are explored in
    worker processes, which is most of what the summary costs. Begun with the test
    loop, the import overlaps the explorations this process waits for.
    """
    if "hypothesis" in sys.modules or not config.pluginmanager.has_plugin("hypothesispytest"):
        return

    def load() -> None:
        from toolnexus_conformance._imports import import_whole

        with contextlib.suppress(Exception):  # the plugin's own import says why
            import_whole("hypothesis.internal.observability")

    threading.Thread(target=load, name="toolnexus-summary-import", daemon=True).start()


#: Modules that both the MCP SDK (through pydantic) and hypothesis import.
SHARED_MODULES = ("typing_extensions", "annotated_types")


def _import_shared_modules() -> None:
    """Import, on pytest's thread, the modules that pydantic and hypothesis both import.

    The plugin's own threads take turns at their imports (the loads' MCP SDK, the
    warm-up's hypothesis: ``toolnexus_conformance._imports``), and so does collection,
    but not a test importing while it runs, nor pytest's thread before collection
    (other plugins' configure hooks). Two threads importing one module at once can be
    handed it half made: hypothesis's import failed on "partially initialized module
    'annotated_types' has no attribute 'Timezone'" (xdist workers under load), leaving
    modules behind that broke every search of the process. Imported before any of the
    plugin's threads starts, these are whole.
    """
    for name in SHARED_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _warm_generation(options: RunOptions, first: TargetSpec | None) -> None:
    """Import and warm the argument generator (hypothesis, jsonschema) off the main thread.

    With an MCP target to load (``first``), the SDK is imported first: the listing,
    which collection waits for, needs it before any exploration needs hypothesis, and
    the two imports take turns (``toolnexus_conformance._imports``).
    """
    if first is not None:
        with contextlib.suppress(Exception):  # the target's load says why, on its own
            ready_to_build(first)
    try:
        from toolnexus_conformance.live._search import warm_generation

        warm_generation(options)
    except Exception:  # kept there: the first exploration reports it
        pass


def _close_or_say(close: Callable[[], None], what: str) -> None:
    """``close()``; a failure is said on stderr, naming ``what``, and the session's end goes
    on (not a warning: under ``-W error`` that would raise, and end it there)."""
    try:
        close()
    except Exception as exc:
        sys.stderr.write(f"toolnexus: closing {what} failed: {exc!r}\n")
