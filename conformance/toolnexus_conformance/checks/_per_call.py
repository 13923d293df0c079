"""Checks whose verdict is a rule judged on every call of a stream of arguments."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from toolnexus_conformance._model import Finding, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance.live._observation import Observation, Phase, Stream, per_call
from toolnexus_conformance.live._search import Judge

__all__ = ["stream_check"]

_PHASE = {
    Stream.VALID: Phase.VALID,
    Stream.INVALID: Phase.INVALID,
    Stream.NO_CONTEXT: Phase.NO_CONTEXT,
}


def stream_check(
    code: str,
    slug: str,
    *,
    streams: tuple[Stream, ...],
    blocked_loop_fails: bool = False,
    preamble: Callable[[Observation], None] | None = None,
    context: Callable[[Observation, RunOptions, Finding], str | None] | None = None,
    **info: Any,
) -> Callable[[Judge], Judge]:
    """Register the decorated per-call rule, and a check whose verdict is its smallest failure.

    The rule sees each call of ``streams`` once; hypothesis shrinks the first call
    that breaks it. A stream that could not run makes the check skip with why.
    With ``blocked_loop_fails``, a tool that blocked the event loop fails this check
    (it never returned a result); every other check skips, naming this one.
    ``preamble`` may end the check first (an MCP server that is gone fails it).
    ``context`` may add what the call alone cannot show to the failure's message
    (why the tool was called at all, what the sandbox kept from it), given the finding.
    """

    def register(judge: Judge) -> Judge:
        for stream in streams:
            per_call(code, stream)(judge)

        def run(observation: Observation, options: RunOptions) -> Iterable[Finding]:
            if preamble is not None:
                preamble(observation)
            if blocked_loop_fails and observation.blocked_loop is not None:
                return [Finding(f"execute never returned a result: {observation.blocked_loop}")]
            judged = 0
            for stream in streams:
                result = observation.stream(stream)
                failure = result.failures.get(code)
                if failure is not None:
                    finding = failure.finding()
                    aside = context(observation, options, finding) if context is not None else None
                    if aside:
                        finding = replace(finding, message=f"{finding.message}; {aside}")
                    return [finding]
                judged += result.judged
            if not judged:
                raise Skip(
                    "no call was judged: the search budget was spent before this check's"
                    " first call (the tool is slow)"
                )
            return []

        run.__name__ = run.__qualname__ = judge.__name__
        run.__doc__ = judge.__doc__
        check(code, slug, live=True, needs=[_PHASE[s] for s in streams], **info)(run)
        return judge

    return register
