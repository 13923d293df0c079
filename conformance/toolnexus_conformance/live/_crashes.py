"""An MCP server that exited mid-exploration: which call ended it, and only that call.

Tools of one stdio server share its process, so one tool that ends it (``os._exit``,
a segfault, an unhandled error in a handler that takes the process down) leaves
every other tool's calls failing with the same exit. The calls that were in flight
when it exited, then the last calls it answered just before (a handler may end its
process right after answering), are replayed in turn, each on a fresh process of
the server started as the first was (in its sandbox), until one ends it too; more
than ``MAX_REPLAYS`` are first swept on one fresh server (and the call it exited after
is the only one replayed alone: if that ends no fresh server, what the calls swept
before it left in the server did its part), and when none ends one,
the calls cancelled shortly before the exit are replayed with their cancel. That
call's tool is the culprit, with the exact arguments and what the server wrote on
stderr during that replayed call alone. Until a fresh server has survived its call
(and is left alone, below), the next replay starts beside the one under way: a
server start is most of a replay's time, and there is no exit yet to wait for; after
that they go one at a time, so that a server seen exiting on its own costs at most
one start more than it shows.

An exit counts as the replayed call's doing from the moment the call is sent until
the server has answered a ping after it (a handler may end its process just after
answering). A fresh server that exits with no call of ours in flight shows that the
server exits on its own: one that exits before its call is sent, or that, left
alone once it answered its call and the ping, exits no later than the first server
did (a later exit shows nothing: an idle server's timeout, or chance). A server's
age at exit is when it exited, stamped off the session's loop on Linux; elsewhere
when the loop noticed, which on a busy machine is late. The replays stop there and
no tool is blamed, rather than paying a server start per call in flight to learn
it again; a fresh server that does not start stops them too, and says why. (A call
whose effect ends the server later than the ping is not told apart from a server
that exits on its own: either way no tool is blamed.)

When no call replayed alone ends a fresh server, and none has shown that the server
exits on its own, the exit may depend on what earlier calls left in the server (a
tenth call of a counter, a read of what another tool wrote): the calls the server was
sent since it started are replayed in the order sent, one at a time, on one fresh
server. If that ends it too, the sequence is made shorter while it still does (every
call with no arguments, the last of each distinct call, only the last tool's calls,
then halves and smaller parts left out), within ``MAX_SEQUENCE_REPLAYS`` fresh
servers; the last call is blamed with the calls before it, and only if they end a
fresh server again at that call (a server that exits at random does not) and another
tool's call in its place, after them, leaves one running (else the server exits after
so many calls, whatever they are, and no tool is blamed).

A server that answers nothing at all, not even a ping (a handler that blocks its
event loop), is stopped by whoever saw its call run out of its bound
(``ServerConnection.stop_if_silent``) and counts as exited here: its calls are
replayed alike, each on a fresh server probed a second into the call, so that a
fresh server left silent shows it in seconds, not at the call's bound.

A replayed call that does end its server is blamed only if a server left alone
survives as long, or the server could be exiting by itself at that age. The server
left alone after an innocent call's replay is that control; one of its own is
started only when no replay left one. The control is needed only when the replayed
call ended its server sooner than the first server had lived: a server that lived
longer than that is not one that exits on its own at that age.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from ._calls import describe

T = TypeVar("T")

__all__ = [
    "Blame",
    "ServerCrash",
    "connection_of",
    "exit_check",
    "exited",
    "find_culprit",
    "suspects_of",
]

#: The most in-flight calls replayed to find the one that ends the server.
MAX_REPLAYS = 8
#: The most calls replayed with their cancel (``find_culprit``'s ``cancelled``).
MAX_CANCELLED = 2
#: More calls in flight than ``MAX_REPLAYS`` are first swept, up to this many, on one
#: fresh server (``_Replays._sweep``), for at most ``SWEEP_SPAN`` call bounds.
MAX_SWEPT = 64
SWEEP_SPAN = 2
#: What a sweep says when its server answered every call and lives.
_SURVIVED = object()
#: A call as the server was sent it: the tool, its arguments, and how many seconds in
#: the client cancelled it (``None``: it did not).
Sent = tuple[str, Any, "float | None"]
#: The most fresh servers one search for a sequence of calls that ends the server starts
#: to find it (``_Sequence``): the history replayed whole, then shortened; two more check
#: what it found.
MAX_SEQUENCE_REPLAYS = 10
#: How many of the calls before an exit (the newest) are replayed in order.
MAX_HISTORY = 2000
#: The most simplifications tried on the culprit's arguments (one fresh server each).
MAX_SHRINKS = 3
#: Slack added to the control's wait: a server that exits on its own does so by then;
#: and how far apart two servers' ages at exit may be and still be the same exit. On a
#: busy machine it stretches by the load, as the search's budgets do (``slack``).
CONTROL_SLACK = 0.5
#: How often a server left alone is looked at for its exit while it is watched.
WATCH_STEP = 0.05
#: The status reason of a server stopped for answering nothing (``ServerConnection``'s).
STOPPED_ANSWERING = "server stopped answering"
#: How long a probe waits, after a call, before a server that answers it not is stopped.
SILENT_PROBE = 2.0
#: The bound on a replayed call when the first server stopped answering rather than
#: exited: a fresh server that the call leaves answering nothing shows it by then.
SILENT_CALL = 5.0
#: How far into such a replayed call a probe asks whether the fresh server still answers.
SILENT_FIRST = 1.0


def _stretch() -> float:
    from ._search import stretch

    return stretch()


def slack() -> float:
    """``CONTROL_SLACK`` on this machine now: a loaded machine starts a server, and sees
    it exit, later and less evenly, so the same exit shows at ages further apart."""
    return CONTROL_SLACK * _stretch()


@dataclass(frozen=True, slots=True)
class ServerCrash:
    """One call that ends a fresh process of the server, reproduced."""

    server: str
    #: The server's own name for the tool.
    tool: str
    args: Any
    exit_code: int | None
    #: What the server wrote on stderr during the replayed call alone.
    stderr: str
    #: Seconds from the fresh server being ready to its exit.
    after: float
    #: Seconds after the call was sent that the client cancelled it, when the exit
    #: followed a cancel (``None``: the call itself ended the server).
    cancelled_after: float | None = None
    #: The calls sent before it on that fresh server, in order, when the exit needs them
    #: (what they left in the server); ``()``: the call ends a fresh server alone.
    before: tuple[Sent, ...] = ()
    #: The tool whose call, in this one's place after ``before``, left a fresh server
    #: running (``None``: no other tool's call was there to try).
    instead: str | None = None
    #: The server did not exit: it answered nothing after the call, not even a ping,
    #: and was stopped (a handler that blocks its event loop).
    silent: bool = False

    def describe(self) -> str:
        said = self.stderr.strip()
        words = f"its stderr:\n{said}" if said else "it wrote nothing on stderr"
        ended, again = self._ended()
        if self.before:
            cancel = self.cancelled_after
            told = "" if cancel is None else f" and cancelling it {_moment(cancel)}"
            control = (
                f", and with a call of {self.instead!r} in place of the last they do not"
                if self.instead is not None
                else ""
            )
            return (
                f"calling {self.tool!r} with {describe(self.args)}{told}, after"
                f" {_calls_said(self.before)}, {ended}; replayed in that order on a fresh"
                f" server, these calls {again}{control}; {words}"
            )
        if self.cancelled_after is not None:
            return (
                f"calling {self.tool!r} with {describe(self.args)} and cancelling it"
                f" {self.cancelled_after:.2g}s in {ended} after the cancel; replayed alone on"
                f" a fresh server with the same cancel, it {again}; {words}"
            )
        return (
            f"calling {self.tool!r} with {describe(self.args)} {ended}; replayed alone on a"
            f" fresh server, it {again}; {words}"
        )

    def short(self) -> str:
        does = (
            "leaves its server answering nothing, not even a ping"
            if self.silent
            else f"ends its server ({_exit_status(self.exit_code)})"
        )
        if self.before:
            return f"calling it with {describe(self.args)} after {_calls_said(self.before)} {does}"
        if self.cancelled_after is not None:
            return f"cancelling a call with {describe(self.args)} {does}"
        return f"calling it with {describe(self.args)} {does}"

    def _ended(self) -> tuple[str, str]:
        """What the call did to the server, and the same said of its replay (of the call
        or, with calls before it, of all of them)."""
        if self.silent:
            return (
                f"left the server {self.server!r} answering nothing, not even a ping (a"
                " handler that blocks its event loop blocks every tool of it; it was stopped)",
                "leaves it so again" if not self.before else "leave it so again",
            )
        ended = f"ended the server {self.server!r} ({_exit_status(self.exit_code)})"
        return ended, "ends it again" if not self.before else "end it again"


def connection_of(subject: Any) -> Any:
    """The MCP connection behind a tool subject, or ``None`` (any tool not over MCP)."""
    if getattr(subject, "source", None) != "mcp":
        return None
    extra = getattr(subject, "extra", {})
    return extra.get("connection", getattr(getattr(subject, "tool", None), "connection", None))


def exited(connection: Any) -> bool:
    """Whether the server's process exited on its own (not closed by us, not a flood), or
    answered nothing at all, not even a ping, and was stopped (``stop_if_silent``): either
    way every tool of it is lost, and the call that did it is looked for alike."""
    status = getattr(connection, "status", None)
    if status is None or getattr(status, "state", None) != "failed":
        return False
    return str(getattr(status, "reason", "")).startswith(("server exited", STOPPED_ANSWERING))


def silenced(connection: Any) -> bool:
    """Whether the server was stopped for answering nothing (rather than exiting)."""
    status = getattr(connection, "status", None)
    return str(getattr(status, "reason", "")).startswith(STOPPED_ANSWERING)


def exit_check(subject: Any) -> Callable[[], str | None] | None:
    """For an MCP tool, why it can no longer be called: its server exited on its own
    (``None`` while it runs). ``None`` for a tool with no server of its own to lose.

    An exploration asks before each call: once the server has exited, every call fails
    at once with that exit and says nothing of the tool (whose exploration is made
    again on the restarted server), so the exploration stops there.
    """
    connection = connection_of(subject)
    if connection is None:
        return None

    def why() -> str | None:
        if not exited(connection):
            return None
        how = "stopped answering" if silenced(connection) else "exited"
        return f"the server {how} during the exploration ({connection.status.describe()})"

    return why


def suspects_of(connection: Any) -> list[tuple[str, Any]]:
    """The calls to replay after the server exited on its own: those in flight, then
    those it answered just before it exited (a handler may end its process right after
    answering: desktop-commander's ``kill_process`` given 0 signals its own process
    group). The answered ones come last, so a call in flight that ends a fresh server
    is found as soon as before."""
    answered = _distinct(getattr(connection, "answered_before_exit", ()))
    in_flight = [c for c in _distinct(connection.in_flight_at_exit) if c not in answered]
    return [*in_flight, *answered]


@dataclass(frozen=True, slots=True)
class Blame:
    """What replaying the calls in flight showed: the call that ends the server, or why
    no call is blamed."""

    crash: ServerCrash | None = None
    #: Why no call is blamed, when a fresh server showed it ("" when none did).
    unblamed: str = ""
    #: Seconds from ready to exit of a fresh server that exited with no call of ours in
    #: flight: the age at which the server exits on its own, when one showed it.
    exits_alone_at: float | None = None

    def explains(self, lived: float | None) -> bool:
        """Whether a server that lived ``lived`` seconds exited as a fresh one left alone
        did: at that age or later, so its exit needs no replay."""
        alone = self.exits_alone_at
        return alone is not None and lived is not None and lived + slack() >= alone


async def find_culprit(
    connection: Any,
    suspects: Iterable[tuple[str, Any]],
    timeout: float,
    *,
    lived: float | None = None,
    cancelled: Sequence[tuple[str, Any, float, float]] = (),
    history: Sequence[Sent] = (),
) -> Blame:
    """The first in-flight call that ends a fresh server too, or why none is blamed.

    ``lived``: how long the server that exited had been answering, if known.
    ``cancelled``: calls the client cancelled shortly before the exit (the tool, its
    arguments, when the cancel came and how long after it the server exited), each
    replayed with its cancel once no call ends a fresh server by itself.
    ``history``: the calls the server was sent since it started, in order, replayed so
    once no single call ends a fresh server (``_Sequence``).
    """
    replays = _Replays(connection, timeout, lived)
    try:
        return await replays.search(suspects, cancelled, history)
    finally:
        await replays.close()


class _Replays:
    """One search for the culprit, and the fresh server left alone that it keeps."""

    def __init__(self, connection: Any, timeout: float, lived: float | None) -> None:
        self.connection = connection
        self.timeout = timeout
        #: The bound on each replayed call: shorter when the first server was stopped for
        #: answering nothing, which a fresh one shows within ``SILENT_CALL``, not the run's
        #: whole call bound (each replay would wait it out).
        self.silent = silenced(connection)
        self.bound = min(timeout, SILENT_CALL) if self.silent else timeout
        self.lived = lived
        #: A fresh server with no call of ours in flight, and when it was ready.
        self.alone: tuple[Any, float] | None = None

    async def search(
        self,
        suspects: Iterable[tuple[str, Any]],
        cancelled: Sequence[tuple[str, Any, float, float]] = (),
        history: Sequence[Sent] = (),
    ) -> Blame:
        blame = await self._calls(suspects)
        if blame.crash is not None or blame.unblamed:
            return blame
        for tool, args, after, lag in cancelled[-MAX_CANCELLED:]:
            found = await self._replay(tool, args, searching=False, cancel=(after, lag))
            if isinstance(found, ServerCrash):
                return await self._blamed(found, shrink=False)
        if len(history) > 1:
            in_order = await _Sequence(self).search(list(history)[-MAX_HISTORY:])
            if isinstance(in_order, Blame):
                return in_order
            if in_order is not None:
                return await self._blamed(in_order, shrink=not in_order.before)
        return blame

    async def _blamed(self, found: ServerCrash, *, shrink: bool = True) -> Blame:
        """``found`` blamed, unless a fresh server left alone exits as soon: then the
        server exits on its own."""
        margin = slack()
        outlived = self.lived is not None and self.lived > found.after + margin
        alone = None if outlived else await self._control(found.after + margin)
        return alone or Blame(await self._shrink(found) if shrink else found)

    async def _calls(self, suspects: Iterable[tuple[str, Any]]) -> Blame:
        calls = _distinct(suspects)
        if len(calls) > MAX_REPLAYS:
            swept = calls[:MAX_SWEPT]
            first = await self._sweep(swept)
            if first is _SURVIVED:
                # One server took every one of them and lived: none is replayed again,
                # each on a server of its own, to show the same.
                calls = calls[len(swept) :]
            elif isinstance(first, tuple):
                # Replayed alone, the call the sweep's server exited after either ends
                # one again, or needed what the calls swept before it left in the server:
                # the calls in order show that (``_Sequence``), not the others alone.
                calls = [first]
        calls = calls[:MAX_REPLAYS]
        ahead: asyncio.Task[ServerCrash | Blame | None] | None = None
        try:
            for index, call in enumerate(calls):
                found: ServerCrash | Blame | None = self._alone_exited()
                if found is None:
                    replay, ahead = ahead or self._replay_soon(call), None
                    if self.alone is None and index + 1 < len(calls):
                        # No server is left alone yet, whose exit the next replay could
                        # show: it need not wait for this one's answer.
                        ahead = self._replay_soon(calls[index + 1])
                    found = await replay
                if isinstance(found, Blame):
                    return found
                if found is not None:
                    if ahead is not None:
                        await _cancelled(ahead)
                        ahead = None
                    return await self._blamed(found)
            return await self._settled() or Blame()
        finally:
            if ahead is not None:
                await _cancelled(ahead)

    async def call(self, fresh: Any, declared: Any, args: Any) -> Any:
        """One replayed call. When the first server stopped answering, a probe
        ``SILENT_FIRST`` seconds in stops a fresh server the call has left answering
        nothing, so the replay shows it then, not at the call's bound."""
        if not self.silent:
            return await fresh.call(declared, args, None, timeout=self.bound)
        sent = time.monotonic()
        probing = asyncio.Event()

        async def watch() -> None:
            # Both stretch by the load, as the search's bounds do: on a busy machine a
            # healthy fresh server can take a second to answer a ping.
            await asyncio.sleep(SILENT_FIRST * _stretch())
            probing.set()
            await fresh.stop_if_silent(SILENT_PROBE * _stretch(), silent_since=sent)

        watcher = asyncio.ensure_future(watch())
        try:
            return await fresh.call(declared, args, None, timeout=self.bound)
        finally:
            if probing.is_set():
                await asyncio.wait({watcher})  # a stop under way is seen to its end
            await _cancelled(watcher)

    async def _sweep(self, calls: list[tuple[str, Any]]) -> tuple[str, Any] | object | None:
        """The first of ``calls`` after which a fresh server, sent them one at a time
        (each followed by a probe), has exited; ``_SURVIVED`` if it answered them all
        and lives (it is then the server left alone); ``None`` if the sweep could not
        tell (the server did not start, a call did not answer, the sweep ran out of
        time).

        More calls were in flight than a server start each can replay (twenty tools of
        one server explored at once): one server takes them all, and the call it ends
        on is replayed alone first, where the search proves it or moves on. The sweep
        stops at a call that does not answer, and within ``SWEEP_SPAN`` call bounds.
        """
        fresh = self.connection.fresh()
        kept = False
        try:
            with anyio.move_on_after(self.timeout * SWEEP_SPAN):
                if not (await fresh.start()).ok:
                    return None
                ready = time.monotonic()
                declared = {tool.name: tool for tool in fresh.tools}
                for tool, args in calls:
                    if tool not in declared:
                        continue
                    result = await self.call(fresh, declared[tool], args)
                    if await _exited_by_now(fresh, self.timeout):
                        return tool, args
                    if result.metadata.get("error_type") == "TimeoutError":
                        return None
                # Left alone now, it shows whether the server exits by itself, as a
                # replay's server that survived its call would (``_settled``).
                kept = await self._leave_alone(fresh, ready)
                return _SURVIVED
            return None
        finally:
            if not kept:
                await fresh.close()

    async def _settled(self) -> Blame | None:
        """At the search's end, no replayed call having ended its server: whether the
        server left alone exits on its own, watched until the age the first server
        exited (when that is within a call's bound).

        The replays can end before that age on a loaded machine, where each fresh
        server is slow to start and its call quick: the search then said nothing, and
        the restarted server's next exit was replayed all over again (two starts more
        for a server that exits by itself, seen under ``-n 4`` on two cores).
        """
        found = self._alone_exited()
        if found is not None or self.alone is None or self.lived is None:
            return found
        age = self.lived + slack()
        if age > self.timeout:
            return None  # an exit that late is not waited for: the next one is replayed
        await self._watch_alone(age)
        return self._alone_exited()

    def _alone_exited(self) -> Blame | None:
        """Why no call is blamed, once the server left alone exited no later than the
        first server did: a server that exits by that age whatever it is sent (the rule
        ``Blame.explains`` applies to the exits after it). Where an age is when the
        session noticed the exit (no pidfd), the first server's can be seconds late
        on a busy machine; an exit later than it shows nothing (an idle server's
        timeout, or chance)."""
        if self.alone is None:
            return None
        fresh = self.alone[0]
        if not exited(fresh) or fresh.lived is None:
            return None
        blame = _exits_on_its_own(fresh, "with no call in flight")
        if self.lived is not None and not blame.explains(self.lived):
            return None
        return blame

    async def _leave_alone(self, fresh: Any, ready: float) -> bool:
        """Keep ``fresh`` running, alone, unless a server left alone before still runs or
        exited as the first did (while ``fresh`` served its call): that exit is the
        evidence the search stops at, and is not swapped for a server that shows nothing
        yet."""
        before = self.alone
        if before is not None and (not exited(before[0]) or self._alone_exited() is not None):
            return False
        self.alone = (fresh, ready)  # before any await: two replays may finish at once
        if before is not None:
            await before[0].close()
        return True

    def _replay_soon(self, call: tuple[str, Any]) -> asyncio.Task[ServerCrash | Blame | None]:
        """The search's replay of ``call``, started now."""
        return asyncio.ensure_future(self._replay(*call, searching=True))

    async def _replay(
        self,
        tool: str,
        args: Any,
        *,
        searching: bool,
        cancel: tuple[float, float] | None = None,
    ) -> ServerCrash | Blame | None:
        """The call's crash on a fresh server, or ``None`` when the call did not end it.

        ``searching``: a fresh server that shows the server exits on its own (or that
        does not start) ends the search, and the first that survives its call is left
        running, alone, to show whether it does and to serve as the control.
        ``cancel``: the call is cancelled as many seconds in as the first, and the
        server watched for as long after the cancel as the first lived past its own.
        """
        fresh = self.connection.fresh()
        kept = False
        try:
            status = await fresh.start()
            if not status.ok:
                return _not_started(status)
            ready = time.monotonic()
            declared = next((t for t in fresh.tools if t.name == tool), None)
            if declared is None:
                return None
            if searching:
                if exited(fresh):
                    return _exits_on_its_own(fresh, "with no call in flight yet")
                left = self._alone_exited()  # meanwhile: the call is not needed
                if left is not None:
                    return left
            mark = fresh.stderr_mark()
            if cancel is None:
                await self.call(fresh, declared, args)
            else:
                await _call_and_cancel(fresh, declared, args, cancel, self.bound)
            # An exit right after the answer is still this call's doing.
            if not await _exited_by_now(fresh, self.timeout):
                kept = searching and await self._leave_alone(fresh, ready)
                return None
            after = time.monotonic() - ready
            stderr = await fresh.stderr_since(mark)
            return ServerCrash(
                self.connection.config.name,
                tool,
                args,
                fresh.status.exit_code,
                stderr,
                after,
                None if cancel is None else cancel[0],
                silent=silenced(fresh),
            )
        finally:
            if not kept:
                await fresh.close()

    async def _control(self, age: float) -> Blame | None:
        """``None`` when a fresh server with no call in flight is still running ``age``
        seconds after it was ready (the one left alone, else one started now); else why
        no call is blamed."""
        if self.alone is None:
            fresh = self.connection.fresh()
            status = await fresh.start()
            self.alone = (fresh, time.monotonic())
            if not status.ok:
                return _not_started(status)
        fresh = await self._watch_alone(age)
        if not exited(fresh) or (fresh.lived is not None and fresh.lived > age):
            return None
        return Blame(
            unblamed=f"a fresh process left alone exited within {age:.2f}s of being ready too"
            f" ({_exit_status(fresh.status.exit_code)}), as soon as the call ended one: the server"
            " exits on its own",
            exits_alone_at=fresh.lived,
        )

    async def _watch_alone(self, age: float) -> Any:
        """The server left alone, once it has exited or is ``age`` seconds past ready
        and, still running, has answered a ping or not.

        Its exit is looked for every ``WATCH_STEP``: a server that exits on its own ends
        the watch as it exits, not at the first server's age (seconds later, under load).
        """
        assert self.alone is not None
        fresh, ready = self.alone
        await _until_exit(fresh, ready + age)
        await _exited_by_now(fresh, self.timeout)
        return fresh

    async def _shrink(self, crash: ServerCrash) -> ServerCrash:
        """The crash with simpler arguments while it still ends a fresh server: no
        arguments at all first, then one top-level value at a time; a few tries at most,
        since each costs a server start.

        The call in flight at the exit is whichever the search had sent then (under
        load, often one with keys the tool ignores); a tool that ends its server
        whatever it is given is reported with ``{}``.
        """
        if not isinstance(crash.args, dict) or not crash.args:
            return crash
        keys = [key for key in crash.args if not _simplest(crash.args[key])][: MAX_SHRINKS - 1]
        # No arguments, and the first key made simpler, at once: that key is tried on the
        # same arguments whatever the bare call shows, unless it ends the server too.
        tries = [self._replay(crash.tool, {}, searching=False)]
        if keys:
            tries.append(
                self._replay(crash.tool, _simplified(crash.args, keys[0]), searching=False)
            )
        bare, *first = await _together(*tries)
        if isinstance(bare, ServerCrash):
            return bare
        if first and isinstance(first[0], ServerCrash):
            crash = first[0]
        for key in keys[1:]:
            again = await self._replay(crash.tool, _simplified(crash.args, key), searching=False)
            if isinstance(again, ServerCrash):
                crash = again
        return crash

    async def close(self) -> None:
        if self.alone is not None:
            await self.alone[0].close()


class _Sequence:
    """One search for the calls that, sent in order, end a fresh server: the history
    replayed whole on one fresh server, then shortened while it still ends one, within
    ``MAX_SEQUENCE_REPLAYS`` fresh servers, and checked (``_checked``) on two more.

    Every shortening kept has been seen ending a fresh server, so the calls reported
    reproduce the exit however early the budget runs out; they are as short as the
    budget allowed, not proven the shortest.
    """

    def __init__(self, replays: _Replays) -> None:
        self.replays = replays
        self.left = MAX_SEQUENCE_REPLAYS  # and two more for ``_checked``
        #: How long one replay of a sequence may take, its server's start included.
        self.span = replays.timeout * SWEEP_SPAN
        #: What each sequence replayed showed, so that none is replayed twice.
        self.seen: dict[tuple[str, ...], ServerCrash | None] = {}

    async def search(self, history: list[Sent]) -> ServerCrash | Blame | None:
        """The shortest sequence found that ends a fresh server, its last call blamed;
        ``Blame`` when another tool's call in its place ends the server too; ``None``
        when the calls, replayed in order, end none."""
        began = time.monotonic()
        found = await self._in_order(history)
        if found is None or not found.before:
            return found
        # The shortened replays run no longer than twice the whole one did (its server's
        # start, its calls, the probe that found it silent), or a call's bound.
        self.span = min(self.span, max(2 * (time.monotonic() - began), self.replays.timeout))
        found = await self._shortened(found)
        return await self._checked(found, history)

    async def _in_order(self, calls: list[Sent], *, counted: bool = True) -> ServerCrash | None:
        """``calls`` sent one at a time to a fresh server, each followed by a probe: the
        crash at the call after which it has exited, or ``None`` (it lived, did not
        start, exited before a call was in flight, the replay ran out of time, or
        ``counted``, out of fresh servers)."""
        key = tuple(_key(call) for call in calls)
        if key in self.seen:
            return self.seen[key]
        if counted:
            if self.left <= 0:
                return None
            self.left -= 1
        self.seen[key] = found = await self._replayed(calls)
        return found

    async def _replayed(self, calls: list[Sent]) -> ServerCrash | None:
        replays = self.replays
        fresh = replays.connection.fresh()
        try:
            with anyio.move_on_after(self.span):
                if not (await fresh.start()).ok:
                    return None
                ready = time.monotonic()
                declared = {tool.name: tool for tool in fresh.tools}
                sent: list[Sent] = []
                for call in calls:
                    tool, args, cancel = call
                    if tool not in declared:
                        continue
                    if exited(fresh):
                        return None  # with no call in flight: not the calls' doing
                    mark = fresh.stderr_mark()
                    if cancel is None or replays.silent:
                        # A server left answering nothing makes every call after time out:
                        # those cancels are its doing, and the probe shows it sooner.
                        await replays.call(fresh, declared[tool], args)
                        cancel = None
                    elif not await _cancelled_call(
                        fresh, declared[tool], args, cancel, replays.bound
                    ):
                        cancel = None  # answered before its cancel: said as a plain call
                    call = (tool, args, cancel)
                    if await _exited_by_now(fresh, replays.timeout):
                        age = fresh.lived if fresh.lived is not None else time.monotonic() - ready
                        return ServerCrash(
                            replays.connection.config.name,
                            tool,
                            args,
                            fresh.status.exit_code,
                            await fresh.stderr_since(mark),
                            age,
                            cancel,
                            before=tuple(sent),
                            silent=silenced(fresh),
                        )
                    sent.append(call)
            return None
        finally:
            await fresh.close()

    async def _fewer(self, found: ServerCrash, before: list[Sent]) -> ServerCrash:
        """``found`` after only ``before``, if they are fewer calls and still end a fresh
        server; else ``found`` as it was."""
        if len(before) >= len(found.before):
            return found
        return await self._ends(before, found) or found

    async def _ends(self, before: list[Sent], found: ServerCrash) -> ServerCrash | None:
        """The crash when ``before`` then ``found``'s call end a fresh server (at whichever
        call it exits: an earlier exit is a shorter sequence still)."""
        return await self._in_order([*before, _sent(found)])

    async def _shortened(self, found: ServerCrash) -> ServerCrash:
        """``found`` with fewer calls before it: every call with no arguments and no
        cancel (else with no arguments), the last of each distinct call, those of its
        own tool alone, then (delta debugging) parts of them left out in turn, the parts
        halved when none can go."""
        # A tool that ends the server whatever it is given is reported so, as a call alone
        # is (``_Replays._shrink``); bare calls repeat, so fewer are distinct; and the
        # kit's own cancels (a call cancelled as it is sent) are said only if needed.
        calls = [*found.before, _sent(found)]
        for keep_cancels in (False, True):
            simpler: list[Sent] = [
                (tool, {}, cancel if keep_cancels else None) for tool, _, cancel in calls
            ]
            if simpler != calls:
                shorter = await self._in_order(simpler)
                if shorter is not None:
                    found = shorter
                    break
        found = await self._fewer(found, _last_of_each(list(found.before)))
        found = await self._fewer(found, _of_tool(list(found.before), found.tool))
        before = list(found.before)
        if {_key(call) for call in before} == {_key(_sent(found))}:
            # The same call over and over: a replay stops at the first exit, so fewer of
            # them, a prefix of the calls it made, ended no server (a counter's tenth).
            return found
        parts = 2
        while before and self.left > 0:
            parts = min(parts, len(before))
            size = -(-len(before) // parts)
            for start in range(0, len(before), size):
                shorter = await self._ends(before[:start] + before[start + size :], found)
                if shorter is not None:
                    found, before = shorter, list(shorter.before)
                    parts = max(parts - 1, 2)
                    break
                if self.left <= 0:
                    return found
            else:
                if parts >= len(before):
                    return found
                parts = min(2 * parts, len(before))
        return found

    async def _checked(self, found: ServerCrash, history: list[Sent]) -> ServerCrash | Blame | None:
        """``found``, once its calls end a fresh server again, at the same call, and
        another tool's call in place of its last leaves one running. Made whatever is
        left of the budget: they are what makes the blame fair.

        A server that exits at random ends some replays and not others, each at another
        call: the shortening then keeps whichever ended one, and only a second replay
        of the same calls tells that apart. If the other tool's call ends the server
        too, it exits after so many calls whatever they are (or some time after one of
        them), and no tool is blamed.
        """
        calls = [*found.before, _sent(found)]
        again = await self._replayed(calls)
        if again is None or [_key(c) for c in (*again.before, _sent(again))] != [
            _key(c) for c in calls
        ]:
            return None
        other = _other_call(history, found)
        if other is None:
            return found
        replaced = await self._in_order([*found.before, other], counted=False)
        if replaced is not None:
            return Blame(
                unblamed=f"replayed in order on a fresh server, {len(calls)} calls ended it"
                f" whether the last was {found.tool!r} or {other[0]!r}: the exit follows from"
                " the calls before them, not from one tool's call",
            )
        return dataclasses.replace(found, instead=other[0])


def _sent(crash: ServerCrash) -> Sent:
    return crash.tool, crash.args, crash.cancelled_after


def _last_of_each(calls: list[Sent]) -> list[Sent]:
    """Each distinct call once, where it was last made, in the order of those last calls."""
    keys = [_key(call) for call in calls]
    last = {key: index for index, key in enumerate(keys)}
    return [call for index, call in enumerate(calls) if last[keys[index]] == index]


def _moment(after: float) -> str:
    """When a cancel came, in words: the kit's own cancel as a call is sent comes at once."""
    return "at once" if after < 0.01 else f"{after:.2g}s in"


def _of_tool(calls: list[Sent], tool: str) -> list[Sent]:
    """The calls of ``tool`` alone."""
    return [call for call in calls if call[0] == tool]


def _call_key(tool: str, args: Any) -> str:
    """The same tool with the same arguments: the same call, replayed alike."""
    return tool + "\0" + json.dumps(args, sort_keys=True, default=repr)


def _key(call: Sent) -> str:
    """The same call, cancelled or not."""
    tool, args, cancel = call
    return f"{_call_key(tool, args)}\0{cancel is not None}"


def _other_call(history: list[Sent], found: ServerCrash) -> Sent | None:
    """A call of another tool from the history, to send in place of the blamed one: the
    newest not cancelled, of a tool not among the calls before it if there is one."""
    others = [call for call in reversed(history) if call[0] != found.tool and call[2] is None]
    used = {call[0] for call in found.before}
    return next((c for c in others if c[0] not in used), others[0] if others else None)


def _calls_said(calls: Sequence[Sent], most: int = 4) -> str:
    """The calls in words, a call repeated in a row said once with how many times; the
    last ``most`` of them, after how many came before."""
    runs: list[tuple[Sent, int]] = []
    for call in calls:
        if runs and _key(runs[-1][0]) == _key(call):
            runs[-1] = (call, runs[-1][1] + 1)
        else:
            runs.append((call, 1))
    words = []
    for (tool, args, cancel), times in runs[-most:]:
        text = f"{tool!r} with {describe(args)}"
        if cancel is not None:
            text += f" cancelled {_moment(cancel)}"
        words.append(text + (f" {times} times" if times > 1 else ""))
    earlier = sum(times for _, times in runs[:-most])
    if earlier:
        words.insert(0, f"{earlier} other call{'s' if earlier > 1 else ''}")
    return ", then ".join(words)


async def _call_and_cancel(
    fresh: Any, declared: Any, args: Any, cancel: tuple[float, float], timeout: float
) -> None:
    """``args`` sent to a fresh server and cancelled ``cancel[0]`` seconds in, as the
    first server's call was; then the server watched for ``cancel[1]`` seconds more
    (how long the first lived past its cancel, and some slack), until it exits."""
    after, lag = cancel
    await _cancelled_call(fresh, declared, args, after, timeout)
    await _until_exit(fresh, time.monotonic() + min(timeout, lag + slack()))


async def _cancelled_call(
    fresh: Any, declared: Any, args: Any, after: float, timeout: float
) -> bool:
    """``args`` sent to ``fresh`` and cancelled ``after`` seconds in; whether the cancel
    came before the answer."""
    from toolnexus_ref import ToolContext

    ctx = ToolContext()
    timer = asyncio.get_running_loop().call_later(after, ctx.cancel, "replaying a cancel")
    try:
        await fresh.call(declared, args, ctx, timeout=timeout)
    finally:
        timer.cancel()
    return ctx.is_cancelled()


async def _until_exit(fresh: Any, deadline: float) -> None:
    """Until ``fresh`` has exited or it is ``deadline``, looked at every ``WATCH_STEP``."""
    while not exited(fresh) and time.monotonic() < deadline:
        await anyio.sleep(min(WATCH_STEP, max(0.0, deadline - time.monotonic())))


async def _exited_by_now(fresh: Any, timeout: float) -> bool:
    """Whether ``fresh`` has exited, asked with a probe if it is not seen to have: an
    exit that comes just after an answer shows only to the next request, and a server
    left answering nothing answers no probe (it is then stopped: ``stop_if_silent``)."""
    if not exited(fresh):
        wait = min(timeout, SILENT_PROBE) * _stretch()
        await fresh.stop_if_silent(wait, silent_since=time.monotonic())
    return exited(fresh)


def _not_started(status: Any) -> Blame:
    """Why no call is blamed when a fresh server did not start: it exited meanwhile, with
    no call in flight, or it could not start at all (which says nothing of the calls).

    A server that exits on its own before it is even ready (its start slowed by a busy
    machine past its own lease) exits alone at age 0: any later exit is that again, and
    is not replayed (``Blame.explains``), as for one that exited once ready.
    """
    if status.exit_code is not None and not status.reason.startswith("timed out"):
        return Blame(
            unblamed=f"a fresh process exited while it started, with no call in flight:"
            f" {status.describe()}",
            exits_alone_at=0.0,
        )
    return Blame(unblamed=f"a fresh process did not start: {status.describe()}")


def _exits_on_its_own(fresh: Any, when: str) -> Blame:
    """No call is blamed: ``fresh`` exited while none of ours was in flight (``when``)."""
    return Blame(
        unblamed=f"a fresh process exited {fresh.lived:.2f}s after it was ready, {when}"
        f" ({_exit_status(fresh.status.exit_code)}): the server exits on its own",
        exits_alone_at=fresh.lived,
    )


def _exit_status(code: int | None) -> str:
    return f"exit status {'unknown' if code is None else code}"


def _simpler(value: Any) -> Any:
    """The simplest value of the same JSON type, or the value itself when it is that."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return 0
    if isinstance(value, str):
        return ""
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    return value


def _simplest(value: Any) -> bool:
    simpler = _simpler(value)
    return bool(simpler == value and type(simpler) is type(value))


def _simplified(args: dict[str, Any], key: str) -> dict[str, Any]:
    return {**args, key: _simpler(args[key])}


def _distinct(suspects: Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """The calls, each once (the same tool and arguments replay alike)."""
    seen: dict[str, tuple[str, Any]] = {}
    for tool, args in suspects:
        seen.setdefault(_call_key(tool, args), (tool, args))
    return list(seen.values())


async def _cancelled(task: asyncio.Task[Any]) -> None:
    """``task`` ended: cancelled if still running (its fresh server is closed as it ends)."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: a replay cut short says nothing


async def _together(*steps: Awaitable[T]) -> list[T]:
    """The steps' results, run at once; if one raises, the others are cancelled."""
    tasks = [asyncio.ensure_future(step) for step in steps]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            if not task.done():
                await _cancelled(task)
