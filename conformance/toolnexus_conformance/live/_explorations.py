"""Every tool of a run explored once, many at a time, each check's verdict read from it.

The runner (and the pytest plugin, item by item) asks for a tool's observation;
the first ask explores every planned tool not explored yet, of every target, at
once, bounded by ``RunOptions.concurrency``, inside one scratch working directory.
In-process ``async def`` tools take turns: one that blocks the event loop is then
known by name, the loop is replaced, and the rest of the group carries on. An MCP
server that exits mid-batch is restarted once the call that ended it is known
(``_crashes``), and the tools it took down with it are explored again.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from toolnexus_ref import ToolContext

from .._imports import IMPORTS, import_whole
from .._model import exhaustion
from .._options import RunOptions
from .._subject import ToolSubject
from ._calls import call_once, scratch_cwd
from ._crashes import Blame, connection_of, exited, find_culprit, suspects_of
from ._explorer import explore_tool, runs_on_loop
from ._loop import BackgroundLoop, LoopBlocked
from ._observation import Observation, Phase
from ._probes import looks_ended
from ._search import stretch
from ._workers import SearchWorkers, shared_workers

if TYPE_CHECKING:
    from .._model import Finding
    from .._registry import Check

__all__ = ["Explorations", "Judges", "batch_of", "tool_limit"]


class Judges(Protocol):
    """Where live checks get their verdicts: tools explored here, or in a worker process."""

    def plan(
        self, subject: ToolSubject, phases: Iterable[Any], codes: Iterable[str], *, group: str
    ) -> None: ...

    def judge(self, check: Check, subject: ToolSubject) -> tuple[Finding, ...]: ...


class _Planned(Protocol):
    group: str


P = TypeVar("P", bound=_Planned)


def batch_of(
    key: int,
    plans: Mapping[int, P],
    done: Container[int],
    prefetch: bool | Callable[[], set[int]],
) -> list[P]:
    """The plan asked for, then (with prefetch) every other plan not explored yet.

    ``prefetch`` is ``False`` (the one tool), ``True`` (every planned tool, of every
    target: targets overlap under the one concurrency bound) or a function giving
    the ids of the tools wanted now (under xdist, those of the queued items).
    """
    batch = [plans[key]]
    if prefetch:
        wanted = prefetch() if callable(prefetch) else None
        batch += [
            p
            for k, p in plans.items()
            if k != key and k not in done and (wanted is None or k in wanted)
        ]
    return batch


def _name(subject: ToolSubject) -> str:
    """The name settings are keyed by: the declared one, else the display id."""
    return subject.name if isinstance(subject.name, str) else subject.display_name


def tool_limit(options: RunOptions) -> float:
    """A safety net over one tool's whole exploration; each call has its own bound.

    Its search budget stretches on a busy machine (``_search.stretch``), so the net
    does too.
    """
    from ._search import stretch

    search = 4 * options.search_budget * stretch()
    return 5 * options.call_timeout + search + 10 * options.grace + 10


@dataclass(slots=True)
class _Plan:
    subject: ToolSubject
    group: str
    phases: set[Phase] = field(default_factory=set)
    codes: set[str] = field(default_factory=set)


def import_generator() -> None:
    """Import hypothesis before any exploration of this process begins.

    Hypothesis fixes its default storage (``.hypothesis`` in the working directory)
    when first imported: here, not inside a scratch directory that is removed while
    hypothesis still writes there. Never beside the warm-up's import of it
    (``_imports``): an import that finds the package in ``sys.modules`` goes on while
    another thread is still importing it.
    """
    import_whole("hypothesis.configuration")


class Explorations:
    """The observations of one run, made on demand and kept until the run ends."""

    def __init__(
        self,
        options: RunOptions,
        loop: BackgroundLoop,
        *,
        workers: SearchWorkers | None = None,
        prefetch: bool | Callable[[], set[int]] = True,
        expected: Callable[[ToolSubject], float | None] | None = None,
    ) -> None:
        self.options = options
        self.loop = loop
        #: Seconds a tool's exploration is expected to take (an earlier run's), or
        #: ``None`` where unknown: the costliest begin first (``_costliest_first``).
        self.expected = expected
        self.workers = workers or shared_workers(max(2, min(32, 2 * options.concurrency)))
        #: Explore every planned tool at the first ask; or, given a function, only the
        #: tools whose ids it returns (under xdist: those of the items queued on
        #: this worker, so a worker explores only the tools its own items need).
        self.prefetch = prefetch
        self._plans: dict[int, _Plan] = {}
        self._done: dict[int, Observation] = {}
        #: Seconds each tool's explorations took in their slots (``seconds_of``).
        self._seconds: dict[int, float] = {}
        self._on_loop_now: int | None = None
        #: Servers (by ``id`` of the connection) that exited with no call to blame once,
        #: and what the replays showed then.
        self._unexplained: dict[int, Blame] = {}
        #: Servers (by ``id``) that exited and were not explored again.
        self._given_up: set[int] = set()
        #: Servers (by ``id``) that exited twice with no call to blame and no sign of
        #: exiting on their own: their tools are explored one at a time
        #: (``_one_at_a_time``), and once done they are not looked at again.
        self._one_by_one: set[int] = set()
        #: Tools (by ``id`` of the subject) whose server exited under them, until they
        #: are explored again: what they observed is the exit's, not theirs.
        self._to_remake: set[int] = set()

    def plan(
        self, subject: ToolSubject, phases: Iterable[Any], codes: Iterable[str], *, group: str
    ) -> None:
        """Say which phases and checks a tool's items will read (call before asking)."""
        plan = self._plans.setdefault(id(subject), _Plan(subject, group))
        plan.phases.update(Phase(p) for p in phases)
        plan.codes.update(codes)

    def judge(self, check: Check, subject: ToolSubject) -> tuple[Finding, ...]:
        """The live check's findings on the tool's observation (``Skip`` if it cannot judge)."""
        options = self.options.for_tool(subject.target, _name(subject))
        return tuple(check.run(self.observation(subject), options))  # type: ignore[arg-type]

    def calls_of(self, subject: ToolSubject) -> int | None:
        """Calls the tool's exploration made (its streams), once it was explored."""
        found = self._done.get(id(subject))
        return None if found is None else found.call_count()

    def seconds_of(self, subject: ToolSubject) -> float | None:
        """Seconds the tool's exploration took in its slot (made again: all of them), once
        it was explored: its cost, apart from the time it waited for a slot."""
        if id(subject) not in self._done:
            return None
        return self._seconds.get(id(subject))

    def observation(self, subject: ToolSubject) -> Observation:
        """The tool's observation, exploring it (and, with prefetch, the others) first."""
        key = id(subject)
        found = self._done.get(key)
        if found is not None:
            return found
        if key not in self._plans:
            raise KeyError(f"no exploration was planned for {subject.display_name!r}")
        self._run(batch_of(key, self._plans, self._done, self.prefetch))
        return self._done[key]

    def measured(self) -> list[tuple[ToolSubject, float]]:
        """Each explored tool and the seconds its exploration took in its slot."""
        return [
            (plan.subject, self._seconds[key])
            for key, plan in self._plans.items()
            if key in self._done and key in self._seconds
        ]

    def _costliest_first(self, batch: list[_Plan]) -> list[_Plan]:
        """The batch with the tools expected to take longest first.

        The tools share ``concurrency`` slots, taken in the batch's order: a slow tool
        listed last (a server's ten-second operation at the end of an mcp.json) would
        begin once every slot had served the quicker ones before it, and end the run
        alone. A tool never measured is taken to cost the median of those that were;
        tools of equal cost keep their order.
        """
        if self.expected is None:
            return batch
        known = {id(p.subject): c for p in batch if (c := self.expected(p.subject)) is not None}
        if not known:
            return batch
        middle = statistics.median(known.values())
        return sorted(batch, key=lambda p: -known.get(id(p.subject), middle))

    def _run(self, batch: list[_Plan]) -> None:
        import_generator()
        pending = self._costliest_first(batch)
        starved = False  # the loop was found stopped once with no tool's code on it
        while pending:
            # MCP tools run in their server's process: this process's directory stays put.
            remote = all(p.subject.source == "mcp" for p in pending)
            try:
                with nullcontext() if remote else scratch_cwd(self.options.scratch_root):
                    # The call timeout stretches by the load, as the calls' own bounds
                    # do: on a busy machine the loop's thread can wait a second for a
                    # core with nothing blocking it, and a tool would be blamed for the
                    # wait. Found within a quarter of this bound past it (``_loop``), a
                    # block is still found before the session's watch of a tool's
                    # process gives the call up (``process._isolation``, ``overdue``).
                    bound = max(self._options(p).call_timeout for p in pending)
                    stall = bound * stretch() + self.options.grace
                    loop = self.loop.loop  # the loop this round runs on
                    # The searches take the import turn: a caller holding it (a test
                    # module running the suites as it is collected) waits without it.
                    with IMPORTS.set_aside():
                        self.loop.run(self._explore_all(pending), stall=stall)
            except LoopBlocked as exc:
                if self._held_only(starved, loop, stall):
                    starved = True  # explored again, once, on the same loop
                else:
                    self._blame(pending, str(exc))
            except Exception as exc:  # our own failure: say so, never blame a tool...
                ran_out = exhaustion(exc)  # ...unless the tools used up the process
                for plan in pending:
                    found = self._done.get(id(plan.subject))
                    # One whose server exited under it and that was never made again is
                    # not done: the "server exited" it says (or the call that exit ended,
                    # in flight as its exploration ended) is not why it was not judged.
                    if found is not None and not (
                        found.crashed is None
                        and (found.interrupted or id(plan.subject) in self._to_remake)
                    ):
                        continue
                    self._done[id(plan.subject)] = (
                        Observation(plan.subject, exhausted=f"exploring the tool, {ran_out}")
                        if ran_out is not None
                        else Observation(
                            plan.subject,
                            error=f"the exploration failed: {type(exc).__name__}: {exc}",
                            kit_failed=True,
                        )
                    )
            pending = [p for p in pending if id(p.subject) not in self._done]

    def _held_only(self, starved: bool, loop: asyncio.AbstractEventLoop, stall: float) -> bool:
        """Whether the loop found blocked was only held, with no tool's code on it.

        A busy machine's scheduler can keep the loop's thread from a core for longer
        than the bound; a sync tool, running in a thread meanwhile, was then blamed for
        blocking it. A loop that runs again within the bound, while no tool's code ran
        on it, was not blocked by a tool: it is taken back and the tools not yet
        explored are explored again, once; a block that comes back is blamed.
        """
        return not starved and self._on_loop_now is None and self.loop.take_back(loop, stall)

    def _blame(self, pending: list[_Plan], reason: str) -> None:
        culprit = self._on_loop_now
        self._on_loop_now = None
        blamed = [p for p in pending if id(p.subject) == culprit] or [
            p for p in pending if id(p.subject) not in self._done
        ]
        for plan in blamed:
            self._done[id(plan.subject)] = Observation(
                plan.subject, blocked_loop=f"execute blocked the event loop ({reason})"
            )

    async def _explore_all(self, batch: list[_Plan]) -> None:
        slots = asyncio.Semaphore(max(1, self.options.concurrency))
        turns = asyncio.Lock()  # in-process async tools, one at a time

        async def one(plan: _Plan) -> None:
            key = id(plan.subject)
            if key in self._done:
                return
            on_loop = runs_on_loop(plan.subject)
            if on_loop:
                async with turns, slots:
                    self._on_loop_now = key
                    try:
                        observation = await self._bounded(plan)
                    finally:
                        self._on_loop_now = None
            else:
                async with slots:
                    observation = await self._bounded(plan)
            # A look at its server's silence that outlived the search (``_probes``) has
            # ended before the batch decides which tools to explore again.
            await looks_ended()
            self._done[key] = observation

        await asyncio.gather(*(one(plan) for plan in batch))
        await self._again_after_crashes(batch, one)
        await self._again_without_the_rest(batch, one, slots)
        for plan in batch:  # alone now: a late verdict must be the tool's, not contention's
            observation = self._done.get(id(plan.subject))
            if observation is not None and observation.recheck is not None:
                recheck, observation.recheck = observation.recheck, None
                if runs_on_loop(plan.subject):
                    self._on_loop_now = id(plan.subject)
                try:
                    await recheck()
                finally:
                    self._on_loop_now = None

    async def _again_after_crashes(
        self, batch: list[_Plan], one: Callable[[_Plan], Awaitable[None]]
    ) -> None:
        """Tools whose MCP server exited mid-batch, explored again on a restarted server.

        The call that ended the server is found by replaying the calls in flight
        (``find_culprit``); its tool's observation says so (TN606) and it is not
        called again. Every other tool of the server saw only the exit, which is
        not its doing: it is explored again. Each tool's exploration stopped at the
        exit (``_crashes.exit_check``), so the batch waits for no tool calling a dead
        server. Each round blames at most one tool per server, so a batch ends after
        as many rounds as it has tools.
        """
        for _ in range(len(batch)):
            servers: dict[int, tuple[Any, list[_Plan]]] = {}
            for plan in batch:
                connection = connection_of(plan.subject)
                if (
                    connection is not None
                    and id(connection) not in self._given_up
                    and id(connection) not in self._one_by_one
                    and exited(connection)
                ):
                    servers.setdefault(id(connection), (connection, []))[1].append(plan)
            again: list[_Plan] = []
            alone: list[_Plan] = []
            for connection, plans in servers.values():
                under = {id(plan.subject) for plan in plans}
                self._to_remake |= under
                made = await self._after_crash(connection, plans)
                self._to_remake -= under - {id(plan.subject) for plan in made}
                if id(connection) in self._one_by_one:
                    alone += made
                else:
                    again += made
            if alone:
                await self._one_at_a_time(alone, one)
            if not again:
                return
            for plan in again:
                self._done.pop(id(plan.subject), None)
            await asyncio.gather(*(one(plan) for plan in again))
            self._to_remake.difference_update(id(plan.subject) for plan in again)

    async def _one_at_a_time(
        self, plans: list[_Plan], one: Callable[[_Plan], Awaitable[None]]
    ) -> None:
        """The tools of servers that exited twice with no call to blame, explored one at
        a time per server (``_alone_on``); servers side by side."""
        servers: dict[int, tuple[Any, list[_Plan]]] = {}
        for plan in plans:
            connection = connection_of(plan.subject)
            servers.setdefault(id(connection), (connection, []))[1].append(plan)
        await asyncio.gather(*(self._alone_on(c, group, one) for c, group in servers.values()))

    async def _alone_on(
        self, connection: Any, plans: list[_Plan], one: Callable[[_Plan], Awaitable[None]]
    ) -> None:
        """``plans``, the tools of ``connection``'s server, explored one at a time, each on
        a server that no other tool has called since it started.

        Neither a call replayed alone nor the calls replayed in order show an exit that
        needs calls in flight together, or one whose timing the replays do not repeat
        (arxiv-mcp-server's: cancels of reads of papers another tool is downloading).
        Alone, a tool whose exploration ends the server is found by its own calls,
        replayed as after any exit (in order too); one whose calls, replayed,
        end no fresh server is not judged, and said to be where the server exited; every
        other tool is judged. Two such unexplained exits in a row, or a fresh server
        seen exiting by itself, show a server that exits whatever is called: the rest
        are given up, as before.
        """
        unexplained = 0
        for index, plan in enumerate(plans):
            status = await connection.restart()
            if not status.ok:
                reason = f"not judged: the server did not start again: {status.describe()}"
                self._give_up(connection, plans[index:], reason)
                return
            self._done.pop(id(plan.subject), None)
            await one(plan)
            self._to_remake.discard(id(plan.subject))
            if not exited(connection):
                unexplained = 0
                continue
            exit_status = connection.status.describe()
            blame = await self._culprit(connection)
            if blame.crash is not None:
                unexplained = 0
                self._done[id(plan.subject)] = Observation(
                    plan.subject, crashed=blame.crash, call_timeout=self.options.call_timeout
                )
                continue
            unexplained += 1
            why = blame.unblamed or "no call of it, replayed alone, ends a fresh server"
            self._done[id(plan.subject)] = Observation(
                plan.subject,
                error=f"not judged: the server exited ({exit_status}) while only this tool"
                f" was explored, and {why}: the exit may depend on what its earlier calls"
                " left in the server",
                call_timeout=self.options.call_timeout,
            )
            if unexplained >= 2 or blame.unblamed:
                self._give_up(
                    connection,
                    plans[index + 1 :],
                    "not judged: the server exited again while another tool was explored"
                    f" alone, so it exits whatever is called ({exit_status})",
                )
                return
        if exited(connection):
            await connection.restart()  # the checks that follow the batch call it again

    def _culprit(self, connection: Any) -> Awaitable[Blame]:
        """The search for the call that ended ``connection``'s server, its suspects (the
        calls in flight, answered and cancelled just before the exit, and every call it
        was sent, in order) read now."""
        return find_culprit(
            connection,
            suspects_of(connection),
            self.options.call_timeout,
            lived=connection.lived,
            cancelled=getattr(connection, "cancelled_before_exit", ()),
            history=getattr(connection, "history_before_exit", ()),
        )

    def _give_up(self, connection: Any, plans: list[_Plan], reason: str) -> None:
        """``connection``'s server is not explored again; ``plans`` are not judged."""
        self._given_up.add(id(connection))
        for plan in plans:
            self._to_remake.discard(id(plan.subject))
            self._done[id(plan.subject)] = Observation(
                plan.subject, error=reason, call_timeout=self.options.call_timeout
            )

    async def _after_crash(self, connection: Any, plans: list[_Plan]) -> list[_Plan]:
        """Blame the call that ended the server, restart it; the plans to explore again.

        A second exit with no call to blame gives the server up, so once it has
        exited unexplained the restart waits for a culprit; and an exit no sooner
        than a fresh server left alone exited then is that again: nothing is replayed.
        """
        exit_status = connection.status.describe()
        lived = connection.lived
        before = self._unexplained.get(id(connection))
        status = None
        if before is None:
            # The replays run on processes of their own: the server restarts meanwhile.
            # Both are awaited to their end even if one fails: a restart left running
            # past a failed search would start a server that nobody closes.
            blame, status = _both(
                await asyncio.gather(
                    self._culprit(connection),  # its suspects read now: a restart clears them
                    connection.restart(),
                    return_exceptions=True,
                )
            )
        elif before.explains(lived):
            blame = before
        else:
            blame = await self._culprit(connection)
            if blame.crash is not None:
                status = await connection.restart()
        culprit = blame.crash
        rest = []
        for plan in plans:
            found = self._done.get(id(plan.subject))
            if found is not None and found.crashed is not None:
                continue  # blamed in an earlier round: not called again
            name = plan.subject.extra.get(
                "original_name", getattr(plan.subject.tool, "original_name", None)
            )
            if culprit is not None and name == culprit.tool:
                self._done[id(plan.subject)] = Observation(
                    plan.subject, crashed=culprit, call_timeout=self.options.call_timeout
                )
            else:
                rest.append(plan)
        reason = None
        if status is not None and not status.ok:
            reason = (
                f"not judged: the server exited ({exit_status}) and did not start again:"
                f" {status.describe()}"
            )
        elif culprit is None:
            if before is not None and not (blame.unblamed or before.unblamed):
                # No sign it exits on its own: its tools, explored one at a time, show
                # which one's calls end it (``_one_at_a_time`` restarts it for each).
                self._one_by_one.add(id(connection))
                return rest
            if before is not None:
                why = (
                    blame.unblamed
                    or "no call in flight then, nor one it had just answered or cancelled"
                    " (replayed with its cancel), ends a fresh server when replayed alone"
                )
                reason = (
                    f"not judged: the server exited twice during the exploration, and {why}"
                    f" ({exit_status})"
                )
            self._unexplained[id(connection)] = blame
        if reason is not None:
            self._give_up(connection, rest, reason)
            return []
        return rest

    async def _again_without_the_rest(
        self,
        batch: list[_Plan],
        one: Callable[[_Plan], Awaitable[None]],
        slots: asyncio.Semaphore,
    ) -> None:
        """Tools that did not answer, asked again once the rest of the batch is done.

        A call can miss its bound for want of the machine, not through the tool's
        fault: tools of one MCP server share it (a neighbour's ``time.sleep`` in an
        async handler keeps every other call waiting), and every tool shares the cores
        with the batch and with whatever else runs (``pytest -n`` beside other jobs).
        So the call that hung is made again with only the other silent tools' in
        flight, its bound stretched by the load as the budgets are (``stretch``), no
        more than the tool's processes were held back while it was explored
        (``Observation.stretch``: a tool that sleeps past its bound on a busy machine
        would on a quiet one); a tool that answers it is explored again, and one that does not keeps its
        verdict, at the cost of one more call timeout in all, not one each. These
        calls take the exploration's ``slots`` too: under ``concurrency=1`` (tools that
        must not run together) they are made one after another.
        """
        silent: list[tuple[_Plan, Any, float | None]] = []
        for plan in batch:
            found = self._done.get(id(plan.subject))
            if found is not None and found.unresponsive is not None:
                silent.append((plan, found.unresponsive.args, found.stretch))
        if not silent:
            return
        turns = asyncio.Lock()  # in-process async tools, one at a time (see ``one``)

        async def answers(plan: _Plan, args: Any, held: float | None) -> bool:
            timeout = self._options(plan).call_timeout * (stretch() if held is None else held)
            if not runs_on_loop(plan.subject):
                async with slots:
                    outcome = await call_once(
                        plan.subject.tool, args, ToolContext(), timeout=timeout, scratch=False
                    )
                return not outcome.timed_out
            async with turns, slots:
                self._on_loop_now = id(plan.subject)
                try:
                    outcome = await call_once(
                        plan.subject.tool, args, ToolContext(), timeout=timeout, scratch=False
                    )
                finally:
                    self._on_loop_now = None
            return not outcome.timed_out

        answered = await asyncio.gather(*(answers(*one) for one in silent))
        again = [plan for (plan, _, _), ok in zip(silent, answered, strict=True) if ok]
        for plan in again:
            del self._done[id(plan.subject)]
        await asyncio.gather(*(one(plan) for plan in again))

    def _options(self, plan: _Plan) -> RunOptions:
        """The options of the plan's tool: the run's, with the tool's own call timeout."""
        return self.options.for_tool(plan.subject.target, _name(plan.subject))

    async def _bounded(self, plan: _Plan) -> Observation:
        options = self._options(plan)
        limit = tool_limit(options)
        work = explore_tool(
            plan.subject,
            options,
            frozenset(plan.phases),
            self.workers,
            codes=frozenset(plan.codes),
        )
        started = time.monotonic()
        try:
            return await asyncio.wait_for(work, limit)
        except TimeoutError:
            return Observation(
                plan.subject, error=f"exploring the tool took longer than {limit:g}s in all"
            )
        finally:
            key = id(plan.subject)
            self._seconds[key] = self._seconds.get(key, 0.0) + time.monotonic() - started


def _both(results: Sequence[Any]) -> tuple[Any, Any]:
    """The two results of a ``gather(..., return_exceptions=True)``, or the first failure."""
    for result in results:
        if isinstance(result, BaseException):
            raise result
    first, second = results
    return first, second
