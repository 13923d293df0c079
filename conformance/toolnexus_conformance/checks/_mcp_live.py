"""Live MCP checks: how a server answers failures, cancellations and output schemas.

They call only what ``_safety.may_execute`` allows, and fail with the server's exit
code and stderr tail once it is gone.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any

from toolnexus_ref import ToolContext, ToolResult

from .._model import Category, Fail, Finding, Severity, Skip
from .._options import RunOptions
from .._registry import check
from .._subject import ToolSubject
from ._live_common import permitted
from .mcp import MCP, original_name

#: A cancelled call is cancelled this long after it was sent.
CANCEL_AFTER = 0.1
#: Progress arriving this soon after the cancellation may have left the server before it
#: read the cancellation (it crossed on the wire), so it is not held against the server.
IN_FLIGHT = 0.25
#: JSON-RPC codes that are about the connection, not the tool's answer.
_TRANSPORT_CODES = frozenset({-32000, -32001})
_ERRORISH = [
    re.compile(r"^Traceback \(most recent call last\):", re.M),
    re.compile(r'^\s*File "[^"]+", line \d+', re.M),
    re.compile(r"^\s+at \S.*\(\S+:\d+:\d+\)$", re.M),  # a JavaScript stack frame
    re.compile(r"^(?:[A-Z]\w*(?:Error|Exception)|Error|Exception)(?:: |$)", re.M),
    re.compile(r"^MCP error -?\d+", re.M),
]


def _live_connection(subject: ToolSubject, options: RunOptions) -> Any:
    """The connection a live MCP check may use: the tool may be called, there is a
    connection, and its server is still up (else every remaining live item fails with
    the server's exit code and stderr tail)."""
    permitted(subject, options)
    connection = subject.extra.get("connection", getattr(subject.tool, "connection", None))
    if connection is None:
        raise Skip("no live MCP connection behind this tool")
    status = connection.status
    if status.state != "connected":
        raise Fail(Finding(status.describe()))
    return connection


def _declared(subject: ToolSubject, connection: Any) -> Any:
    """The server's own declaration of this tool, which ``connection.call`` takes."""
    name = original_name(subject)
    for declared in getattr(connection, "tools", ()):
        if getattr(declared, "name", None) == name:
            return declared
    raise Skip(f"the connection does not list the tool {name!r}")


async def _call(
    subject: ToolSubject, args: Any, options: RunOptions, ctx: ToolContext | None = None
) -> ToolResult:
    """One call, bounded by the run's call timeout (the tool maps everything to a result)."""
    ctx = ctx or ToolContext()
    bounded = ctx.child(timeout=options.call_timeout)
    return await asyncio.wait_for(
        subject.tool.execute(args, bounded), options.call_timeout + options.grace + 1
    )


async def _valid_args(subject: ToolSubject, options: RunOptions) -> Any:
    from ._live_common import simple_args

    return await simple_args(subject, options)


async def _invalid_args(subject: ToolSubject, options: RunOptions) -> Any:
    from .._explore import first_example, invalid_strategy

    strategy = invalid_strategy(subject.input_schema).filter(
        lambda drawn: isinstance(drawn.value, dict)
    )
    return await first_example(strategy, options)


def _is_protocol_error(result: ToolResult) -> bool:
    return (
        result.metadata.get("error_type") == "MCPError"
        and result.metadata.get("mcp_error_code") not in _TRANSPORT_CODES
    )


def _gone_result(result: ToolResult) -> bool:
    return result.metadata.get("error_type") == "ServerUnavailable"


# -- live: how the server answers ---------------------------------------------------------
@check(
    "TN651",
    "mcp-error-result",
    title="A failing tool answers with an error result, not a JSON-RPC error",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="The MCP specification puts tool failures in the result (isError: true) so the model"
    " reads them and can correct itself; a JSON-RPC error is for unknown tools and malformed"
    " requests, and many hosts surface it as a crash or drop it.",
    fix="Catch exceptions in the tool handler and return CallToolResult(isError=True) with a"
    " message; validate arguments and report problems the same way.",
    reference="MCP 2025-11-25 server/tools#error-handling",
    live=True,
    sources=MCP,
)
async def mcp_error_result(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    _live_connection(subject, options)
    findings: list[Finding] = []
    attempts: list[tuple[str, Any]] = [("valid", await _valid_args(subject, options))]
    try:
        invalid = await _invalid_args(subject, options)
        attempts.append((f"invalid ({invalid.mutation})", invalid.value))
    except Skip:
        pass
    for kind, args in attempts:
        result = await _call(subject, args, options)
        if _gone_result(result):
            return [Finding(result.output, sent=args)]
        if _is_protocol_error(result):
            findings.append(
                Finding(
                    f"{kind} arguments got a JSON-RPC error instead of an isError result:"
                    f" {result.output}",
                    sent=args,
                    got=result.output,
                )
            )
    return findings[:1]


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
    sources=MCP,
)
async def mcp_cancel_survives(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    connection = _live_connection(subject, options)
    args = await _valid_args(subject, options)
    ctx = ToolContext()
    handle = asyncio.get_running_loop().call_later(CANCEL_AFTER, ctx.cancel, "conformance check")
    try:
        result = await _call(subject, args, options, ctx)
    finally:
        handle.cancel()
    if _gone_result(result):
        return [Finding(result.output, sent=args)]
    problem = await connection.probe(options.grace)
    if problem is None:
        return []
    return [
        Finding(
            f"after the call was cancelled {CANCEL_AFTER:g}s in, {problem}",
            sent=args,
            got=result.output,
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
    sources=MCP,
)
async def mcp_progress_after_cancel(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    connection = _live_connection(subject, options)
    declared = _declared(subject, connection)
    args = await _valid_args(subject, options)
    ctx = ToolContext()
    cancelled_at: list[float] = []

    def cancel() -> None:
        cancelled_at.append(time.monotonic())
        ctx.cancel("conformance check")

    with connection.progress_log() as log:
        handle = asyncio.get_running_loop().call_later(CANCEL_AFTER, cancel)
        try:
            call = connection.call(declared, args, ctx, timeout=options.call_timeout, progress=log)
            result = await asyncio.wait_for(call, options.call_timeout + options.grace + 1)
        finally:
            handle.cancel()
        if _gone_result(result):
            return [Finding(result.output, sent=args)]
        if not cancelled_at:
            raise Skip(f"the call finished within {CANCEL_AFTER:g}s, before it could be cancelled")
        await asyncio.sleep(max(options.grace, 2 * IN_FLIGHT))  # the window we watch
    late = [event.at - cancelled_at[0] for event in log.after(cancelled_at[0] + IN_FLIGHT)]
    if not late:  # includes a tool that sends no progress at all: nothing to judge
        return []
    return [
        Finding(
            f"{len(late)} progress notification(s) arrived after the call was cancelled"
            f" {CANCEL_AFTER:g}s in, from {late[0]:.2f}s to {late[-1]:.2f}s after the"
            f" cancellation was sent ({len(log.events)} in all)",
            sent=args,
            got=result.output,
        )
    ]


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
    sources=MCP,
)
async def mcp_output_schema(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    schema = subject.extra.get("output_schema", getattr(subject.tool, "output_schema", None))
    if not isinstance(schema, Mapping):
        raise Skip("the tool declares no output schema")
    _live_connection(subject, options)
    args = await _valid_args(subject, options)
    result = await _call(subject, args, options)
    if _gone_result(result):
        return [Finding(result.output, sent=args)]
    if result.is_error:
        raise Skip(f"the call with the simplest valid arguments failed: {result.output[:200]}")
    problems = result.metadata.get("output_schema_errors") or []
    if not problems:
        return []
    return [
        Finding(
            f"structured content breaks the output schema: {'; '.join(map(str, problems))}",
            sent=args,
            got=result.metadata.get("structured_content"),
        )
    ]


@check(
    "TN552",
    "mcp-error-text-not-flagged",
    title="Text that reads as an error is sent with isError true",
    category=Category.RESULT,
    severity=Severity.WARNING,
    why="A traceback or error message sent as a success makes the model trust a failure and"
    " build on it; hosts also lose the chance to retry.",
    fix="Return failures with isError: true (in Python: CallToolResult(isError=True, ...) or"
    " raise inside an MCPServer tool, which the SDK turns into an error result).",
    live=True,
    sources=MCP,
)
async def mcp_error_text(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    _live_connection(subject, options)
    args = await _valid_args(subject, options)
    result = await _call(subject, args, options)
    if _gone_result(result):
        return [Finding(result.output, sent=args)]
    if result.is_error:
        return []
    for pattern in _ERRORISH:
        match = pattern.search(result.output)
        if match:
            line = result.output[match.start() :].splitlines()[0] if result.output else ""
            return [
                Finding(
                    f"the result reads as an error ({line[:120]!r}) but isError is false",
                    sent=args,
                    got=result.output[:500],
                )
            ]
    return []
