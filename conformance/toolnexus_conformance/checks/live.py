"""Live checks: the result shape (TN50x) and error-not-throw (TN60x), judged on the calls
of one exploration per tool; the timing checks are in ``timing``.

Static checks tell whether a model can see a tool; these tell whether it survives
being called by one. Each rule here sees every call of its stream of arguments
(valid, invalid, or without a context), and hypothesis shrinks the first call that
breaks it to the smallest arguments. A rule that is not about raising ignores calls
that raised: TN601 reports those, once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from toolnexus_conformance._model import SPELLED, Category, Finding, Severity, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance.live._calls import CallOutcome, describe, describe_error, show
from toolnexus_conformance.live._explorer import parts
from toolnexus_conformance.live._observation import Observation, Phase, Stream
from toolnexus_conformance.live._search import Call

from ._per_call import stream_check

__all__ = [
    "call_keeps_process",
    "ctx_none_accepted",
    "invalid_args_no_raise",
    "invalid_args_refused",
    "result_error_flag",
    "result_is_object",
    "result_metadata",
    "result_output_text",
    "valid_args_no_raise",
    "valid_calls_succeed",
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


@stream_check(
    "TN501",
    "result-object",
    blocked_loop_fails=True,
    title="execute returns a result object",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Hosts read `output` and `is_error` from what execute returns; a bare string, a dict or "
    "None makes every host guess, and most crash or show the model nothing.",
    fix="Return `ToolResult.ok(text)` or `ToolResult.error(message)` (or any object with "
    "`output` and `is_error`) from every path of execute.",
    reference=_CONTRACT,
    streams=(Stream.VALID,),
)
def result_is_object(call: Call) -> str | None:
    shape = _shape(call.outcome)
    if shape is None or shape[0]:
        return None
    return f"execute returned {type(call.outcome.value).__name__}, not a result object"


@stream_check(
    "TN502",
    "result-output-text",
    title="result.output is a string",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="The output is what the model reads; provider APIs take text, so anything else is "
    "rejected by the API or rendered as a Python repr the model cannot use.",
    fix="Serialise the output to text (JSON for data) before building the result.",
    reference=_CONTRACT,
    streams=(Stream.VALID,),
)
def result_output_text(call: Call) -> str | None:
    shape = _shape(call.outcome)
    if shape is None or not shape[0] or isinstance(shape[1], str):
        return None
    return f"result.output is {type(shape[1]).__name__}, not str"


@stream_check(
    "TN503",
    "result-error-flag",
    title="result.is_error is a bool",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Hosts branch on is_error to tell the model a call failed; a string such as 'false' is "
    "truthy and turns every success into an error (or the reverse).",
    fix="Set `is_error` to `True` or `False`, never a string, number or None.",
    reference=_CONTRACT,
    streams=(Stream.VALID,),
)
def result_error_flag(call: Call) -> str | None:
    shape = _shape(call.outcome)
    if shape is None or not shape[0] or isinstance(shape[2], bool):
        return None
    return f"result.is_error is {describe(shape[2])} ({type(shape[2]).__name__}), not bool"


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


@stream_check(
    "TN504",
    "result-metadata",
    title="result.metadata is None or a JSON-serialisable mapping",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Hosts log metadata, send it over MCP and store it; an object json cannot encode fails "
    "there, far from the tool that produced it.",
    fix="Keep metadata to a dict of JSON values (str, numbers, bools, None, lists, dicts).",
    reference=_CONTRACT,
    streams=(Stream.VALID,),
)
def result_metadata(call: Call) -> str | None:
    shape = _shape(call.outcome)
    return None if shape is None or not shape[0] else _metadata_problem(shape[3])


# -- error-not-throw (TN60x) ------------------------------------------------------------
def _raised(outcome: CallOutcome) -> str | None:
    if outcome.error is None:
        return None
    return f"execute raised {describe_error(outcome.error)} instead of returning an error result"


_NO_RAISE_FIX = (
    "Catch failures inside execute and return `ToolResult.error(message)`; subclassing "
    "`toolnexus_ref.BaseTool` does this for you. Exceptions from sys.exit() count too."
)


@stream_check(
    "TN601",
    "valid-args-no-raise",
    title="No exception escapes execute for valid arguments",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="A failing tool must return an error result the model can act on; an exception ends "
    "the host's turn (or its process, for SystemExit) instead.",
    fix=_NO_RAISE_FIX,
    reference=_CONTRACT,
    streams=(Stream.VALID,),
)
def valid_args_no_raise(call: Call) -> str | None:
    return _raised(call.outcome)


@stream_check(
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
    streams=(Stream.INVALID,),
)
def invalid_args_no_raise(call: Call) -> str | None:
    return _raised(call.outcome)


@stream_check(
    "TN603",
    "ctx-none-accepted",
    title="execute works without a context (ctx=None)",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="The contract makes ctx optional; hosts without cancellation pass None, and a tool "
    "that calls ctx.is_cancelled() unguarded raises AttributeError for them. Not judged for "
    "MCP tools: the context stays in the client, and the server gets the same tools/call.",
    fix="Guard every use: `if ctx is not None and ctx.is_cancelled(): ...`.",
    reference=_CONTRACT,
    streams=(Stream.NO_CONTEXT,),
)
def ctx_none_accepted(call: Call) -> str | None:
    found = _raised(call.outcome)
    return None if found is None else f"with ctx=None, {found}"


@stream_check(
    "TN604",
    "invalid-args-refused",
    title="Arguments that break the schema give an error result",
    category=Category.ERRORS,
    severity=Severity.WARNING,
    why="A tool that reports success for arguments its own schema forbids hides the model's "
    "mistake, so it never corrects itself. A value that is the declared one spelled as a "
    'string ("1" for 1, "true" for true) is lenience, not a hidden mistake, and is not '
    "counted; true for an integer is. A warning by default; --toolnexus-strict makes "
    "warnings fail, so strict runs treat this as an error.",
    fix="Validate arguments against input_schema before acting (BaseTool does) and return "
    "`ToolResult.error` for anything it rejects.",
    reference=_CONTRACT,
    streams=(Stream.INVALID,),
)
def invalid_args_refused(call: Call) -> str | None:
    if call.mutation is not None and SPELLED in call.mutation:
        return None  # "1" for 1: the tool reads the value the schema declares
    shape = _shape(call.outcome)
    if shape is None or not shape[0] or shape[2] is not False:
        return None
    return "execute reported success (is_error=False) for arguments that break its schema"


@check(
    "TN605",
    "valid-calls-succeed",
    title="Some call with valid arguments succeeds",
    category=Category.ERRORS,
    severity=Severity.WARNING,
    why="A tool that answers every valid call with an error gives the model nothing to work"
    " with: it is broken, misconfigured (a missing key, no network), or its schema admits"
    " arguments it cannot serve. Not judged where the errors may be the environment's: a"
    " write the file system refused, or a tool called only because its sandbox holds (it"
    " may write, or reach other systems, and the sandbox refuses both).",
    fix="Read the error in the finding: configure what the tool needs, or tighten input_schema"
    " to the arguments the tool really serves (enums, patterns, required fields).",
    reference=_CONTRACT,
    live=True,
    needs=[Phase.VALID],
)
def valid_calls_succeed(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    calls = [c for c in observation.stream(Stream.VALID).calls if c.outcome.returned]
    if not calls:
        raise Skip("no call with valid arguments came back (TN601 or TN803 say why)")
    if any(parts(c.outcome.value)[2] is False for c in calls):
        return []
    naming = _argument_names(_property_names(observation.subject.input_schema))
    if any(_names_an_argument(c.outcome, naming) or _quotes_an_argument(c) for c in calls):
        # Errors that name an argument, or quote the value it was given, are the tool
        # judging the arguments (a generated "" is no timezone; "Repository path 'x' is
        # outside the allowed repository"): the schema is loose, the tool is not broken.
        return []
    first = calls[0]
    every = (
        f"every one of {len(calls)} calls with valid arguments returned an error, e.g."
        f" {show(first.outcome)} for arguments {describe(first.args)}"
    )
    _not_the_tools_doing(observation, options, calls, every)
    return [Finding(every, sent=first.args, got=show(first.outcome))]


#: An error that is the file system refusing a write (the sandbox's read-only project,
#: a read-only mount): Python's, Node's and Go's spellings.
_READ_ONLY_FS = re.compile(r"read-only file system|\bEROFS\b", re.IGNORECASE)


def _not_the_tools_doing(
    observation: Observation, options: RunOptions, calls: list[Call], every: str
) -> None:
    """Skip TN605 when the errors may be the environment refusing the tool, not the tool.

    A write the file system refused is the machine's answer. A tool ``auto`` calls only
    because its sandbox holds (it may write, or reach other systems) meets the sandbox's
    refusals on its success path, and a write tool's siblings cannot make the state it
    needs (git_commit finds nothing staged): its errors do not say it is broken.
    """
    from toolnexus_conformance._safety import called_for_the_sandbox

    refused = next(
        (
            c
            for c in calls
            if _READ_ONLY_FS.search(str(parts(c.outcome.value)[1] or "")) is not None
        ),
        None,
    )
    if refused is not None:
        raise Skip(
            f"{every}; the file system refused a write ({show(refused.outcome)}): the errors"
            " are the machine's, so whether the tool can succeed is not judged"
        )
    reason = called_for_the_sandbox(observation.subject, options)
    if reason is None:
        return
    subject = observation.subject
    name = subject.name if isinstance(subject.name, str) else subject.display_name
    raise Skip(
        f"{every}; {reason}, so it was called only because its sandbox holds, where"
        " nothing outside its scratch is writable and no other system is reachable: whether"
        f" it can succeed is judged outside the sandbox (--toolnexus-sandbox off with"
        f" --toolnexus-allow {name})"
    )


@check(
    "TN606",
    "call-keeps-process",
    title="A call never ends or freezes the process it runs in",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="A host calls tools inside its own process: a tool that calls os._exit, crashes the"
    " interpreter, holds the GIL past its bound or replaces the clock takes the whole agent down"
    " with it, every conversation in flight included, and nothing reports why. An MCP tool that"
    " ends its stdio server takes every other tool of the server with it, until the host"
    " restarts it.",
    fix="Never call os._exit or os.kill on your own process; raise or return an error result"
    " instead (an MCP handler: return isError: true). Release the GIL (or run native work in a"
    " subprocess) for long computations, and never patch time functions outside tests.",
    reference=_CONTRACT,
    live=True,
    needs=[Phase.VALID],
)
def call_keeps_process(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    from toolnexus_conformance.live import _calls

    crash = observation.crashed
    if crash is not None:
        if crash.silent:  # the server answered nothing and the kit ended it: TN803's
            observation.usable()
        return [Finding(crash.describe(), sent=crash.args)]
    if observation.subject.source == "mcp":
        # The tool's calls run in its server's process: a server that exits during them
        # is restarted and the call that ended it found (``live._crashes``); a tool
        # judged here ended it with none of its calls.
        observation.stream(Stream.VALID)
        return []
    if not _calls.IN_WORKER:
        raise Skip(
            "judged only when the tool runs in a worker process (the pytest plugin's default"
            " for package.module:attr targets, --toolnexus-isolation process)"
        )
    # The session fails this check itself when the tool's process ends before it
    # answers; a process that got this far and is judging survived every call.
    observation.stream(Stream.VALID)
    return []


@check(
    "TN607",
    "stays-in-sandbox",
    title="A call reaches nothing outside its scratch folder",
    category=Category.ERRORS,
    severity=Severity.WARNING,
    why="A host runs tools with the user's files and network: a tool that writes to the home"
    " folder, beside its own module or to /tmp, or connects out, does so on every user's machine."
    " The kit's sandbox refuses it, and the tool often turns the refusal into an error nobody"
    " reads; this says what was attempted.",
    fix="Write only to a path the caller gives you (or the working directory), and reach the"
    " network only when that is the tool's job: then say so with openWorldHint, and expect"
    " the kit to run it with --toolnexus-allow-network.",
    reference=_CONTRACT,
    live=True,
    needs=[Phase.VALID],
)
def stays_in_sandbox(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    from toolnexus_conformance import _escapes

    if not _escapes.installed():
        raise Skip(
            "judged only when the tool runs in a worker process (the pytest plugin's default"
            " for package.module:attr targets); MCP servers are not watched from inside"
        )
    observation.stream(Stream.VALID)
    tried = [f"{kind} {what}" for kind, what in _escapes.ESCAPES]
    if not tried:
        return []
    return [Finding("the tool tried to reach beyond its scratch folder: " + "; ".join(tried))]


def _property_names(schema: object) -> list[str]:
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return (
        [name for name in properties if isinstance(name, str)]
        if isinstance(properties, Mapping)
        else []
    )


#: Quotes an error puts around a value it was given: 'x', "x", `x`, ‘x’, “x”.
_QUOTES = (("'", "'"), ('"', '"'), ("`", "`"), ("\u2018", "\u2019"), ("\u201c", "\u201d"))


def _strings(value: object) -> Iterable[str]:
    """Every string a call's arguments hold, however deep."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _quotes_an_argument(call: Call) -> bool:
    """Whether the call's error quotes a string it was given, as a tool judging it does.

    mcp-server-git refuses every ``repo_path`` but the repository it was started on
    ("Repository path 'x' is outside the allowed repository"): no generated path is
    served, and the tool is not broken. A value of two characters or more, between
    quotes, is no accident; an error that merely contains it (a URL in "Failed to
    fetch https://a.com/robots.txt") is not counted.
    """
    output = parts(call.outcome.value)[1]
    if not isinstance(output, str):
        return False
    return any(
        f"{left}{value}{right}" in output
        for value in _strings(call.args)
        if len(value.strip()) >= 2
        for left, right in _QUOTES
    )


def _argument_names(names: list[str]) -> re.Pattern[str] | None:
    """Any of the argument names as a word of a lowered text, made once per tool: a
    search reads each of its calls' errors (a hundred or more) against every name."""
    if not names:
        return None
    words = "|".join(re.escape(n.lower()) for n in names)
    return re.compile(rf"(?<![a-z0-9_])(?:{words})(?![a-z0-9_])")


def _names_an_argument(outcome: CallOutcome, naming: re.Pattern[str] | None) -> bool:
    output = parts(outcome.value)[1]
    if not isinstance(output, str) or naming is None:
        return False
    return naming.search(output.lower()) is not None


@stream_check(
    "TN561",
    "result-echoes-secret",
    streams=(Stream.VALID, Stream.INVALID),
    title="A result never carries a credential of the environment",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="A secret given to a server or an http tool through ${ENV} (an API key, a token), or the"
    " value of a credential-looking variable of the environment (a name holding KEY, TOKEN,"
    " SECRET, PASSWORD, CREDENTIAL or AUTH; eight characters or more), that comes back in a"
    " result is shown to the model, logged by the host and sent to the provider: a leaked"
    " credential. The kit masks it in every report; the tool still leaks it.",
    fix="Never echo configuration or request headers into results or error messages; redact"
    " credentials in the tool's own error texts.",
    reference="OWASP Top 10 for LLM Applications: LLM02 Sensitive Information Disclosure",
)
def result_echoes_secret(call: Call) -> str | None:
    text = _text_of(call.outcome)
    if not text or not _carries_secret(text):
        return None
    return "the result carries a credential of the environment (masked here)"


def _text_of(outcome: CallOutcome) -> str:
    if outcome.error is not None:
        return describe_error(outcome.error)
    ok, output, _, _ = parts(outcome.value)
    return output if ok and isinstance(output, str) else ""


def _carries_secret(text: str) -> bool:
    try:
        from toolnexus_ref import secrets
    except ImportError:  # pragma: no cover - a reference without the secrets registry
        return False
    return bool(secrets.find(text))
