"""One hypothesis search over a stream of arguments, judging every property at each call.

Live checks used to run a search each, so a tool was called once per check and
example. Here one search calls the tool and hands each call to every property of
its stream (result shape, error-not-throw, ...). A property that fails raises its
own exception type, so hypothesis tracks the properties as distinct bugs and
shrinks each to its smallest arguments, within the search's budget (once it is
spent the search ends, each failure as far as it was shrunk); the example
database still replays a failure first next time, under a key per tool and
stream (and only a failure: never the example the search stopped on,
``_database``). Calls are remembered by their arguments, so shrinking replays for
free what was already called.

Hypothesis is synchronous and tools are called on the run's event loop: the search
runs on a long-lived worker thread (``_workers``) and sends each call back to the
loop with a bound. A call that does not come back ends the search at once,
unshrunk: shrinking would replay the hang dozens of times. So does a tool that
can no longer be called (``gone``: its MCP server exited): every call would fail
at once with the same exit and say nothing of the tool, so the search makes no
more of them and raises ``Gone`` for the exploration to end too.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Coroutine, MutableMapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from .._imports import IMPORTS
from .._model import Finding, Skip, exhaustion
from .._options import RunOptions
from ._calls import CallOutcome, describe
from ._workers import SearchWorkers

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "Call",
    "Failure",
    "Gone",
    "Lane",
    "Property",
    "SearchResult",
    "args_key",
    "build_strategy",
    "search",
    "simplest",
]

#: Bound on compiling a schema into a strategy, and on finding its simplest example.
BUILD_LIMIT = 10.0
#: A call at least this fast shows the tool itself is fast. The explicit arguments
#: (edge values, which find the most bugs) get half a budget; those of a fast tool
#: may go on up to ``EXPLICIT_SPAN`` budgets, because sibling tools sharing its
#: server or interpreter slow every call down (a call's time is shared among their
#: calls in flight, ``_in_flight``; the machine's load stretches both). The generated
#: examples then get what is left of the budget, and never less than half of one.
FAST_CALL = 0.5
EXPLICIT_SPAN = 3
#: Explicit arguments in flight at once for a tool marked read-only.
PREFETCH = 4
#: Calls in flight, by the place that serves them (an MCP server; else a target: its
#: worker, the interpreter) and by tool. A call's own cost is its time shared among the
#: calls of *other* tools made at once at the same place: neighbours queue on one
#: server. A tool's own calls in flight (its lanes, its streams, its prefetched edge
#: values) are not neighbours: they are how the kit calls it, and a tool that waits
#: (a sleep, a remote service) takes as long with company as alone; were they counted,
#: a read-only tool, called two and three at a time, would be judged two or three times
#: faster than one that is not, and its edge values given six times the time.
_in_flight: Counter[tuple[str, str]] = Counter()
_in_flight_lock = threading.Lock()


def _enter(place: str, tool: str) -> int:
    """One more call of ``tool`` at ``place``; the calls sharing it: its neighbours' and itself."""
    with _in_flight_lock:
        _in_flight[place, tool] += 1
        return _sharing(place, tool)


def _leave(place: str, tool: str) -> int:
    """One call fewer; the calls that shared it up to now (as ``_enter`` counts them)."""
    with _in_flight_lock:
        sharing = _sharing(place, tool)
        _in_flight[place, tool] -= 1
        if not _in_flight[place, tool]:
            del _in_flight[place, tool]
        return sharing


def _sharing(place: str, tool: str) -> int:
    """The calls in flight at ``place`` of tools other than ``tool``, plus one."""
    return 1 + sum(n for (at, name), n in _in_flight.items() if at == place and name != tool)


#: Wall seconds a search may spend past the floor. A fast tool gets its
#: ``RunOptions.depth`` within it; a tool that took longer than this to reach the
#: floor gets no more calls than the floor.
DEPTH_TIME = 1.5
#: The most the search's wall-clock budgets stretch on a busy machine (``stretch``).
MAX_STRETCH = 10.0


def stretch() -> float:
    """How much longer the wall-clock budgets run on this machine now: 1 when quiet.

    The budgets are wall seconds, so on a machine with more runnable processes than
    cores (a shared CI runner, ``pytest -n`` beside other jobs) a search would make a
    fraction of its calls and miss what it finds on a quiet one: the verdicts would
    depend on the neighbours. Stretching by the load per core (at most
    ``MAX_STRETCH``) buys the same calls; read once per search, it costs a read of
    ``/proc/loadavg``.
    """
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):  # not on every platform
        return 1.0
    return min(MAX_STRETCH, max(1.0, load))


#: Linux's pressure stall information for the CPUs (``search_stretch``).
CPU_PRESSURE = Path("/proc/pressure/cpu")


def search_stretch() -> float:
    """``stretch``, capped by how much the CPUs are contended now: the search budgets'.

    The load average remembers a minute: right after a busy run it still says the
    machine is loaded while nothing else runs, and a search stretched by it makes more
    calls than it would on a quiet machine (a five-server mcp.json run right after a
    200-tool one took 82 s of CPU instead of 48, with nothing else running). Linux's
    pressure stall information says which share of the last ten seconds a runnable
    task spent waiting for a CPU (``some avg10``); where none waited, nothing slows
    a search down, whatever the load average remembers, and where they waited a
    share ``w`` of the time the budgets stretch by at most ``1 / (1 - w)``. Where the
    file cannot be read (not Linux, pressure accounting off), the load average alone.
    """
    load = stretch()
    if load <= 1.0:
        return load
    waited = cpu_waited()
    if waited is None:
        return load
    return min(load, 1.0 / max(1.0 - waited, 1.0 / MAX_STRETCH))


def cpu_waited(path: Path = CPU_PRESSURE) -> float | None:
    """The share (0 to 1) of the last ten seconds in which a runnable task waited for
    a CPU, from ``some avg10`` of ``path``; ``None`` where it cannot be read."""
    try:
        with open(path) as pressure:
            for line in pressure:
                kind, *fields = line.split()
                if kind != "some":
                    continue
                values = dict(field.split("=", 1) for field in fields)
                return min(1.0, max(0.0, float(values["avg10"]) / 100))
    except (OSError, ValueError, KeyError):
        return None
    return None


#: How often a search asks again how far its budgets stretch (``search``'s ``stretch``).
RESTRETCH = 0.5


def _stretching(ask: Callable[[], float] | None) -> Callable[[], float]:
    """The stretch now: ``search_stretch`` read once, or ``ask`` at most every ``RESTRETCH`` s."""
    if ask is None:
        fixed = search_stretch()
        return lambda: fixed
    last: list[float] = [ask(), time.monotonic()]

    def now() -> float:
        if time.monotonic() - last[1] >= RESTRETCH:
            last[:] = [ask(), time.monotonic()]
        return last[0]

    return now


def _end(window: tuple[float, float], stretched: float) -> float:
    """When a window of the budget ends: its quiet length stretched."""
    begun, span = window
    return begun + span * stretched


def _later(
    window: tuple[float, float], other: tuple[float, float], stretched: float
) -> tuple[float, float]:
    """Whichever of two windows ends later, stretched as now."""
    return other if _end(other, stretched) > _end(window, stretched) else window


@dataclass(frozen=True, slots=True)
class Call:
    """One call the exploration made: what was sent and what came back."""

    args: Any
    outcome: CallOutcome
    #: For invalid arguments: how the schema was broken.
    mutation: str | None = None


#: Says what is wrong with one call, or ``None`` when the call keeps the property.
Judge = Callable[[Call], "str | None"]


@dataclass(frozen=True, slots=True)
class Property:
    """A per-call rule of one check, evaluated on every call of its stream."""

    code: str
    judge: Judge


@dataclass(frozen=True, slots=True)
class Failure:
    """One call that breaks a property, as the user will read it."""

    args: Any
    message: str
    got: Any = None
    mutation: str | None = None
    #: A hang or a dead loop: the search ended here instead of shrinking.
    stop: bool = False
    #: Hypothesis could not reproduce it on replay.
    flaky: bool = False

    def finding(self) -> Finding:
        sent = f"arguments {describe(self.args)}"
        if self.mutation:
            sent += f" (invalid: {self.mutation})"
        text = f"{self.message}, for {sent}"
        if self.flaky:
            text += " (not on every call: the tool behaves differently on a replay)"
        return Finding(text, sent=self.args, got=self.got)


@dataclass(slots=True)
class SearchResult:
    """What one search saw: every call, the smallest failure per property, a hang."""

    calls: list[Call] = field(default_factory=list)
    failures: dict[str, Failure] = field(default_factory=dict)
    #: A call that did not come back within its bound; the search stopped there.
    hang: Call | None = None
    #: Why no argument could be generated (the schema), when none could.
    skipped: str | None = None
    #: Calls judged, remembered ones included: 0 means the rules saw nothing.
    judged: int = 0


class _Falsified(Exception):
    """Raised in the ``@given`` body so that hypothesis shrinks the example."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class _Stop(BaseException):
    """Not an ``Exception``: hypothesis lets it through at once, without shrinking (and
    saves the example under way, unless ``stop`` raised it: ``_database``)."""


class Gone(Exception):
    """The tool can no longer be called (its server exited): nothing more to explore.

    Raised by ``search`` once its ``gone`` check says so; the message says why.
    """


#: One exception type per check code: hypothesis tells bugs apart by their type.
_FALSIFIED: dict[str, type[_Falsified]] = {}


def _falsified(code: str) -> type[_Falsified]:
    kind = _FALSIFIED.get(code)
    if kind is None:
        kind = _FALSIFIED[code] = type(f"Falsified{code}", (_Falsified,), {"code": code})
    return kind


def _smaller(args: Any, than: Any) -> bool:
    """Whether ``args`` are a smaller example than ``than``: shorter as JSON, then first
    in order (as hypothesis's shrinker moves: each failure it keeps is smaller)."""
    mine, theirs = args_key(args), args_key(than)
    return (len(mine), mine) < (len(theirs), theirs)


def args_key(args: Any) -> str:
    """The cache key of a call's arguments (arguments are JSON, or nearly)."""
    try:
        return json.dumps(args, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(args)


def build_strategy(schema: Any, *, invalid: bool) -> SearchStrategy[Any]:
    """Valid arguments for ``schema``, or schema-breaking ones; ``Skip`` says why not."""
    if not isinstance(schema, dict):
        raise Skip("the tool has no readable input schema (the schema checks report why)")
    from toolnexus_conformance.checks._walk import scan_json

    if scan_json(schema, "input_schema").too_big is not None:
        # Compiling it would hold a thread (and the GIL) for minutes; TN302 says why.
        raise Skip("the input schema is too large to generate arguments for (TN302)")
    from toolnexus_conformance import arguments

    try:
        if invalid:
            return arguments.invalid_args_for(schema)
        return arguments.args_for(schema)
    except arguments.UnsupportedSchema as exc:
        keyword = getattr(exc, "keyword", None) or "a keyword"
        where = getattr(exc, "path", None) or "the root"
        raise Skip(
            f"arguments cannot be generated for this schema: {keyword!r} at {where} is not "
            f"supported ({exc})"
        ) from None


_home_set = False


def _keep_storage(options: RunOptions) -> None:
    """Point hypothesis's own files (its database, its unicode cache) where the run says.

    Left alone, hypothesis writes ``.hypothesis/`` into the directory it was imported
    from: the user's project. Under the plugin they go to pytest's cache directory.
    With the cache off no example is kept, but hypothesis's table of unicode
    characters (three seconds to build) is: in the user's cache directory, so it is
    built once per machine rather than once per run. A storage directory the user
    chose (``HYPOTHESIS_STORAGE_DIRECTORY``) wins.
    """
    global _home_set
    if _home_set or options.example_database is None:
        return
    _home_set = True
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    database = options.example_database
    set_hypothesis_home_dir(_user_cache() if database is False else Path(database))


def _user_cache() -> Path:
    """``~/.cache/pytest-toolnexus/hypothesis`` (or the platform's cache), else a temp dir."""
    if os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    home = base / "pytest-toolnexus" / "hypothesis"
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".writable"
        probe.touch()
        return home
    except OSError:
        temporary = Path(tempfile.mkdtemp(prefix="toolnexus-hypothesis-"))
        atexit.register(shutil.rmtree, temporary, ignore_errors=True)
        return temporary


#: Bound on the one-time preparation of the generator (imports, hypothesis's unicode
#: table): paid once per process, so it is not held against any schema's build.
WARM_LIMIT = 120.0
_warmed = False
#: Why the first preparation failed: said by every later one, which cannot retry it
#: (a failed import can leave modules behind that a second import would mix in).
_warm_failure: BaseException | None = None


def warmed() -> bool:
    return _warmed


def warm_generation(options: RunOptions) -> None:
    """Everything the first search would build: imports, storage, the unicode table.

    Called once per process (later calls wait for the first, then return): by the
    plugin on a thread at start-up, and by a worker process before it forks a
    process per tool, so no tool's process pays for it. It starts no thread. A
    failure is kept: later calls raise it again, named, so the first exploration
    says what went wrong rather than what followed from it.
    """
    global _warmed, _warm_failure
    from .._parser_lock import install

    install()  # for callers that did not install it before starting threads
    with IMPORTS:  # the warm-up imports throughout: never beside another import
        if _warmed:
            return
        if _warm_failure is not None:
            raise RuntimeError(
                "preparing the argument generator failed earlier in this process:"
                f" {type(_warm_failure).__name__}: {_warm_failure}"
            ) from _warm_failure
        try:
            _prepare(options)
        except Exception as exc:
            _warm_failure = exc
            raise
        _warmed = True


def _prepare(options: RunOptions) -> None:
    _keep_storage(options)  # first: importing the generator may already build the table
    from toolnexus_ref._validation import validator_for

    from .. import arguments  # noqa: F401

    # jsonschema and its format checkers load on the first validation: now, once.
    validator_for({"type": "object"}).is_valid({})

    try:
        from hypothesis.internal.charmap import charmap
    except ImportError:  # pragma: no cover - an internal module moved: a search builds it
        pass
    else:
        charmap()
    # One search now, on one thread: hypothesis parses the loaded modules for
    # constants on its first search, and its one-time costs (the strategies'
    # first build, its caches) are paid here, not inside a schema's build bound.
    warm_search(options)


#: A schema of every common kind, searched once by ``warm_search``.
_WARM_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": 20},
        "pattern": {"type": "string", "pattern": "^[a-z]+$"},
        "day": {"type": "string", "format": "date"},
        "count": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "unit": {"enum": ["a", "b"]},
        "nested": {"type": "object", "properties": {"x": {"type": "integer"}}},
    },
    "required": ["text"],
    "additionalProperties": False,
}


#: The kit's own packages, whose modules are never the user's code to hypothesis.
KIT_PACKAGES = frozenset({"toolnexus_conformance", "toolnexus_ref", "pytest_toolnexus"})


def scan_constants() -> None:
    """Hypothesis's scan of the loaded modules for constants (its ``_get_local_constants``,
    which its first draws make lazily), made now: before a fork, it is made once for
    every tool's process. Where hypothesis has moved it, each search makes it, as before.

    The kit's own modules are left out of it. Hypothesis takes every module outside
    site-packages for the user's code and draws its literals as arguments: with the
    kit installed from a checkout (editable, or on the path), that was 745 of the
    kit's own strings (its messages, its report's field names), so the same seed drew
    other arguments than with the kit installed from a wheel, and every tool's process
    checked each of them against each new alphabet it drew from (6% of the samples of
    a 60-tool run). The tool's own literals are drawn apart (``_literals``).
    """
    try:
        from hypothesis.internal.conjecture import providers

        scan = providers._get_local_constants
        seen = providers._seen_modules
    except (ImportError, AttributeError):  # pragma: no cover - an internal moved
        return
    if len(sys.modules) == getattr(providers, "_sys_modules_len", None):
        return  # hypothesis's own test: no module loaded since its last scan, none to scan
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in KIT_PACKAGES:
            seen.add(id(module))  # what hypothesis marks as scanned, by ``id``
    scan()


def warm_search(options: RunOptions) -> None:
    """Searches over a schema of every common kind, before a fork.

    Hypothesis builds its engine's caches, its character tables for each alphabet
    and the constants of the loaded modules the first time it generates; a worker
    process does that once here, in its main thread (no thread is started), instead
    of once in every tool's process.
    """
    scan_constants()  # first: the kit's modules are left out before hypothesis scans
    from hypothesis import Phase, find

    for invalid in (False, True):
        try:
            find(
                build_strategy(_WARM_SCHEMA, invalid=invalid),
                lambda _value: True,
                settings=_settings(
                    options, database=None, phases=[Phase.generate, Phase.shrink], max_examples=20
                ),
            )
        except Exception:  # pragma: no cover - warming only: the real search reports problems
            pass


def _settings(
    options: RunOptions, *, stopping: threading.Event | None = None, **overrides: Any
) -> Any:
    """Hypothesis's settings for a search: the user's profile, with the run's database.

    ``stopping``: once set, nothing more is saved to the database (``_database``).
    """
    from hypothesis import HealthCheck, Phase, settings

    _keep_storage(options)
    # The user's profile, as loaded: by name, because hypothesis keeps the current
    # settings per thread, and this runs on a worker started before the user loaded it.
    current = settings.get_profile(settings.get_current_profile_name())
    suppressed = {
        *current.suppress_health_check,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    }
    extra: dict[str, Any] = {}
    if options.example_database is False:
        extra["database"] = None
    elif options.example_database is not None:
        from hypothesis.database import DirectoryBasedExampleDatabase

        extra["database"] = DirectoryBasedExampleDatabase(
            str(Path(options.example_database) / "examples")
        )
    database = extra.get("database", current.database)
    if stopping is not None and database is not None:  # an override still wins, below
        from ._database import SavesUntilStopped

        extra["database"] = SavesUntilStopped(database, stopping)
    return settings(
        current,
        deadline=None,
        report_multiple_bugs=True,
        # Hypothesis's explanations are never shown (a finding carries its example),
        # and the explain phase traces every line run while a failure shrinks: with
        # it, tracing took 14% of a run's CPU on a server with fifteen bugs.
        phases=[p for p in overrides.pop("phases", current.phases) if p is not Phase.explain],
        suppress_health_check=sorted(suppressed, key=lambda h: h.value),
        **{**extra, **overrides},
    )


def _digest(key: str, schema: Any) -> bytes:
    text = json.dumps(schema, sort_keys=True, default=repr)
    return hashlib.sha256(f"{key}\0{text}".encode()).digest()


def _collect(exc: BaseException, into: dict[str, Failure], *, flaky: bool = False) -> None:
    """Every property failure inside what hypothesis raised (a group for several bugs)."""
    if isinstance(exc, _Falsified):
        code = getattr(type(exc), "code", "")
        failure = replace(exc.failure, flaky=True) if flaky else exc.failure
        into.setdefault(code, failure)
        return
    if isinstance(exc, BaseExceptionGroup):
        from hypothesis.errors import Flaky

        for inner in exc.exceptions:
            _collect(inner, into, flaky=flaky or isinstance(exc, Flaky))


@dataclass(frozen=True, slots=True)
class Lane:
    """One way of calling the tool with each drawn example, and the rules for its calls.

    A search may have several: the valid stream calls each example with a context
    and again without one, so both are judged on the same arguments and hypothesis
    draws them once.
    """

    call: Callable[[Any], Coroutine[Any, Any, CallOutcome]]
    properties: Sequence[Property]
    #: Calls already made this way, by arguments.
    cache: MutableMapping[str, Call]


async def search(
    strategy: SearchStrategy[Any],
    lanes: Sequence[Lane],
    options: RunOptions,
    *,
    workers: SearchWorkers,
    key: str,
    place: str,
    tool: str,
    schema: Any,
    bound: float,
    examples: int,
    invalid: bool = False,
    first: Any = None,
    together: bool = False,
    explicit: Callable[[], Sequence[Any]] | None = None,
    gone: Callable[[], str | None] | None = None,
    stretch: Callable[[], float] | None = None,
) -> list[SearchResult]:
    """Call the tool over ``strategy`` in every lane; every rule judges its lane's calls.

    ``bound`` caps one call as seen from the worker thread. ``first`` (the simplest
    arguments) is called before anything generated: a slow tool spends its budget on
    the call every check can read, and a failure there is already as small as it gets.
    One result per lane, in order. With ``together`` the lanes' calls for one example
    are made at once (a tool marked read-only says that is harmless to it).

    ``explicit`` gives examples (the schema's own, the user's, edge values; values of
    the stream's kind), built on the search's own thread and called next, in order, outside hypothesis: a failure there
    is kept as it is and the search goes on. Past ``examples`` calls the search goes
    on for up to ``options.depth`` more while it has spent under ``DEPTH_TIME``.

    ``gone`` says why the tool can no longer be called (its server exited), or
    ``None``; it is asked before each call. Once it answers, the search stops at
    once, as when its budget is spent, and raises ``Gone``: the calls it would make
    all fail with the same exit, and the tool is explored again on a restarted server.

    ``place`` is where the tool's calls queue (its MCP server, else its target;
    ``_explorer.place_of``) and ``tool`` the tool:
    how fast the tool is, for the explicit arguments' window, is a call's time shared
    among the other tools' calls in flight at the same place (``_in_flight``).

    ``stretch`` says how far the wall-clock budgets stretch now (``search_stretch``,
    read once, when ``None``); it is asked again as the search goes on, at most every
    ``RESTRETCH`` seconds: the explorer caps the machine's stretch by how much the
    tool's own processes waited for a CPU (``_contention``), which its first slow
    calls tell.
    """
    loop = asyncio.get_running_loop()
    results = [SearchResult() for _ in lanes]
    stopped = threading.Event()
    # Where the budget's windows begin and their length on a quiet machine: the whole
    # budget, the depth's, and the explicit arguments' (its length is set where it is
    # read). Set at the first real call, so set-up is free.
    windows: list[tuple[float, float]] = []
    # The machine's load now: the budgets buy the same calls.
    slower = _stretching(stretch)
    depth_span = min(options.search_budget, DEPTH_TIME)
    made_calls = [0]  # calls this search began (remembered ones are free)
    fastest = [float("inf")]  # the quickest call so far (its share): how fast the tool is
    took: list[float] = []  # how long each call took: what the next is expected to take
    shares: dict[int, int] = {}  # calls in flight when each call began
    #: Every property's smallest failure so far: what is reported where the search
    #: ends before hypothesis has shrunk it (the budget spent, a hang).
    seen: dict[str, Failure] = {}

    recorded: list[set[str]] = [set() for _ in lanes]  # keys each result's calls hold
    ended: list[str] = []  # why the tool can no longer be called, once ``gone`` said so
    #: Set as the search stops for want of budget or of a tool to call: the example
    #: under way then is no failure to replay next time (``_database``).
    stopping = threading.Event()

    def stop() -> NoReturn:
        stopping.set()
        raise _Stop

    def start(
        index: int, lane: Lane, args: Any, mutation: str | None
    ) -> Call | Future[CallOutcome] | None:
        """The lane's call for ``args``: remembered, begun (a future), or ``None`` (no budget).

        A call remembered from before the search (the simplest arguments, called first)
        is one of this stream's calls too: the rules that count calls must see it.
        """
        key = args_key(args)
        made = lane.cache.get(key)
        if made is not None:
            if key not in recorded[index]:
                recorded[index].add(key)
                results[index].calls.append(made)
                if not made.outcome.timed_out:  # how long the tool takes, measured already
                    took.append(made.outcome.elapsed)
            if made.mutation is None and mutation is not None:
                made = replace(made, mutation=mutation)
            return made
        why_gone = gone() if gone is not None else None
        if why_gone is not None:
            ended.append(why_gone)
            stop()
        now = time.monotonic()
        # A call is begun only if one as long as the tool's calls take would end within
        # the budget: a tool whose calls take ten seconds is not called again two
        # seconds before its budget ends (its search would last a call longer than its
        # budget). Expected: the last call's time, or the median if that is shorter, so
        # one slow call (a 100,000-character edge value) does not end a fast tool's search.
        # The explicit arguments (edge values: the most bugs) get a window of their own,
        # by the same rule. Only a slow tool's calls count (``FAST_CALL``): a fast tool's
        # search, its calls slowed by its neighbours, keeps every call its budget allows.
        expected = min(took[-1], statistics.median(took)) if took else 0.0
        stretched = slower()
        budget = options.search_budget * stretched
        ends = now + expected if expected >= FAST_CALL * stretched else now
        if not windows:
            windows.extend([(now, options.search_budget), (now, depth_span), (now, 0.0)])
        elif in_explicit[0]:
            fast = fastest[0] < FAST_CALL * stretched
            if ends > windows[2][0] + (EXPLICIT_SPAN * budget if fast else budget / 2):
                return None  # the rest of the explicit arguments are skipped
        elif ends > _end(windows[0], stretched) or (
            made_calls[0] >= floor and ends > _end(windows[1], stretched)
        ):
            # The budget is spent: no more calls, so nothing more to find or shrink (a
            # shrink's candidates would all pass uncalled, and cost as much to draw as
            # the search did: half the draws of a server with fifteen bugs). The
            # failures found are reported as far as they were shrunk (``seen``).
            stop()
        if not in_explicit[0]:
            made_calls[0] += 1
        at_once = _enter(place, tool)
        try:
            begun = asyncio.run_coroutine_threadsafe(lane.call(args), loop)
        except BaseException:
            _leave(place, tool)
            raise
        shares[id(begun)] = at_once
        return begun

    def finish(
        index: int, lane: Lane, begun: Future[CallOutcome], args: Any, mutation: str | None
    ) -> Call:
        try:
            outcome = begun.result(bound)
        except concurrent.futures.TimeoutError:
            begun.cancel()
            outcome = CallOutcome(args, timed_out=True, elapsed=bound)
        finally:
            share = max(shares.pop(id(begun), 1), _leave(place, tool))
        made = Call(args, outcome, mutation)
        fastest[0] = min(fastest[0], outcome.elapsed / share)
        took.append(outcome.elapsed)
        results[index].calls.append(made)
        recorded[index].add(args_key(args))
        if outcome.timed_out:
            results[index].hang = made
            raise _Stop
        lane.cache[args_key(args)] = made
        return made

    def calls_for(args: Any, mutation: str | None) -> list[Call | None]:
        """Each lane's call; at once when ``together``, else one after the other."""
        if not together:
            made: list[Call | None] = []
            for index, lane in enumerate(lanes):
                begun = start(index, lane, args, mutation)
                if isinstance(begun, Future):
                    begun = finish(index, lane, begun, args, mutation)
                made.append(begun)
            return made
        begun_all = [start(index, lane, args, mutation) for index, lane in enumerate(lanes)]
        return [
            finish(index, lane, begun, args, mutation) if isinstance(begun, Future) else begun
            for index, (lane, begun) in enumerate(zip(lanes, begun_all, strict=True))
        ]

    def unpack(drawn: Any) -> tuple[Any, str | None]:
        if stopped.is_set():
            stop()
        return (drawn.value, str(drawn.mutation)) if invalid else (drawn, None)

    def body(drawn: Any) -> None:
        args, mutation = unpack(drawn)
        judge(args, mutation, calls_for(args, mutation))

    def judge(args: Any, mutation: str | None, calls: list[Call | None]) -> None:
        """Every lane's rules on its call; a failure raises, for hypothesis to shrink."""
        failing: list[tuple[str, str, str]] = []
        from ._calls import show

        for index, (lane, made) in enumerate(zip(lanes, calls, strict=True)):
            if made is None:
                continue
            results[index].judged += 1
            for prop in lane.properties:
                message = prop.judge(made)
                if message is not None:
                    failing.append((prop.code, message, show(made.outcome)))
        if not failing:
            return
        for code, message, got in failing:
            if code not in seen or _smaller(args, seen[code].args):
                seen[code] = Failure(args, message, got=got, mutation=mutation)
        code, message, got = failing[0]
        raise _falsified(code)(Failure(args, message, got=got, mutation=mutation))

    failures: dict[str, Failure] = {}
    skipped: list[str] = []
    floor = max(1, examples) * len(lanes)
    in_explicit = [False]

    def call_explicit() -> None:
        """The explicit arguments, before anything generated. A tool marked read-only
        and seen to be fast gets up to ``PREFETCH`` of them in flight at once (it says
        that is harmless): they are known in advance, and a server's round trip, not
        the tool, is most of a fast call's time."""
        in_explicit[0] = True
        pending: deque[tuple[Any, str | None, list[Call | Future[CallOutcome] | None]]] = deque()

        def settle() -> None:
            args, mutation, begun = pending[0]
            made: list[Call | None] = []
            for index, (lane, one) in enumerate(zip(lanes, begun, strict=True)):
                if isinstance(one, Future):
                    begun[index] = None  # ``finish`` lets it go, whatever happens
                    made.append(finish(index, lane, one, args, mutation))
                else:
                    made.append(one)
            pending.popleft()
            try:
                judge(args, mutation, made)
            except _Falsified:
                pass  # kept in ``seen``; the search goes on

        def known_fast() -> bool:
            return bool(took) and min(took[-1], statistics.median(took)) < FAST_CALL * slower()

        try:
            for drawn in explicit() if explicit is not None else ():
                if not together:
                    try:
                        body(drawn)
                    except _Falsified:
                        pass  # kept in ``seen``; the search goes on
                    continue
                # Only a tool known to be fast gets calls at once: a slow one (ten
                # seconds a call) keeps to its window one call at a time.
                while pending and (len(pending) >= PREFETCH or not known_fast()):
                    settle()
                args, mutation = unpack(drawn)
                begun = [start(index, lane, args, mutation) for index, lane in enumerate(lanes)]
                pending.append((args, mutation, begun))
            while pending:
                settle()
        finally:
            for _args, _mutation, begun in pending:  # a hang ended the search: let go
                for one in begun:
                    if isinstance(one, Future):
                        one.cancel()
                        shares.pop(id(one), None)
                        _leave(place, tool)
            in_explicit[0] = False
            if windows:  # the generated examples' own share of the budget
                now, stretched = time.monotonic(), slower()
                windows[0] = _later(windows[0], (now, options.search_budget / 2), stretched)
                windows[1] = _later(windows[1], (now, depth_span / 2), stretched)

    def run() -> None:
        import hypothesis
        from hypothesis.errors import HypothesisException, Unsatisfiable
        from hypothesis.reporting import with_reporter

        body._hypothesis_internal_add_digest = _digest(key, schema)  # type: ignore[attr-defined]
        test = hypothesis.given(strategy)(body)
        if first is not None:
            test = hypothesis.example(first)(test)
        most = max(1, examples) + options.depth
        test = _settings(options, stopping=stopping, max_examples=most)(test)
        if options.seed is not None:
            test = hypothesis.seed(options.seed)(test)
        scan_constants()  # the kit's modules imported since the last scan are left out too
        try:
            call_explicit()
            with with_reporter(lambda _text: None):  # findings carry the example instead
                test()
        except Unsatisfiable as exc:
            skipped.append(f"no arguments could be generated for this schema: {exc}")
        except HypothesisException as exc:
            if not _has_failure(exc):
                skipped.append(f"argument generation failed: {type(exc).__name__}: {exc}")
            _collect(exc, failures)
        except _Stop:
            pass
        except BaseException as exc:
            if exhaustion(exc) is not None:
                # The process ran out of memory, threads or processes: in a tool's own
                # process that is the tool's doing, said by the exploration (TN606), not
                # a search that could not generate (a skip would hide the finding).
                raise
            _collect(exc, failures)
            if not failures and not seen:
                # Not the tool's doing: never blame a tool for our own failure.
                skipped.append(f"argument generation failed: {type(exc).__name__}: {exc}")

    try:
        await workers.run(run)
    finally:
        stopped.set()
    if ended:
        raise Gone(ended[0])
    for code, failure in seen.items():  # failures another property hid on the same call
        failures.setdefault(code, failure)
    for lane, result in zip(lanes, results, strict=True):
        codes = {prop.code for prop in lane.properties}
        result.failures = {code: f for code, f in failures.items() if code in codes}
        result.skipped = skipped[0] if skipped else None
    return results


def _has_failure(exc: BaseException) -> bool:
    found: dict[str, Failure] = {}
    _collect(exc, found)
    return bool(found)


async def simplest(
    strategy: SearchStrategy[Any], options: RunOptions, workers: SearchWorkers
) -> Any:
    """The simplest example of ``strategy``: the arguments for the single-call probes."""

    def build() -> Any:
        from hypothesis import Phase, find
        from hypothesis.errors import HypothesisException, NoSuchExample

        scan_constants()  # before hypothesis's own scan, which would take the kit's modules in
        try:
            return find(
                strategy,
                lambda _value: True,
                settings=_settings(
                    options, database=None, phases=[Phase.generate, Phase.shrink], max_examples=10
                ),
            )
        except (NoSuchExample, HypothesisException) as exc:
            raise Skip(f"no arguments could be generated for this schema: {exc}") from None

    done, found = await workers.bounded(build, BUILD_LIMIT)
    if not done:
        raise Skip(f"building arguments for this schema took longer than {BUILD_LIMIT:g}s")
    return found
