"""Live checks: the result shape (TN50x) and error-not-throw (TN60x); timing checks are in
``_live_timing`` (cancellation TN70x, deadlines TN80x, concurrency TN90x).

Static checks tell whether a model can see a tool; these tell whether it survives
being called by one. Every check first asks ``may_execute`` and skips with its
reason; every call is bounded (``_calls.call_once``) and runs in a scratch
directory. Arguments come from hypothesis, so a failure is shrunk to the smallest
arguments that show it. A check that is not about raising ignores calls that
raised: TN601 reports those, once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from toolnexus_conformance._calls import CallOutcome, describe, describe_error
from toolnexus_conformance._model import Category, Finding, Severity
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance._subject import ToolSubject

from ._live_common import parts, search

__all__ = [
    "ctx_none_accepted",
    "invalid_args_no_raise",
    "invalid_args_refused",
    "result_error_flag",
    "result_is_object",
    "result_metadata",
    "result_output_text",
    "valid_args_no_raise",
]

_CONTRACT = (
    "Tool contract: execute(args, ctx=None) -> ToolResult(output: str, is_error: bool, metadata)"
)


# -- result shape (TN50x) -------------------------------------------------------------
def _shape(outcome: CallOutcome) -> tuple[bool, object, object, object] | None:
    """The result's parts, or ``None`` when the call raised (TN601's business)."""
    if not outcome.returned:
        return None
    return parts(outcome.value)


@check(
    "TN501",
    "result-object",
    title="execute returns a result object",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Hosts read `output` and `is_error` from what execute returns; a bare string, a dict or "
    "None makes every host guess, and most crash or show the model nothing.",
    fix="Return `ToolResult.ok(text)` or `ToolResult.error(message)` (or any object with "
    "`output` and `is_error`) from every path of execute.",
    reference=_CONTRACT,
    live=True,
)
async def result_is_object(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    def judge(outcome: CallOutcome) -> str | None:
        shape = _shape(outcome)
        if shape is None or shape[0]:
            return None
        return f"execute returned {type(outcome.value).__name__}, not a result object"

    return await search(subject, options, "TN501", judge)


@check(
    "TN502",
    "result-output-text",
    title="result.output is a string",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="The output is what the model reads; provider APIs take text, so anything else is "
    "rejected by the API or rendered as a Python repr the model cannot use.",
    fix="Serialise the output to text (JSON for data) before building the result.",
    reference=_CONTRACT,
    live=True,
)
async def result_output_text(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    def judge(outcome: CallOutcome) -> str | None:
        shape = _shape(outcome)
        if shape is None or not shape[0] or isinstance(shape[1], str):
            return None
        return f"result.output is {type(shape[1]).__name__}, not str"

    return await search(subject, options, "TN502", judge)


@check(
    "TN503",
    "result-error-flag",
    title="result.is_error is a bool",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Hosts branch on is_error to tell the model a call failed; a string such as 'false' is "
    "truthy and turns every success into an error (or the reverse).",
    fix="Set `is_error` to `True` or `False`, never a string, number or None.",
    reference=_CONTRACT,
    live=True,
)
async def result_error_flag(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    def judge(outcome: CallOutcome) -> str | None:
        shape = _shape(outcome)
        if shape is None or not shape[0] or isinstance(shape[2], bool):
            return None
        return f"result.is_error is {describe(shape[2])} ({type(shape[2]).__name__}), not bool"

    return await search(subject, options, "TN503", judge)


def _metadata_problem(metadata: object) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        return f"result.metadata is {type(metadata).__name__}, not a mapping or None"
    try:
        json.dumps(dict(metadata), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"result.metadata is not JSON-serialisable: {describe_error(exc)}"
    return None


@check(
    "TN504",
    "result-metadata",
    title="result.metadata is None or a JSON-serialisable mapping",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Hosts log metadata, send it over MCP and store it; an object json cannot encode fails "
    "there, far from the tool that produced it.",
    fix="Keep metadata to a dict of JSON values (str, numbers, bools, None, lists, dicts).",
    reference=_CONTRACT,
    live=True,
)
async def result_metadata(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    def judge(outcome: CallOutcome) -> str | None:
        shape = _shape(outcome)
        return None if shape is None or not shape[0] else _metadata_problem(shape[3])

    return await search(subject, options, "TN504", judge)


# -- error-not-throw (TN60x) ------------------------------------------------------------
def _raised(outcome: CallOutcome) -> str | None:
    if outcome.error is None:
        return None
    return f"execute raised {describe_error(outcome.error)} instead of returning an error result"


_NO_RAISE_FIX = (
    "Catch failures inside execute and return `ToolResult.error(message)`; subclassing "
    "`toolnexus_ref.BaseTool` does this for you. Exceptions from sys.exit() count too."
)


@check(
    "TN601",
    "valid-args-no-raise",
    title="No exception escapes execute for valid arguments",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="A failing tool must return an error result the model can act on; an exception ends "
    "the host's turn (or its process, for SystemExit) instead.",
    fix=_NO_RAISE_FIX,
    reference=_CONTRACT,
    live=True,
)
async def valid_args_no_raise(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    return await search(subject, options, "TN601", _raised)


@check(
    "TN602",
    "invalid-args-no-raise",
    title="No exception escapes execute for invalid arguments",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="Models send wrong arguments all the time: missing fields, wrong types, values out of "
    "range. The tool must answer with an error the model can correct, not crash the host.",
    fix="Validate the arguments first and return `ToolResult.error` naming the bad field "
    "(BaseTool does it from input_schema).",
    reference=_CONTRACT,
    live=True,
)
async def invalid_args_no_raise(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    return await search(subject, options, "TN602", _raised, invalid=True)


@check(
    "TN603",
    "ctx-none-accepted",
    title="execute works without a context (ctx=None)",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="The contract makes ctx optional; hosts without cancellation pass None, and a tool "
    "that calls ctx.is_cancelled() unguarded raises AttributeError for them.",
    fix="Guard every use: `if ctx is not None and ctx.is_cancelled(): ...`.",
    reference=_CONTRACT,
    live=True,
)
async def ctx_none_accepted(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    def judge(outcome: CallOutcome) -> str | None:
        found = _raised(outcome)
        return None if found is None else f"with ctx=None, {found}"

    return await search(subject, options, "TN603", judge, with_ctx=False)


@check(
    "TN604",
    "invalid-args-refused",
    title="Arguments that break the schema give an error result",
    category=Category.ERRORS,
    severity=Severity.WARNING,
    why="A tool that reports success for arguments its own schema forbids hides the model's "
    "mistake, so it never corrects itself. A warning by default; --toolnexus-strict makes "
    "warnings fail, so strict runs treat this as an error.",
    fix="Validate arguments against input_schema before acting (BaseTool does) and return "
    "`ToolResult.error` for anything it rejects.",
    reference=_CONTRACT,
    live=True,
)
async def invalid_args_refused(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    def judge(outcome: CallOutcome) -> str | None:
        shape = _shape(outcome)
        if shape is None or not shape[0] or shape[2] is not False:
            return None
        return "execute reported success (is_error=False) for arguments that break its schema"

    return await search(subject, options, "TN604", judge, invalid=True)


# The timing checks register after these, so the catalog reads TN5, TN6, TN7, TN8, TN9.
from . import _live_timing  # noqa: E402

_timing = _live_timing
