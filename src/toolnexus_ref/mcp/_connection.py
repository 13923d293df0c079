"""One MCP server: a task that owns the session, a status, and calls made from any task.

The SDK's ``Client`` enters anyio task groups and cancel scopes that must be left
by the task that entered them, so one owner task per server holds ``async with
Client(...)`` open until ``close()``; requests are sent from the caller's own task
(the SDK's dispatcher allows that), so a cancelled call cancels only itself.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import itertools
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client, MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from .._calling import guard
from .._context import ToolContext
from .._mcp_config import ServerConfig
from .._naming import sanitize
from .._result import ToolResult
from .._secret import redact
from ._liveness import SharedProbe
from ._progress import ProgressLog
from ._results import describe_invalid, from_call_result, from_mcp_error, output_schema_errors
from ._stdio import Launcher, ServerProcess, stdio_transport

__all__ = ["ServerConnection", "ServerStatus"]

State = Literal["connected", "disabled", "failed"]
Phase = Literal["start", "handshake", "listing", "ready", "closed"]
#: A paginator that never ends must not hang the listing, nor fill a run with tools that
#: each cost a full suite: past this many pages the listing stops.
MAX_PAGES = 100
#: More tools than any model can be offered; past this many the listing stops.
MAX_TOOLS = 10_000
#: How long ``close()`` waits for the owner task before cancelling it outright.
CLOSE_LIMIT = 8.0
#: A call answered at most this many seconds before the server exited on its own is
#: kept as a suspect (``answered_before_exit``), the last ``ANSWERED_KEPT`` of them: a
#: handler may end its own process just after it answers (desktop-commander's
#: ``kill_process`` given the server's own pid, or 0, its process group).
ANSWERED_WINDOW = 0.5
ANSWERED_KEPT = 2
#: A call cancelled (or timed out) at most this many seconds before the server exited
#: on its own is kept as a suspect with its cancel (``cancelled_before_exit``), the
#: last ``CANCELLED_KEPT`` of them: a handler that goes on past its cancel and answers
#: after all can take the server down (the mcp SDK 1.x asserts that a request is
#: answered once; arxiv-mcp-server exits so, seconds after the cancel).
CANCELLED_WINDOW = 30.0
CANCELLED_KEPT = 2
#: The calls sent to a server since it started, the newest this many, are kept in the
#: order sent (``history_before_exit``): an exit that depends on what earlier calls left
#: in the server shows only when they are replayed in that order.
HISTORY_KEPT = 2000
#: How ``probe()`` says the server did not answer in time.
SILENT = "the server did not answer within"
#: The status reason of a server stopped because it answered nothing (``stop_if_silent``).
STOPPED_ANSWERING = "server stopped answering"


@dataclass(slots=True)
class SentCall:
    """One call as the server was sent it, and when its cancel came (if it came)."""

    tool: str
    args: dict[str, Any]
    #: When it was sent (``time.monotonic()``).
    at: float
    #: Seconds after it was sent that the client cancelled it (or its bound ran out).
    cancelled_after: float | None = None
    #: When the server answered it (``None``: it did not, or was cancelled first).
    answered_at: float | None = None

    @property
    def cancelled_at(self) -> float | None:
        return None if self.cancelled_after is None else self.at + self.cancelled_after


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """How a server fared: ``connected``, ``disabled``, or ``failed`` with the reason."""

    name: str
    state: State
    reason: str = ""
    stderr_tail: str = ""
    #: The phase that was running when it failed (start, handshake, listing, ready).
    phase: str = ""
    protocol_version: str | None = None
    exit_code: int | None = None
    #: Seconds from start until connected (or failed).
    elapsed: float = 0.0
    tool_count: int = 0
    #: What the server did against the protocol without failing: output on stdout that is
    #: not JSON-RPC, a listing that never stopped paging. A target check reports these.
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.state == "connected"

    def describe(self) -> str:
        """The reason with the stderr tail, as a failure message shows it."""
        text = f"{self.name}: {self.state}" + (f": {self.reason}" if self.reason else "")
        if self.stderr_tail:
            text += "\n--- stderr (tail) ---\n" + self.stderr_tail
        return text


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe_error(exc: BaseException) -> str:
    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return f"MCP error {leaf.code}: {leaf.message}"
    if isinstance(leaf, ValidationError):
        return f"the server's answer is malformed: {describe_invalid(leaf)}"
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


class ServerConnection:
    """Connects one configured server and serves its calls until closed."""

    def __init__(
        self, config: ServerConfig, *, client_factory: Any = None, launcher: Launcher | None = None
    ) -> None:
        self.config = config
        self._launcher = launcher
        self.tools: list[mcp_types.Tool] = []
        self._process: ServerProcess | None = None
        self._client: Client | None = None
        self._client_factory = client_factory
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._phase: Phase = "start"
        self._started = 0.0
        self._progress_logs: dict[str, ProgressLog] = {}
        self._listing_problems: list[str] = []
        #: ``stderr_size()`` marks of the calls in flight, so a crash shows its own stderr.
        self._call_marks: dict[int, int] = {}
        self._call_keys = itertools.count()
        self._last_mark = 0
        #: The calls in flight, by key: which tool, with which arguments.
        self._in_flight: dict[int, tuple[str, dict[str, Any]]] = {}
        #: The calls that were in flight when the server exited on its own, oldest first:
        #: one of them is likely what ended it (a checker replays them to find which).
        self.in_flight_at_exit: tuple[tuple[str, dict[str, Any]], ...] = ()
        #: The calls the server answered just before it exited on its own (within
        #: ``ANSWERED_WINDOW``), oldest first: suspects too, if none in flight ended it.
        self.answered_before_exit: tuple[tuple[str, dict[str, Any]], ...] = ()
        #: The calls cancelled within ``CANCELLED_WINDOW`` before the server exited on its
        #: own, oldest first: the tool, its arguments, how long after it was sent the
        #: cancel came, and how long after the cancel the server exited.
        self.cancelled_before_exit: tuple[tuple[str, dict[str, Any], float, float], ...] = ()
        #: The calls sent since the server started, oldest first (``HISTORY_KEPT``).
        self._sent: collections.deque[SentCall] = collections.deque(maxlen=HISTORY_KEPT)
        #: Those calls, as they stood when the server exited on its own: the tool, its
        #: arguments and when it was cancelled (``None``: it was not).
        self.history_before_exit: tuple[tuple[str, dict[str, Any], float | None], ...] = ()
        #: Seconds the server answered before it exited on its own (``None`` while it runs).
        self.lived: float | None = None
        self._ready_at: float | None = None
        #: ``probe()``'s requests, shared by the tools that ask at about the same time.
        self.liveness = SharedProbe(self._answer)
        if config.problem is not None and config.enabled:
            self._status = ServerStatus(config.name, "failed", config.problem, phase="config")
        else:
            self._status = ServerStatus(
                config.name,
                "disabled" if not config.enabled else "failed",
                "disabled in the config" if not config.enabled else "not started",
            )

    @property
    def status(self) -> ServerStatus:
        """How the server fares now, with every protocol problem seen so far."""
        problems = list(self._listing_problems)
        process = self._process
        if process is not None and process.fault is not None and self._status.state == "connected":
            self._fail(process.fault)  # stopped for a flood; it may not have exited yet
        if process is not None and process.noise.lines and process.fault is None:
            problems.insert(0, process.noise.describe())
        if not problems:
            return self._status
        secrets = self.config.secrets()
        return dataclasses.replace(
            self._status, problems=tuple(redact(p, secrets) for p in problems)
        )

    @status.setter
    def status(self, value: ServerStatus) -> None:
        self._status = value

    def preset(self, tools: list[mcp_types.Tool], status: ServerStatus) -> None:
        """Hold what another process listed, before this one starts (``listed_servers``).

        ``start`` replaces both with what the server says then.
        """
        self.tools = list(tools)
        self._status = status

    # -- lifecycle ----------------------------------------------------------------------
    async def start(self) -> ServerStatus:
        """Start, handshake and list, each phase within the config's timeout. Never raises."""
        if not self.config.enabled or self.config.problem is not None:
            return self.status
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._started = time.monotonic()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp-server-{self.config.name}")
        # The owner bounds every phase itself; this outer bound only guards against a bug.
        limit = 3 * self.config.timeout + CLOSE_LIMIT
        done, _ = await asyncio.wait(
            {ready, self._owner}, timeout=limit, return_when=asyncio.FIRST_COMPLETED
        )
        if not done:
            self._fail(f"did not start within {limit:g}s")
            await self.close()
        return self.status

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            with anyio.CancelScope() as scope:
                scope.deadline = anyio.current_time() + self.config.timeout
                async with contextlib.AsyncExitStack() as stack:
                    self._phase = "start"
                    transport = await self._transport(stack)
                    self._phase = "handshake"
                    scope.deadline = anyio.current_time() + self.config.timeout
                    client = Client(transport, mode="auto", message_handler=self._on_message)
                    self._client = await stack.enter_async_context(client)
                    self._adopt_server_name(self._client)
                    self._phase = "listing"
                    scope.deadline = anyio.current_time() + self.config.timeout
                    self.tools = await self._list_all(self._client)
                    scope.deadline = math.inf
                    self._phase = "ready"
                    self._ready_at = time.monotonic()
                    self.status = ServerStatus(
                        self.config.name,
                        "connected",
                        protocol_version=self._client.protocol_version,
                        elapsed=time.monotonic() - self._started,
                        tool_count=len(self.tools),
                    )
                    ready.set_result(None)
                    await self._serve_until_stopped()
                    self._phase = "closed"
            if scope.cancelled_caught and self._phase != "ready":
                process = self._process
                if process is not None and process.returncode is not None:
                    # Stopped: what it wrote before, read to the end (bounded), as when it exits.
                    await process.stderr_read()
                self._fail(f"timed out after {self.config.timeout:g}s during {self._phase}")
        except Exception as exc:
            exited = self.status.reason.startswith(("server exited", STOPPED_ANSWERING))
            if self._phase != "closed" and not exited:  # errors while closing change nothing
                self._fail(_describe_error(exc))
        finally:
            self._client = None
            if not ready.done():
                ready.set_result(None)

    async def _serve_until_stopped(self) -> None:
        """Wait for ``close()``; notice a server process that exits on its own."""
        assert self._stop is not None
        process = self._process
        if process is None or process.stdout_closed is None:
            await self._stop.wait()
            return
        stop_task = asyncio.ensure_future(self._stop.wait())
        exit_task = asyncio.ensure_future(process.stdout_closed.wait())
        try:
            await asyncio.wait({stop_task, exit_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_task.cancel()
            exit_task.cancel()
        if not self._stop.is_set():
            await self._mark_exited()
            await self._stop.wait()

    async def _transport(self, stack: contextlib.AsyncExitStack) -> Any:
        if self._client_factory is not None:
            return self._client_factory()
        config = self.config
        if config.type == "stdio":
            self._process = ServerProcess(tuple(config.command))
            env = {k: v.reveal() for k, v in config.env.items()}
            return await stack.enter_async_context(
                _Entered(
                    stdio_transport(self._process, env=env, cwd=config.cwd, launcher=self._launcher)
                )
            )
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {k: v.reveal() for k, v in config.headers.items()}
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        assert config.url is not None
        return streamable_http_client(config.url, http_client=http)

    def rename(self, name: str) -> None:
        """Call the server ``name`` from now on (before its tools are handed out)."""
        self.config = dataclasses.replace(self.config, name=name)
        self._status = dataclasses.replace(self._status, name=name)

    def _adopt_server_name(self, client: Client) -> None:
        """Name a server the user did not name after its ``serverInfo``, once it says it."""
        if not self.config.named_by_server:
            return
        info = client.server_info
        told = sanitize(info.name).strip("_") if info is not None and info.name else ""
        if told:
            self.config = dataclasses.replace(self.config, name=told, named_by_server=False)

    async def _list_all(self, client: Client) -> list[mcp_types.Tool]:
        """Every page of ``tools/list``; a listing that does not end is cut and recorded.

        A name listed twice is kept once (tool names are unique on a server) and recorded.
        """
        tools: list[mcp_types.Tool] = []
        names: set[str] = set()
        repeated: list[str] = []
        cursor: str | None = None
        seen: set[str] = set()
        try:
            for page_number in range(1, MAX_PAGES + 1):
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                for declared in page.tools:
                    if declared.name in names:
                        repeated.append(declared.name)
                    else:
                        names.add(declared.name)
                        tools.append(declared)
                if len(tools) > MAX_TOOLS:
                    self._listing_problems.append(
                        f"tools/list gave more than {MAX_TOOLS:,} tools ({len(tools):,} by page"
                        f" {page_number}); listing stopped there and the first {MAX_TOOLS:,}"
                        " are judged"
                    )
                    return tools[:MAX_TOOLS]
                cursor = page.next_cursor
                if cursor is None:
                    return tools
                if cursor in seen:
                    self._listing_problems.append(
                        f"tools/list paging loops: page {page_number} gave a cursor already seen"
                        f" ({_short(cursor)}); listing stopped there with {len(tools):,} tools"
                    )
                    return tools
                seen.add(cursor)
            self._listing_problems.append(
                f"tools/list was still paging after {MAX_PAGES:,} pages ({len(tools):,} tools,"
                f" last cursor {_short(cursor)}); listing stopped there"
            )
            return tools
        finally:
            if repeated:
                shown = ", ".join(repr(n) for n in sorted(set(repeated))[:5])
                self._listing_problems.append(
                    f"tools/list listed {len(repeated):,} tools under a name it had already"
                    f" listed ({shown}); each name is kept once"
                )

    def fresh(self) -> ServerConnection:
        """A new, unstarted connection to another process of the same server, started
        the same way (its launcher: a sandbox's, where the first one ran in one)."""
        return ServerConnection(
            self.config, client_factory=self._client_factory, launcher=self._launcher
        )

    async def restart(self) -> ServerStatus:
        """Close this server (whatever its state) and start a new process of it.

        The tools handed out stay bound to this connection, so they call the new
        process; a tool the new process no longer lists answers as an unknown tool.
        """
        await self.close()
        self.liveness.cancel()
        self.liveness = SharedProbe(self._answer)
        self._owner = None
        self._stop = None
        self._client = None
        self._process = None
        self._phase = "start"
        self._call_marks.clear()
        self._in_flight.clear()
        self.cancelled_before_exit = ()
        self._sent.clear()
        self.history_before_exit = ()
        self._last_mark = 0
        self._listing_problems.clear()
        self.in_flight_at_exit = ()
        self.answered_before_exit = ()
        self.lived = None
        self._ready_at = None
        self._status = ServerStatus(self.config.name, "failed", "not started")
        return await self.start()

    async def close(self) -> None:
        """End the session and the server's whole process tree; bounded, idempotent."""
        self.liveness.cancel()
        owner = self._owner
        if owner is None or owner.done():
            return
        if self._stop is not None:
            self._stop.set()
        _, pending = await asyncio.wait({owner}, timeout=CLOSE_LIMIT)
        if pending:
            owner.cancel()
            await asyncio.wait({owner}, timeout=CLOSE_LIMIT)

    # -- progress -----------------------------------------------------------------------
    @contextlib.contextmanager
    def progress_log(self) -> Iterator[ProgressLog]:
        """Record progress for a call made with ``progress=`` the log, until the block ends.

        The log outlives the call on purpose: progress that arrives after the call
        was cancelled is exactly what a caller may want to see.
        """
        log = ProgressLog()
        self._progress_logs[log.token] = log
        try:
            yield log
        finally:
            self._progress_logs.pop(log.token, None)

    async def _on_message(self, message: Any) -> None:
        """The session's message handler: every server notification, whatever its request."""
        if isinstance(message, mcp_types.ProgressNotification):
            params = message.params
            log = self._progress_logs.get(str(params.progress_token))
            if log is not None:
                log.record(params.progress, params.total, params.message)

    # -- status -------------------------------------------------------------------------
    def _fail(self, reason: str, *, stderr_since: int = 0) -> None:
        process = self._process
        if process is not None and process.fault is not None:
            reason = process.fault  # why the kit stopped reading says more than its symptom
        tail = process.stderr_tail(since=stderr_since) if process else ""
        self.status = ServerStatus(
            self.config.name,
            "failed",
            redact(reason, self.config.secrets()),
            redact(tail, self.config.secrets()),
            phase=self._phase,
            exit_code=process.returncode if process else None,
            elapsed=time.monotonic() - self._started,
            tool_count=len(self.tools),
        )

    async def _mark_exited(self) -> None:
        process = self._process
        if process is None or process.closing or self.status.reason.startswith(STOPPED_ANSWERING):
            return  # closed by us: a call cut short by it says nothing more
        # When it exited, where that was stamped off the loop (a busy loop notices late).
        self._keep_the_calls(min(time.monotonic(), process.exited_at or math.inf))
        code = await process.wait_exit(1.0)
        await process.stderr_read()
        shown = "unknown" if code is None else str(code)
        # The stderr of this crash: what came after the oldest call still in flight.
        since = min(self._call_marks.values(), default=self._last_mark)
        if not process.stderr_tail(since=since).strip():
            # Nothing after the calls in flight: the server's last words came before the
            # oldest of them was sent (a call made while the crash was being written).
            since = 0
        self._fail(f"server exited (code {shown})", stderr_since=since)

    def _keep_the_calls(self, ended: float, unanswered_since: float | None = None) -> None:
        """How long the server lived, and the calls around its end (in flight, answered
        and cancelled just before, all it was sent), kept for whoever looks for the call
        that ended it; once, at its first end."""
        if self.lived is not None or self._ready_at is None:
            return
        self.lived = max(0.0, ended - self._ready_at)
        self.in_flight_at_exit = tuple(self._in_flight[k] for k in sorted(self._in_flight))
        if unanswered_since is not None:
            # A server that stopped answering left unanswered the calls since, which their
            # callers gave up on (their bound ran out): in flight as far as it knows.
            given_up = tuple(
                (sent.tool, sent.args)
                for sent in self._sent
                if sent.at >= unanswered_since and sent.cancelled_after is not None
            )
            self.in_flight_at_exit = given_up + self.in_flight_at_exit
        self.answered_before_exit = tuple(
            (sent.tool, sent.args)
            for at, sent in self._latest("answered_at", ANSWERED_KEPT)
            if ended - at <= ANSWERED_WINDOW
        )
        self.cancelled_before_exit = tuple(
            (sent.tool, sent.args, at - sent.at, max(0.0, ended - at))
            for at, sent in self._latest("cancelled_at", CANCELLED_KEPT)
            if ended - at <= CANCELLED_WINDOW
        )
        self.history_before_exit = tuple(
            (sent.tool, sent.args, sent.cancelled_after) for sent in self._sent
        )

    def _latest(self, moment: str, kept: int) -> list[tuple[float, SentCall]]:
        """The last ``kept`` calls sent that were answered, or cancelled (``moment``: the
        ``SentCall`` attribute saying when), in the order that happened, with when."""
        stamped = [(getattr(sent, moment), i, sent) for i, sent in enumerate(self._sent)]
        happened = sorted(entry for entry in stamped if entry[0] is not None)[-kept:]
        return [(at, sent) for at, _, sent in happened]

    async def stop_if_silent(self, timeout: float, *, silent_since: float) -> bool:
        """Probe the server; if it does not answer within ``timeout`` either, end its
        process and fail its status as an exit does (``server stopped answering``),
        the calls around its end kept as for an exit. ``True`` when it was stopped so.

        For a caller whose call got no answer (since ``silent_since``): a server whose
        handler blocks its one event loop (``time.sleep`` in ``async def``) answers
        nothing, not even a ping, ever again; every call of every tool would wait out
        its bound. A server that is merely busy with that call answers the probe. Only
        a stdio server (a process of ours) is stopped.
        """
        process = self._process
        if not self.alive or process is None:
            return False  # a server over HTTP is not ours to stop
        problem = await self.probe(timeout)
        if problem is None or not problem.startswith(SILENT) or process is not self._process:
            return False
        if self.status.state != "connected":
            return False  # it exited, or was stopped, while the probe waited
        process.unresponsive = True  # no grace: it would not take it
        waited = time.monotonic() - silent_since
        self._keep_the_calls(silent_since, unanswered_since=silent_since)
        since = min(self._call_marks.values(), default=self._last_mark)
        self._fail(
            f"{STOPPED_ANSWERING}: nothing answered for {waited:.1f}s, not even a ping",
            stderr_since=since,
        )
        await self.close()
        return True

    @property
    def process(self) -> ServerProcess | None:
        """The server's process (stdio servers only), for its pid, stderr and exit code."""
        return self._process

    def stderr_mark(self) -> int:
        """A mark for ``stderr_since``: how much the server has written to stderr so far."""
        return self._process.stderr_size() if self._process is not None else 0

    async def stderr_since(self, mark: int, lines: int = 20) -> str:
        """What the server wrote to stderr after ``mark`` (all of it, once it exited), redacted."""
        process = self._process
        if process is None:
            return ""
        if process.returncode is not None:
            await process.stderr_read()
        return redact(process.stderr_tail(lines, since=mark), self.config.secrets())

    @property
    def alive(self) -> bool:
        return self._client is not None and self.status.state == "connected"

    # -- calls --------------------------------------------------------------------------
    async def call(
        self,
        tool: mcp_types.Tool,
        args: Mapping[str, Any],
        ctx: ToolContext | None,
        *,
        timeout: float | None = None,
        progress: ProgressLog | None = None,
    ) -> ToolResult:
        """Call one tool; every failure is an error result, only task cancellation raises.

        ``progress`` (from ``progress_log()``) asks the server for progress under
        that log's token; the log records what arrives.
        """
        if not self.alive:
            return self._dead_result(tool.name)
        sent: object = args  # callers (and models) do send non-objects
        if not isinstance(sent, Mapping):
            return ToolResult.error(
                f"arguments must be a JSON object, got {type(sent).__name__}",
                {
                    "mcp_server": self.config.name,
                    "mcp_tool": tool.name,
                    "error_type": "InvalidArguments",
                },
            )
        key = next(self._call_keys)
        mark = self._process.stderr_size() if self._process is not None else 0
        self._call_marks[key] = self._last_mark = mark
        self._in_flight[key] = (tool.name, dict(sent))
        began = time.monotonic()
        record = SentCall(tool.name, dict(sent), began)
        self._sent.append(record)
        try:
            raw = await guard(lambda _c: self._request(tool, args, progress), ctx, timeout=timeout)
        except ValidationError as exc:
            problem = describe_invalid(exc)
            return ToolResult.error(
                f"the server's tools/call result is malformed: {problem}",
                {
                    "mcp_server": self.config.name,
                    "mcp_tool": tool.name,
                    "error_type": "MalformedResult",
                    "problem": problem,
                },
                retryable=False,
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                await self._mark_exited()
                if self.status.state == "failed":
                    return self._dead_result(tool.name)
            return from_mcp_error(exc, server=self.config.name, tool=tool.name)
        except asyncio.CancelledError:
            self._note_cancelled(record, began)  # the caller's task, cancelled
            raise
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            return ToolResult.error(
                f"MCP call failed: {_describe_error(exc)}",
                {
                    "mcp_server": self.config.name,
                    "mcp_tool": tool.name,
                    "error_type": type(_leaf(exc)).__name__,
                },
            )
        finally:
            self._call_marks.pop(key, None)
            self._in_flight.pop(key, None)
        if isinstance(raw, ToolResult):  # cancelled or timed out by guard
            self._note_cancelled(record, began)
            return ToolResult(
                raw.output,
                raw.is_error,
                {**raw.metadata, "mcp_server": self.config.name, "mcp_tool": tool.name},
            )
        record.answered_at = time.monotonic()
        result = from_call_result(raw, server=self.config.name, tool=tool.name)
        if tool.output_schema is not None and not raw.is_error:
            problems = output_schema_errors(tool.output_schema, raw.structured_content)
            if problems:
                result = ToolResult(
                    result.output, False, {**result.metadata, "output_schema_errors": problems}
                )
        return result

    async def _request(
        self, tool: mcp_types.Tool, args: Mapping[str, Any], progress: ProgressLog | None = None
    ) -> mcp_types.CallToolResult:
        client = self._client
        if client is None:
            raise MCPError(CONNECTION_CLOSED, "Connection closed")
        # The session-level request: the SDK's Client.call_tool raises on output that
        # breaks the declared schema, and the checks must see that output to report it.
        params = mcp_types.CallToolRequestParams(name=tool.name, arguments=dict(args))
        if progress is not None:
            # Our own token, not the SDK's progress_callback: the SDK drops a
            # request's callback when the request ends, and we want what follows.
            params.meta = {"progress_token": progress.token}
        request = mcp_types.CallToolRequest(params=params)
        return await client.session.send_request(request, mcp_types.CallToolResult)

    async def probe(self, timeout: float) -> str | None:
        """``None`` when the server answers a request within ``timeout``; else what happened.

        The request is the smallest the protocol has: ``ping`` before 2026-07-28,
        ``server/discover`` from then on (which has no ``ping``). A server that
        refuses it (an error response) answered all the same: it read the request and
        replied, which is all a probe asks. A live run probes once per tool, and more
        around a watched cancel: a small request keeps a large server's run linear,
        where a listing would cost as much as the server has tools each time. Callers
        asking at once also share one request (``SharedProbe``).
        """
        if self._client is None or not self.alive:
            return self.status.describe()
        try:
            await self.liveness.ask(timeout)
        except TimeoutError:
            return f"{SILENT} {timeout:g}s"
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:  # the SDK's own bound on a request ran out first
                return f"{SILENT} the client's request timeout ({exc.message})"
            return f"{self._probe_name()} failed: {_describe_error(exc)}"
        except Exception as exc:
            return f"{self._probe_name()} failed: {_describe_error(exc)}"
        return None

    def _probe_name(self) -> str:
        client = self._client
        if client is None:
            return "ping"
        return "server/discover" if client.protocol_version in MODERN_PROTOCOL_VERSIONS else "ping"

    async def _answer(self) -> None:
        """One liveness request (``probe``'s); raises unless the server answered it."""
        client = self._client
        if client is None:
            raise MCPError(CONNECTION_CLOSED, "Connection closed")
        try:
            if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await client.session.send_discover(client.protocol_version)
            else:
                await client.session.send_ping()
        except MCPError as exc:
            # The SDK raises these two itself, with no answer from the server.
            if exc.code == CONNECTION_CLOSED:
                # The server exited, as a call would find it: say so in its status
                # (a handler that ends its process just after answering shows here).
                await self._mark_exited()
                raise
            if exc.code == REQUEST_TIMEOUT:
                raise
            # Any other error is the server's own response: it answered.

    def _note_cancelled(self, record: SentCall, began: float) -> None:
        """A call ended by its context, its bound or its caller's cancel (the client then
        tells the server so): kept for ``cancelled_before_exit`` and in the history."""
        record.cancelled_after = time.monotonic() - began

    def _dead_result(self, tool: str) -> ToolResult:
        status = self.status
        return ToolResult.error(
            status.describe() if status.reason else f"{self.config.name}: not connected",
            {
                "mcp_server": self.config.name,
                "mcp_tool": tool,
                "error_type": "ServerUnavailable",
                "exit_code": status.exit_code,
            },
            retryable=False,
        )


def _short(cursor: str | None) -> str:
    if cursor is None:
        return "none"
    return repr(cursor) if len(cursor) <= 40 else repr(cursor[:40]) + "..."


class _Entered(contextlib.AbstractAsyncContextManager[Any]):
    """Enter a transport now and hand the Client streams that are already open.

    Entering the process inside our exit stack (rather than inside the Client)
    lets the 'start' phase fail on its own, e.g. a command that does not exist.
    """

    def __init__(self, inner: contextlib.AbstractAsyncContextManager[Any]) -> None:
        self._inner = inner

    async def __aenter__(self) -> Any:
        streams = await self._inner.__aenter__()
        return _Ready(streams)

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


class _Ready(contextlib.AbstractAsyncContextManager[Any]):
    """A transport whose streams are open already: the Client enters and leaves it freely."""

    def __init__(self, streams: Any) -> None:
        self._streams = streams

    async def __aenter__(self) -> Any:
        return self._streams

    async def __aexit__(self, *exc: Any) -> None:
        return None
