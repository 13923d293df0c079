"""The xdist scheduler of a conformance run: whole tools and whole servers to each worker.

xdist's ``load`` deals items out in chunks of the collection, so a tool's items
land on several workers and each explores it; ``loadscope`` groups by the last
``::`` (a tool) but orders by item count and re-reads the whole collection at each
step. This scheduler gives each worker whole units (``_units``), the most costly
first (costs as last measured, from pytest's cache), a new one whenever a worker
has two items or fewer left; the project's other test items are units of one
item each and flow as ``load`` would have them. It implements xdist's public
``Scheduling`` protocol (``xdist.scheduler.protocol``) and reads nothing private.

Workers on this machine list each target once between them (``_shared_loads``):
a server goes, when it can, to the worker that listed it (it is running there
already); a Python target's bundle goes there when it is as costly as the next
in line (balance first). Without such records (remote hosts), as before.

Imported only in xdist's controller, from the ``pytest_xdist_make_scheduler`` hook.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from xdist.report import report_collection_diff
from xdist.workermanage import WorkerController, parse_tx_spec_config

from ._shared_loads import SHARED_KEY, listers
from ._units import Unit, estimated_cost, units_of, unmeasured_cost

__all__ = ["ToolScheduling"]

#: Items a worker may have left before it is given its next unit (xdist's own
#: threshold: a worker runs an item once it knows the next).
LOW_WATER = 2


class ToolScheduling:
    """xdist's ``Scheduling``: units given whole, longest first, as workers free up."""

    def __init__(
        self,
        config: pytest.Config,
        log: Any = None,
        *,
        concurrency: int,
        measured: Mapping[str, float] | None = None,
        numnodes: int | None = None,
    ) -> None:
        self.config = config
        self.log = log.toolnexussched if log is not None else (lambda *args: None)
        self.numnodes = len(parse_tx_spec_config(config)) if numnodes is None else numnodes
        self.concurrency = concurrency
        self.measured = dict(measured or {})
        self.collection: list[str] | None = None
        self.registered: dict[WorkerController, list[str]] = {}
        #: Each node's items given and not yet done, in the order given.
        self.node2pending: dict[WorkerController, list[int]] = {}
        self.queue: deque[Unit] = deque()
        self.units: list[Unit] = []
        #: Seconds each finished item took, by collection index.
        self.durations: dict[int, float] = {}
        #: How many units each node was given (what the tests read).
        self.given: dict[str, list[str]] = {}
        #: Each unit's estimated cost (by ``id``), and the worker that listed each
        #: target (by node name), where the workers shared their listings.
        self.costs: dict[int, float] = {}
        self.listers: dict[str, str] = {}
        #: The tool-name prefix of each server of a target cut by server (``_units``).
        self.servers: dict[str, list[str]] = {}
        #: Units given to one worker together (``_siblings``): explored at once, timed as one.
        self.together: list[list[Unit]] = []

    # -- the protocol's state ---------------------------------------------------------
    @property
    def nodes(self) -> list[WorkerController]:
        return list(self.node2pending)

    @property
    def collection_is_completed(self) -> bool:
        return len(self.registered) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        if not self.collection_is_completed or self.queue:
            return False
        return all(len(pending) < LOW_WATER for pending in self.node2pending.values())

    @property
    def has_pending(self) -> bool:
        return bool(self.queue) or any(self.node2pending.values())

    # -- nodes come and go -------------------------------------------------------------
    def add_node(self, node: WorkerController) -> None:
        assert node not in self.node2pending
        self.node2pending[node] = []

    def add_node_collection(self, node: WorkerController, collection: Sequence[str]) -> None:
        assert node in self.node2pending
        late = self.collection_is_completed and self.collection is not None
        if late and list(collection) != self.collection:  # a node added late, collecting otherwise
            other = next(iter(self.registered))
            assert self.collection is not None
            self.log(
                report_collection_diff(
                    self.collection, list(collection), other.gateway.id, node.gateway.id
                )
            )
            return
        self.registered[node] = list(collection)

    def remove_node(self, node: WorkerController) -> str | None:
        """A node finished or crashed: what it had not run goes back, first in line."""
        pending = self.node2pending.pop(node)
        if not pending:
            return None
        assert self.collection is not None
        crashed = self.collection[pending[0]]
        if pending[1:]:
            self.queue.appendleft(Unit(f"{crashed} (after a crash)", pending[1:]))
        for other in self.nodes:
            self._reschedule(other)
        return crashed

    # -- items done ---------------------------------------------------------------------
    def mark_test_complete(
        self, node: WorkerController, item_index: int, duration: float = 0
    ) -> None:
        self.node2pending[node].remove(item_index)
        self.durations[item_index] = duration
        self._reschedule(node)

    def mark_test_pending(self, item: str) -> None:
        assert self.collection is not None
        self.queue.appendleft(Unit(item, [self.collection.index(item)]))
        for node in self.nodes:
            self._reschedule(node)

    def remove_pending_tests_from_node(
        self, node: WorkerController, indices: Sequence[int]
    ) -> None:
        raise NotImplementedError("only work stealing takes items back")

    # -- scheduling ---------------------------------------------------------------------
    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:  # a node joined later: give it work
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._same_collections():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = list(next(iter(self.registered.values())))
        if not self.collection:
            return
        self.listers, self.servers = self._read_listers()
        self.units = units_of(
            self.collection,
            workers=self.numnodes,
            concurrency=self.concurrency,
            measured=self.measured,
            servers=self.servers,
        )
        default = unmeasured_cost(self.measured)
        costs = {id(u): estimated_cost(u, self.measured, default) for u in self.units}
        self.costs = costs
        # Longest first; the project's items (all of one small cost) keep their order.
        self.queue = deque(sorted(self.units, key=lambda u: -costs[id(u)]))
        extra = len(self.nodes) - len(self.queue)
        # Nodes that listed none of the units are the first that need not start.
        listed = {self._lister(unit) for unit in self.queue}
        spare = sorted(self.nodes, key=lambda n: n.gateway.id in listed)
        for node in spare[: max(0, extra)]:
            self.node2pending.pop(node)
            node.shutdown()  # nothing it could be given
        for node in self.nodes:  # first what each listed, then whatever is first in line
            self._give(node, own=True)
        for node in self.nodes:
            if not self.node2pending[node]:
                self._give(node)
        for node in self.nodes:
            self._reschedule(node)

    def _reschedule(self, node: WorkerController) -> None:
        if node.shutting_down:
            return
        if not self.queue:
            node.shutdown()
            return
        if len(self.node2pending[node]) <= LOW_WATER:
            self._give(node)

    def _give(self, node: WorkerController, *, own: bool = False) -> None:
        """Give ``node`` its next unit; with ``own``, only a server it listed, or none."""
        if not self.queue:
            return
        position = self._pick(node.gateway.id)
        if own and (position is None or self._lister(self.queue[position]) != node.gateway.id):
            return
        if position is None:
            position = 0
        unit = self.queue[position]
        del self.queue[position]
        units = [unit, *self._siblings(unit)]
        if len(units) > 1:
            self.together.append(units)
        indices = [i for u in units for i in u.indices]
        self.node2pending[node].extend(indices)
        self.given.setdefault(node.gateway.id, []).extend(u.key for u in units)
        node.send_runtest_some(indices)

    def _siblings(self, unit: Unit) -> list[Unit]:
        """The other servers and whole targets listed by the worker that listed
        ``unit`` (one of them), taken out of the queue: they go to one worker together.

        Their lister explores all it listed at once (``prefetch_groups``), as a serial
        run explores every target at once; given one at a time, it explored them one
        after another, and a worker done with its own took the next from its lister
        and started that server again. A worker that takes them from their lister (it
        was given other work first) takes them all, so that no tool of theirs is
        explored in both.
        """
        lister = self._lister(unit) if unit.kind == "target" else None
        if lister is None:
            return []
        found = [u for u in self.queue if u.kind == "target" and self._lister(u) == lister]
        for sibling in found:
            self.queue.remove(sibling)
        return found

    def _read_listers(self) -> tuple[dict[str, str], dict[str, list[str]]]:
        """Which worker listed each target, and the servers of those cut by server, from
        the run's shared listings: only where every worker shares them (as each then
        cuts the same units from the same listings)."""
        shared = [getattr(node, "workerinput", None) for node in self.nodes]
        if not shared or not all(isinstance(w, dict) and w.get(SHARED_KEY) for w in shared):
            return {}, {}
        first = shared[0]
        assert isinstance(first, dict)
        return listers(str(first["testrunuid"]))

    def _lister(self, unit: Unit) -> str | None:
        """The worker that listed the unit's server (or else its target), while it is
        still taking work."""
        found = self.listers.get(unit.key) or self.listers.get(unit.key.split("::", 1)[0])
        if found is None:
            return None
        for node in self.nodes:
            if node.gateway.id == found and not node.shutting_down:
                return found
        return None

    def _pick(self, me: str) -> int | None:
        """Where in the queue the unit to give worker ``me`` is (``None``: only servers
        other workers listed are left; the first of them, if it must have one).

        The first unit, but not a server another worker listed (it runs there);
        and among the units as costly as that first, one whose target ``me``
        listed, if any.
        """
        if not self.listers:
            return 0
        allowed = [
            p
            for p, unit in enumerate(self.queue)
            if unit.kind != "target" or self._lister(unit) in (None, me)
        ]
        if not allowed:
            return None
        first = allowed[0]
        cost = self.costs.get(id(self.queue[first]), 0.0)
        for position in allowed:
            unit = self.queue[position]
            if self.costs.get(id(unit), 0.0) != cost:
                break
            if self._lister(unit) == me:
                return position
        return first

    def _same_collections(self) -> bool:
        (first, collection), *rest = self.registered.items()
        same = True
        for node, other in rest:
            diff = report_collection_diff(collection, other, first.gateway.id, node.gateway.id)
            if diff:
                same = False
                self.log(diff)
                self.config.hook.pytest_collectreport(
                    report=pytest.CollectReport(
                        nodeid=node.gateway.id, outcome="failed", longrepr=diff, result=[]
                    )
                )
        return same

    # -- what the run teaches the next one -----------------------------------------------
    def tool_costs(self) -> dict[str, float]:
        """Seconds each tool of a finished unit took (a unit's time shared by its tools).

        A unit's exploration is timed on whichever of its items asked first, so only
        the unit's total is known; shared evenly, it still tells the next run which
        tools are slow. Units given together are explored together, so only their
        total is known too: it is shared over all their tools (else the first
        server's tools would carry its siblings' time, and the next run's shares,
        ``_server_listings.shares``, would give that server a worker to itself).
        """
        out: dict[str, float] = {}
        grouped = {id(unit) for units in self.together for unit in units}
        timed = list(self.together)
        timed += [[unit] for unit in self.units if id(unit) not in grouped]
        for units in timed:
            indices = [i for unit in units for i in unit.indices]
            tools = [tool for unit in units for tool in unit.tools]
            if not tools or any(i not in self.durations for i in indices):
                continue
            share = sum(self.durations[i] for i in indices) / len(tools)
            for tool in tools:
                out[tool] = round(share, 4)
        return out
