"""Live MCP checks: how a server answers failures, cancellations and output schemas.

Judged on the calls of each tool's exploration: the valid and invalid streams
for what the server answers, and the call cancelled mid-way for what it does
afterwards. A server that exits mid-run is restarted once the call that ended it
is known: that call is its tool's TN606 finding, and the other tools are judged on
the restarted server. Should a server stay gone, the remaining checks fail with its
exit code and stderr tail.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from toolnexus_conformance._model import Category, Fail, Finding, Severity, Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._registry import check
from toolnexus_conformance.live._calls import CallOutcome
from toolnexus_conformance.live._explorer import parts
from toolnexus_conformance.live._observation import Observation, Phase, Stream
from toolnexus_conformance.live._search import Call

from ._per_call import stream_check
from ._start_excuses import network_refused
from .mcp import MCP

__all__ = [
    "mcp_cancel_survives",
    "mcp_error_result",
    "mcp_error_text",
    "mcp_output_schema",
    "mcp_progress_after_cancel",
    "mcp_result_well_formed",
]

#: Errors the client library makes up itself (the connection closed, its own request
#: timeout), with the SDK's own words: anything else under these codes is the server's.
_LOCAL_ERRORS = (
    re.compile(r"^MCP error -32000: Connection closed$"),
    re.compile(r"^MCP error -32001: Request .* timed out$"),
)
_ERRORISH = [
    re.compile(r"^Traceback \(most recent call last\):", re.M),
    re.compile(r'^\s*File "[^"]+", line \d+', re.M),
    re.compile(r"^\s+at \S.*\(\S+:\d+:\d+\)$", re.M),  # a JavaScript stack frame
    re.compile(r"^(?:[A-Z]\w*(?:Error|Exception)|Error|Exception)(?:: |$)", re.M),
    re.compile(r"^MCP error -?\d+", re.M),
]


def _result(outcome: CallOutcome) -> tuple[str, bool | None, Mapping[str, Any]]:
    ok, output, is_error, metadata = parts(outcome.value) if outcome.returned else (False,) * 4
    if not ok:
        return "", None, {}
    return (
        output if isinstance(output, str) else "",
        is_error if isinstance(is_error, bool) else None,
        metadata if isinstance(metadata, Mapping) else {},
    )


def _server_gone(call: Call) -> str | None:
    output, _, metadata = _result(call.outcome)
    return output if metadata.get("error_type") == "ServerUnavailable" else None


def _live(observation: Observation) -> None:
    """Fail every remaining check with the server's own account once it is gone.

    A tool whose call ended the server (TN606), or that could not be judged on a
    restarted server, is skipped with that reason instead: the exit is not news here.
    """
    if observation.crashed is not None or observation.error is not None:
        observation.usable()
    status = observation.subject.extra.get("server_status")
    connection = observation.subject.extra.get("connection")
    if connection is not None:
        status = getattr(connection, "status", status)
    if status is not None and observation.not_called is None and status.state == "failed":
        raise Fail(Finding(str(status.describe())))


def _called_for_the_sandbox(
    observation: Observation, options: RunOptions, finding: Finding
) -> str | None:
    """What the sandbox kept from a tool whose failure the server answered with a
    protocol error: a tool ``auto`` calls only inside its sandbox, or one whose failure
    says its connection or name lookup was refused there.

    The sandbox refuses what such a tool is for (a write outside its scratch, a
    connection out), so its failures may be that refusal, and a reader of the finding
    should know it: the answer's form is still the server's, whatever failed.
    """
    from toolnexus_conformance._safety import called_for_the_sandbox, in_sandbox

    reason = called_for_the_sandbox(observation.subject, options)
    if reason is not None:
        return (
            f"the tool was called only because its sandbox holds ({reason}), where nothing"
            " outside its scratch is writable and no other system is reachable: that"
            " refusal may be what failed, but the server answered the failure with a"
            " protocol error, as it would any other"
        )
    if in_sandbox(observation.subject, options) and network_refused(finding.message):
        return (
            "the sandbox gives the server no network, so that may be what failed, but the"
            " server answered the failure with a protocol error, as it would an outage;"
            " --toolnexus-allow-network judges the tool with the network"
        )
    return None


# -- live: how the server answers ---------------------------------------------------------
@stream_check(
    "TN651",
    "mcp-error-result",
    preamble=_live,
    context=_called_for_the_sandbox,
    title="A failing tool answers with an error result, not a JSON-RPC error",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="The MCP specification puts tool failures in the result (isError: true) so the model"
    " reads them and can correct itself; a JSON-RPC error is for unknown tools and malformed"
    " requests, and many hosts surface it as a crash or drop it. A tool called only because"
    " its sandbox holds, or one whose failure says the sandbox refused its connection, may"
    " fail on the sandbox's refusal: the finding then says so, since how the failure is"
    " answered is the server's all the same (an outage fails the same way).",
    fix="Catch exceptions in the tool handler and return CallToolResult(isError=True) with a"
    " message; validate arguments and report problems the same way.",
    reference="MCP 2025-11-25 server/tools#error-handling",
    streams=(Stream.VALID, Stream.INVALID),
    sources=MCP,
)
def mcp_error_result(call: Call) -> str | None:
    _, _, metadata = _result(call.outcome)
    if metadata.get("error_type") != "MCPError":
        return None
    output, _, _ = _result(call.outcome)
    if any(local.match(output) for local in _LOCAL_ERRORS):
        return None  # not an answer from the server at all
    kind = f"invalid ({call.mutation})" if call.mutation else "valid"
    code = metadata.get("mcp_error_code")
    return (
        f"{kind} arguments got a JSON-RPC error (code {code}) instead of an isError result:"
        f" {output}"
    )


@stream_check(
    "TN553",
    "mcp-result-well-formed",
    preamble=_live,
    streams=(Stream.VALID, Stream.INVALID),
    title="Call results follow the MCP result schema",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="A CallToolResult whose content is not a list of content blocks (a bare string, a"
    " missing field, an unknown block type) is refused by strict clients and misread by lax"
    " ones; the model sees nothing, or the wrong thing.",
    fix='Return `content` as a list of typed blocks (`{"type": "text", "text": ...}`);'
    " build results with the SDK's types instead of by hand.",
    reference="MCP 2025-11-25 server/tools#tool-result",
    sources=MCP,
)
def mcp_result_well_formed(call: Call) -> str | None:
    _, _, metadata = _result(call.outcome)
    if metadata.get("error_type") != "MalformedResult":
        return None
    return f"the server's result is malformed: {metadata.get('problem', 'see the output')}"


@check(
    "TN751",
    "mcp-cancel-survives",
    title="After a call is cancelled mid-way the server answers the next request",
    category=Category.CANCELLATION,
    severity=Severity.ERROR,
    why="Hosts cancel calls all the time (a user presses stop, a deadline passes); a server"
    " that keeps working on a cancelled call, or blocks on it, stalls every later call.",
    fix="Honour notifications/cancelled (let the handler's task be cancelled) and never block"
    " the event loop in a handler: run blocking work in a thread.",
    reference="MCP 2025-11-25 basic/utilities/cancellation",
    live=True,
    needs=[Phase.MCP_AFTER_CANCEL],
    sources=MCP,
)
def mcp_cancel_survives(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    _live(observation)
    during = _cancelled(observation)
    gone = _server_gone(during.call)
    if gone is not None:
        return [Finding(gone, sent=during.call.args)]
    if not during.watched:
        if during.server_problem is None:  # no cancel reached a call: nothing is shown
            raise Skip(
                f"the call finished within {during.after:.2g}s, before it could be cancelled"
            )
        what = f"after the call (it finished within {during.after:.2g}s, before its cancel)"
    else:
        if during.server_problem is None:
            return []
        what = f"after the call was cancelled {during.after:.2f}s in"
    output, _, _ = _result(during.call.outcome)
    return [
        Finding(
            f"{what}, {during.server_problem}",
            sent=during.call.args,
            got=output,
        )
    ]


@check(
    "TN752",
    "mcp-progress-after-cancel",
    title="No progress arrives for a request after it was cancelled",
    category=Category.CANCELLATION,
    severity=Severity.WARNING,
    why="Progress for a cancelled request shows the server is still doing work nobody will"
    " read (and may still cause its side effects); the specification says a cancelled request"
    " gets no further messages, and hosts log or mis-route the strays.",
    fix="Stop the work when notifications/cancelled arrives: let the handler's task be"
    " cancelled, or check a cancellation flag in the loop that reports progress.",
    reference="MCP 2025-11-25 basic/utilities/cancellation; basic/utilities/progress",
    live=True,
    needs=[Phase.MCP_AFTER_CANCEL],
    sources=MCP,
)
def mcp_progress_after_cancel(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    _live(observation)
    during = _cancelled(observation)
    gone = _server_gone(during.call)
    if gone is not None:
        return [Finding(gone, sent=during.call.args)]
    if not during.watched:
        raise Skip(f"the call finished within {during.after:.2g}s, before it could be cancelled")
    late = during.late_progress
    if not late:  # includes a tool that sends no progress at all: nothing to judge
        return []
    output, _, _ = _result(during.call.outcome)
    return [
        Finding(
            f"{len(late)} progress notification(s) arrived after the call was cancelled"
            f" {during.after:g}s in, from {late[0]:.2f}s to {late[-1]:.2f}s after the"
            f" cancellation was sent ({during.progress_total} in all)",
            sent=during.call.args,
            got=output,
        )
    ]


def _cancelled(observation: Observation) -> Any:
    observation.needs_simplest()
    if observation.not_called is not None:
        raise Skip(observation.not_called)
    during = observation.cancel_during
    if during is None:
        raise Skip("no live MCP connection behind this tool")
    return during


@check(
    "TN551",
    "mcp-output-schema",
    title="Structured output matches the declared output schema",
    category=Category.RESULT,
    severity=Severity.ERROR,
    why="Clients validate structuredContent against outputSchema (the Python SDK raises);"
    " output that breaks it is refused or misread.",
    fix="Return structuredContent that conforms to outputSchema, or fix the schema.",
    reference="MCP 2025-11-25 server/tools#output-schema",
    live=True,
    needs=[Phase.VALID],
    sources=MCP,
)
def mcp_output_schema(observation: Observation, options: RunOptions) -> Iterable[Finding]:
    subject = observation.subject
    schema = subject.extra.get("output_schema", getattr(subject.tool, "output_schema", None))
    if not isinstance(schema, Mapping):
        raise Skip("the tool declares no output schema")
    _live(observation)
    calls = observation.stream(Stream.VALID).calls
    succeeded = []
    for made in calls:
        gone = _server_gone(made)
        if gone is not None:
            return [Finding(gone, sent=made.args)]
        _, is_error, metadata = _result(made.outcome)
        if is_error is False:
            succeeded.append((made, metadata))
    if not succeeded:
        first = _result(calls[0].outcome)[0][:200] if calls else ""
        raise Skip(f"no call with valid arguments succeeded: {first}")
    for made, metadata in succeeded:
        problems = metadata.get("output_schema_errors") or []
        if problems:
            return [
                Finding(
                    f"structured content breaks the output schema: {'; '.join(map(str, problems))}",
                    sent=made.args,
                    got=metadata.get("structured_content"),
                )
            ]
    return []


@stream_check(
    "TN552",
    "mcp-error-text-not-flagged",
    preamble=_live,
    title="Text that reads as an error is sent with isError true",
    category=Category.RESULT,
    severity=Severity.WARNING,
    why="A traceback or error message sent as a success makes the model trust a failure and"
    " build on it; hosts also lose the chance to retry.",
    fix="Return failures with isError: true (in Python: CallToolResult(isError=True, ...) or"
    " raise inside an MCPServer tool, which the SDK turns into an error result).",
    streams=(Stream.VALID,),
    sources=MCP,
)
def mcp_error_text(call: Call) -> str | None:
    output, is_error, _ = _result(call.outcome)
    if is_error is not False or not output:
        return None
    for pattern in _ERRORISH:
        match = pattern.search(output)
        if match:
            line = output[match.start() :].splitlines()[0]
            if _asked_for(call.args, line):
                return None
            return f"the result reads as an error ({line[:120]!r}) but isError is false"
    return None


def _asked_for(args: Any, line: str) -> bool:
    """Whether the arguments asked for this text (``messageType: "error"``): then it is no
    error at all, but the answer."""
    lowered = line.lower()
    words = set(re.findall(r"[a-z]+", lowered))
    values: list[Any] = [args]
    while values:
        value = values.pop()
        if isinstance(value, Mapping):
            values.extend(value.values())
        elif isinstance(value, list):
            values.extend(value)
        elif isinstance(value, str) and value.strip():
            text = value.strip().lower()
            if text in words or (len(text) > 3 and text in lowered):
                return True
    return False
