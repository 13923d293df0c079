"""How a conformance run is spread: over xdist's workers, and over CI shards.

Under xdist (``-n``, ``--tx``) the controller schedules with ``ToolScheduling``
when xdist's mode is ``load`` (what ``-n`` picks) and ``--toolnexus-dist`` is not
``xdist``; each worker, from the same collection, makes the same units and
explores a unit's tools together when its first item asks (``prefetch_groups``).
``--toolnexus-shard K/N`` keeps the units of shard K and deselects the others.

Imports only the standard library and pytest at module level: loaded at configure.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._shard_costs import SHARD_COSTS, ShardCosts, Weight, place, read_costs, weight_of
from ._shared_loads import SHARED_KEY, local_node, remove_folder
from ._units import Unit, assign, estimated_cost, split_nodeid, units_of, unmeasured_cost

if TYPE_CHECKING:
    from ._shard_targets import ShardTargets

__all__ = [
    "DIST",
    "DIST_MODES",
    "SECONDS_KEY",
    "SHARD",
    "ShardPlugin",
    "ToolDistribution",
    "add_scaling_options",
    "is_xdist_controller",
    "keep_costs",
    "last_costs",
    "prefetch_groups",
    "read_shard",
    "read_shard_costs",
    "uses_tool_scheduling",
]

DIST = "--toolnexus-dist"
SHARD = "--toolnexus-shard"
DIST_MODES = ("toolnexus", "xdist")
#: Where the controller keeps each tool's share of its unit's last measured time
#: (``config.cache``): what it balances workers by.
COSTS_KEY = "toolnexus/tool-costs"
#: Where a serial run keeps each tool's own exploration seconds (``config.cache``): the
#: order its next run, and xdist's workers, begin the tools in. Apart from ``COSTS_KEY``:
#: a unit's time shared evenly by its tools would hide which of them is the slow one.
SECONDS_KEY = "toolnexus/tool-seconds"
#: The key of xdist's ``workerinput`` saying that the controller schedules whole units.
UNITS_KEY = "toolnexus_units"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
#: The key of xdist's ``workeroutput`` saying that the cut left the worker's shard empty.
_EMPTIED_KEY = "toolnexus_shard_emptied"


def add_scaling_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolnexus")
    group.addoption(
        DIST,
        default=None,
        choices=DIST_MODES,
        dest="toolnexus_dist",
        help="under pytest-xdist's load mode (-n): toolnexus (default) gives each worker whole"
        " tools and whole servers, so that no tool is explored twice; xdist keeps xdist's"
        " own scheduler.",
    )
    group.addoption(
        SHARD,
        default=None,
        dest="toolnexus_shard",
        metavar="K/N",
        help="run shard K of N (1 <= K <= N): each server started in one shard, Python targets"
        " split by tool, the same on every machine; the other items are deselected.",
    )
    group.addoption(
        SHARD_COSTS,
        default=None,
        dest="toolnexus_shard_costs",
        metavar="REPORT",
        help="with --toolnexus-shard: balance the shards by the seconds each tool took in"
        " REPORT, an earlier run's JSON report (every shard must be given the same file); a"
        " missing file is said, and the servers are dealt out in turn.",
    )
    parser.addini("toolnexus_dist", "toolnexus | xdist: the scheduler under -n", default="")
    parser.addini("toolnexus_shard", "K/N: the shard of the conformance run to run", default="")
    parser.addini(
        "toolnexus_shard_costs",
        "an earlier run's JSON report whose seconds balance the shards",
        default="",
    )


def _dist_mode(config: pytest.Config) -> str:
    mode = (
        config.getoption("toolnexus_dist", None)
        or str(config.getini("toolnexus_dist") or "").strip()
    )
    if not mode:
        return "toolnexus"
    if mode not in DIST_MODES:
        raise pytest.UsageError(f"toolnexus_dist must be toolnexus or xdist, got {mode!r}")
    return mode


def uses_tool_scheduling(config: pytest.Config) -> bool:
    """Whether this run's items are scheduled by whole units (on the controller and workers)."""
    return (
        bool(config.getoption("toolnexus_conformance", False))
        and getattr(config.option, "dist", "no") == "load"
        and _dist_mode(config) == "toolnexus"
    )


def is_xdist_controller(config: pytest.Config) -> bool:
    """Whether this process is xdist's controller: it collects nothing and runs nothing."""
    if hasattr(config, "workerinput") or config.getoption("collectonly", False):
        return False
    return getattr(config.option, "dist", "no") != "no" and bool(getattr(config.option, "tx", None))


def _worker_count(config: pytest.Config) -> int:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return int(workerinput.get("workercount", 1))
    from xdist.workermanage import parse_tx_spec_config

    return len(parse_tx_spec_config(config))


class ToolDistribution:
    """The controller's part: makes the scheduler, and keeps what the run measured."""

    def __init__(self, config: pytest.Config, concurrency: int) -> None:
        self.config = config
        self.concurrency = concurrency
        self.scheduler: Any = None
        self._costs: dict[str, float] | None = None
        #: The run's id, once a local worker was told to share listings (``_shared_loads``).
        self._shared_run: str | None = None

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if not uses_tool_scheduling(config):
            return None
        from ._scheduler import ToolScheduling

        self.scheduler = ToolScheduling(
            config, log, concurrency=self.concurrency, measured=self._measured()
        )
        return self.scheduler

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Tell each worker that its units come whole (a worker's ``dist`` reads ``no``),
        and the costs that shaped them, so that it cuts the same units (on any host);
        and a worker on this machine that it lists targets once with the others."""
        if uses_tool_scheduling(self.config):
            node.workerinput[UNITS_KEY] = self._measured()
        if local_node(node):
            # Workers on this machine list each target once between them.
            node.workerinput[SHARED_KEY] = True
            self._shared_run = str(node.workerinput["testrunuid"])

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Every worker is gone: the listings they shared go too."""
        if self._shared_run is not None:
            remove_folder(self._shared_run)

    def _measured(self) -> dict[str, float]:
        """Each tool's cost as the last run measured it: read once, the same for all."""
        if self._costs is None:
            self._costs = last_costs(self.config, COSTS_KEY)
        return self._costs

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.scheduler is not None:
            keep_costs(self.config, COSTS_KEY, self.scheduler.tool_costs(), self._measured())


def last_costs(config: pytest.Config, key: str) -> dict[str, float]:
    """Seconds by tool (``toolnexus:<target>::<tool>``) as the last run here kept them
    under ``key`` in pytest's cache; empty without the cache."""
    cache = getattr(config, "cache", None)
    found = cache.get(key, {}) if cache is not None else {}
    if not isinstance(found, dict):
        return {}
    return {str(k): float(v) for k, v in found.items() if isinstance(v, (int, float))}


def keep_costs(
    config: pytest.Config, key: str, measured: Mapping[str, float], earlier: Mapping[str, float]
) -> None:
    """Keep this run's seconds under ``key`` for the next, over the ``earlier`` ones of
    the tools it did not measure."""
    cache = getattr(config, "cache", None)
    if cache is None or not measured:
        return
    cache.set(key, {**earlier, **measured})


def prefetch_groups(
    items: Sequence[pytest.Item],
    *,
    workers: int,
    concurrency: int,
    measured: dict[str, float] | None = None,
    servers: Mapping[str, Sequence[str]] | None = None,
    listed_here: Collection[str] = (),
) -> dict[int, set[int]]:
    """For each subject (by ``id``), the subjects of its unit: what a worker explores at once.

    The controller gives a unit whole, so the worker that runs one of its items
    runs them all; exploring the unit's tools together keeps the worker's
    concurrency and explores no tool another worker will. The servers and whole
    targets this worker listed (``listed_here``: their units' keys) are one group:
    the controller gives them together (``ToolScheduling._siblings``), to this
    worker, or all to another.
    """
    groups: dict[int, set[int]] = {}
    nodeids = [i.nodeid for i in items]
    cut = units_of(
        nodeids, workers=workers, concurrency=concurrency, measured=measured, servers=servers
    )
    listed: set[int] = set()  # one set: each of them sees the others'
    for unit in cut:
        found = {id(s) for s in (getattr(items[i], "subject", None) for i in unit.indices) if s}
        subjects = listed if unit.key in listed_here else set()
        subjects |= found
        for key in found:
            groups[key] = subjects
    return groups


def sent_costs(config: pytest.Config) -> dict[str, float] | None:
    """The tool costs the controller sent this worker (``pytest_configure_node``), or
    ``None`` where it schedules no whole units (or this is no xdist worker)."""
    workerinput = getattr(config, "workerinput", None)
    if not isinstance(workerinput, dict) or UNITS_KEY not in workerinput:
        return None
    return dict(workerinput[UNITS_KEY] or {})


def worker_prefetch(
    config: pytest.Config,
    items: Sequence[pytest.Item],
    concurrency: int,
    servers: Mapping[str, Sequence[str]] | None = None,
    listed_here: Collection[str] = (),
) -> dict[int, set[int]] | None:
    """The groups a worker explores together, or ``None`` where units are not whole here."""
    measured = sent_costs(config)
    if measured is None:
        return None
    return prefetch_groups(
        items,
        workers=_worker_count(config),
        concurrency=concurrency,
        measured=measured,
        servers=servers,
        listed_here=listed_here,
    )


# -- shards -----------------------------------------------------------------------------
def read_shard(config: pytest.Config) -> tuple[int, int] | None:
    """``(K, N)`` of ``--toolnexus-shard K/N`` (or the ini key), checked; ``None`` if not given."""
    raw = (
        config.getoption("toolnexus_shard", None)
        or str(config.getini("toolnexus_shard") or "").strip()
    )
    if not raw:
        return None
    found = _SHARD.match(str(raw))
    if found is None:
        raise pytest.UsageError(f"{SHARD} must be K/N (for example 2/4), got {raw!r}")
    k, n = int(found.group(1)), int(found.group(2))
    if not 1 <= k <= n:
        raise pytest.UsageError(f"{SHARD} {k}/{n}: K must be between 1 and N")
    return k, n


_COSTS_READ = pytest.StashKey["ShardCosts | None"]()


def read_shard_costs(config: pytest.Config) -> ShardCosts | None:
    """The costs the shards are balanced by (``--toolnexus-shard-costs``), read once;
    ``None`` where none was given. Given without ``--toolnexus-shard``, a usage error."""
    if _COSTS_READ in config.stash:
        return config.stash[_COSTS_READ]
    given = config.getoption("toolnexus_shard_costs", None)
    base = Path(config.invocation_params.dir)
    if not given:
        given = str(config.getini("toolnexus_shard_costs") or "").strip()
        base = Path(str(config.rootpath))
    costs = None
    if given:
        if read_shard(config) is None:
            raise pytest.UsageError(f"{SHARD_COSTS} balances shards: give {SHARD} K/N with it")
        costs = read_costs(base / given)
    config.stash[_COSTS_READ] = costs
    return costs


def shard_of(nodeids: Sequence[str], k: int, n: int, share: ShardTargets | None = None) -> set[int]:
    """Positions of the items in shard ``k`` of ``n``: whole tools and whole servers.

    ``share``: the servers each shard was given before collection
    (``_shard_targets``): the items of those this shard holds are all kept. The
    others are cut here, balanced by the number of tools, or by the seconds of the
    costs every shard was given (``--toolnexus-shard-costs``; never a cache: every
    shard runs on its own machine, and all must cut alike), against what the servers
    each shard holds cost.
    """
    units: list[Unit] = units_of(nodeids, workers=n, concurrency=1)
    kept: set[int] = set()
    rest: list[Unit] = []
    for unit in units:
        found = split_nodeid(nodeids[unit.indices[0]])
        if share is not None and found is not None and share.holds(found[0]):
            kept.update(unit.indices)
        else:
            rest.append(unit)
    if share is not None and share.measured:  # weighed as the servers were
        owners, _ = place(_weights(rest, share.measured, share.concurrency), n, share.loads)
        given = [position for position, owner in enumerate(owners) if owner == k - 1]
    else:
        costs = [estimated_cost(u, {}) for u in rest]
        given = assign(costs, n, loads=share.loads if share else None)[k - 1]
    return kept | {i for position in given for i in rest[position].indices}


def _weights(
    units: Sequence[Unit], measured: Mapping[str, float], concurrency: int
) -> list[Weight]:
    """Each unit's weight from its tools' measured seconds (a tool not measured: the
    median); a unit of no tool (the project's tests, a target's own items) weighs little."""
    default = unmeasured_cost(measured)
    return [
        weight_of([measured.get(t, default) for t in u.tools], concurrency)
        if u.tools
        else Weight(estimated_cost(u, {}), 0.0)
        for u in units
    ]


class ShardPlugin:
    """Deselects what is not in this shard, after every other selection."""

    def __init__(self, k: int, n: int) -> None:
        self.k, self.n = k, n
        #: Whether the cut left this shard nothing (an xdist controller: its workers').
        self.emptied = False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        conformance = config.pluginmanager.get_plugin("toolnexus-conformance")
        share = getattr(conformance, "shard_targets", None)
        keep = shard_of([i.nodeid for i in items], self.k, self.n, share)
        deselected = [item for index, item in enumerate(items) if index not in keep]
        if not keep and (items or share is not None):  # all went to the other shards
            self.emptied = True
            output = getattr(config, "workeroutput", None)
            if output is not None:  # an xdist worker: the controller sets the status
                output[_EMPTIED_KEY] = True
        if deselected:
            config.hook.pytest_deselected(items=deselected)
            items[:] = [item for index, item in enumerate(items) if index in keep]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist's controller: the shard a worker's cut left empty (all cut alike)."""
        if getattr(node, "workeroutput", {}).get(_EMPTIED_KEY):
            self.emptied = True

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """A shard the cut left empty has nothing to fail: a matrix of more shards than
        the run has units (a tool, a server) passes, rather than exit 5 (no tests)."""
        if self.emptied and session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.emptied:
            terminalreporter.write_line(
                f"toolnexus shard {self.k}/{self.n}: nothing to run; the other shards hold the"
                " run's targets and items (whole tools and whole servers are never split)"
            )
        conformance = terminalreporter.config.pluginmanager.get_plugin("toolnexus-conformance")
        share = getattr(conformance, "shard_targets", None)
        costs = read_shard_costs(terminalreporter.config)
        if share is not None and costs is not None and costs.tools:
            terminalreporter.write_line(
                f"toolnexus shard {self.k}/{self.n}: {share.weighed} servers and targets placed"
                f" by their seconds in {costs.source}, {share.guessed} not in it (placed as"
                " its median server)"
                if share.weighed
                else f"toolnexus shard {self.k}/{self.n}: {costs.source} measured none of"
                " this run's servers and targets: they were dealt out in turn",
                yellow=not share.weighed or share.guessed > 0,
            )

    def pytest_report_header(self, config: pytest.Config) -> str:
        costs = read_shard_costs(config)
        how = f", {costs.describe()}" if costs is not None else ""
        return f"toolnexus shard: {self.k}/{self.n}{how}"
