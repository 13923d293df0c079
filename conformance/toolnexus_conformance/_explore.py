"""A hypothesis search for arguments that make a tool break a property, shrunk to the smallest.

Live checks are coroutines on the suites' background loop, but hypothesis is
synchronous. So the ``@given`` test runs in a daemon thread and each example sends
its call back to the loop (``run_coroutine_threadsafe``) with a bound. That keeps
what hypothesis is good at: shrinking a failure to the smallest arguments, the
user's settings profile and seed, and the example database, under which a failure
found once is replayed first next time (each tool and check has its own key).

A call that hangs ends the search at once, unshrunk: shrinking would replay the
hang dozens of times.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolnexus_ref import run_in_daemon_thread

from ._calls import describe
from ._model import Finding, Skip
from ._options import RunOptions

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["Failure", "explore", "first_example", "invalid_strategy", "valid_strategy"]

#: A probe runs one example on the loop and says what is wrong, if anything.
Probe = Callable[[Any], Coroutine[Any, Any, "Failure | None"]]

#: Bound on building a single example outside a search (``first_example``).
BUILD_LIMIT = 30.0


@dataclass(frozen=True, slots=True)
class Failure:
    """One example that breaks the property, as the user will read it."""

    args: Any
    message: str
    got: Any = None
    #: For invalid arguments: how the schema was broken.
    mutation: str | None = None
    #: A hang or a dead loop: end the search now instead of shrinking.
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


class _Falsified(Exception):
    """Raised in the ``@given`` body so that hypothesis shrinks the example."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class _Stop(BaseException):
    """Not an ``Exception``: hypothesis lets it through at once, without shrinking."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def _generator() -> Any:
    from toolnexus_conformance import arguments

    return arguments


def _strategy(schema: Any, *, invalid: bool) -> SearchStrategy[Any]:
    if not isinstance(schema, dict):
        raise Skip("the tool has no readable input schema (the schema checks report why)")
    generator = _generator()
    try:
        if invalid:
            return generator.invalid_args_for(schema)  # type: ignore[no-any-return]
        return generator.args_for(schema)  # type: ignore[no-any-return]
    except generator.UnsupportedSchema as exc:
        keyword = getattr(exc, "keyword", None) or "a keyword"
        where = getattr(exc, "path", None) or "the root"
        raise Skip(
            f"arguments cannot be generated for this schema: {keyword!r} at {where} is not "
            f"supported ({exc})"
        ) from None


def valid_strategy(schema: Any) -> SearchStrategy[Any]:
    return _strategy(schema, invalid=False)


def invalid_strategy(schema: Any) -> SearchStrategy[Any]:
    return _strategy(schema, invalid=True)


def _settings(options: RunOptions, **overrides: Any) -> Any:
    from hypothesis import HealthCheck, settings

    current = settings()  # the user's profile, as loaded
    suppressed = {*current.suppress_health_check, HealthCheck.too_slow, HealthCheck.filter_too_much}
    return settings(
        current,
        max_examples=max(1, options.examples),
        deadline=None,
        suppress_health_check=sorted(suppressed, key=lambda h: h.value),
        **overrides,
    )


def _digest(key: str, schema: Any) -> bytes:
    text = json.dumps(schema, sort_keys=True, default=repr)
    return hashlib.sha256(f"{key}\0{text}".encode()).digest()


def _unwrap(exc: BaseException) -> Failure | None:
    """The failure inside whatever hypothesis raised (a group when it was flaky)."""
    if isinstance(exc, _Falsified | _Stop):
        return exc.failure
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _unwrap(inner)
            if found is not None:
                from hypothesis.errors import Flaky

                return replace(found, flaky=True) if isinstance(exc, Flaky) else found
    return None


async def explore(
    strategy: SearchStrategy[Any],
    probe: Probe,
    options: RunOptions,
    *,
    key: str,
    schema: Any,
    bound: float,
) -> Failure | None:
    """Search ``strategy`` for an example whose probe fails; the smallest one, or ``None``.

    ``bound`` caps one example's probe as seen from the worker thread; past it the
    loop itself is stuck, and the search stops with that as the failure.
    """
    loop = asyncio.get_running_loop()
    stopped = threading.Event()
    budget_ends: list[float] = []  # set at the first call, so generation set-up is free

    def body(drawn: Any) -> None:
        if stopped.is_set():
            raise _Stop(Failure(drawn, "the check was abandoned", stop=True))
        now = time.monotonic()
        if not budget_ends:
            budget_ends.append(now + options.search_budget)
        elif now > budget_ends[0]:
            return  # the budget is spent: later examples are drawn but not called
        future = asyncio.run_coroutine_threadsafe(probe(drawn), loop)
        try:
            failure = future.result(bound)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise _Stop(
                Failure(drawn, f"the call did not come back within {bound:g}s", stop=True)
            ) from None
        if failure is None:
            return
        if failure.stop:
            raise _Stop(failure)
        raise _Falsified(failure)

    def search() -> Failure | None:
        import hypothesis
        from hypothesis.errors import HypothesisException, Unsatisfiable
        from hypothesis.reporting import with_reporter

        body._hypothesis_internal_add_digest = _digest(key, schema)  # type: ignore[attr-defined]
        test = _settings(options)(hypothesis.given(strategy)(body))
        if options.seed is not None:
            test = hypothesis.seed(options.seed)(test)
        try:
            with with_reporter(lambda _text: None):  # findings carry the example instead
                test()
        except Unsatisfiable as exc:
            raise Skip(f"no arguments could be generated for this schema: {exc}") from None
        except HypothesisException as exc:
            raise Skip(f"argument generation failed: {type(exc).__name__}: {exc}") from None
        except BaseException as exc:
            found = _unwrap(exc)
            if found is None:  # not the tool's doing: never blame a tool for our own failure
                raise Skip(f"argument generation failed: {type(exc).__name__}: {exc}") from None
            return found
        return None

    try:
        return await run_in_daemon_thread(search, name="toolnexus-explore")
    finally:
        stopped.set()


async def first_example(strategy: SearchStrategy[Any], options: RunOptions) -> Any:
    """The simplest example of ``strategy``: the arguments for single-call checks."""

    def build() -> Any:
        from hypothesis import Phase, find
        from hypothesis.errors import HypothesisException, NoSuchExample

        try:
            return find(
                strategy,
                lambda _value: True,
                settings=_settings(options, database=None, phases=[Phase.generate, Phase.shrink]),
            )
        except (NoSuchExample, HypothesisException) as exc:
            raise Skip(f"no arguments could be generated for this schema: {exc}") from None

    work = run_in_daemon_thread(build, name="toolnexus-example")
    done, _ = await asyncio.wait({work}, timeout=BUILD_LIMIT)
    if not done:
        raise Skip(f"building arguments for this schema took longer than {BUILD_LIMIT:g}s")
    return work.result()
