"""TN651 reads every JSON-RPC error a server answers a call with, whatever its code."""

from __future__ import annotations

import pytest
from toolnexus_conformance.checks.mcp_live import mcp_error_result
from toolnexus_conformance.live._calls import CallOutcome
from toolnexus_conformance.live._search import Call

from toolnexus_ref import ToolResult


def _call(code: int, message: str, mutation: str | None = None) -> Call:
    result = ToolResult.error(
        f"MCP error {code}: {message}", {"error_type": "MCPError", "mcp_error_code": code}
    )
    args = {"text": "x"}
    return Call(args, CallOutcome(args, value=result), mutation)


@pytest.mark.parametrize("code", [-32603, -32000, -32001, -32099, -32602, 0])
def test_a_server_error_of_any_code_is_a_finding(code: int) -> None:
    message = mcp_error_result(_call(code, "Tool failed: KeyError 'x'"))
    assert message is not None
    assert f"code {code}" in message


@pytest.mark.parametrize(
    ("code", "text"),
    [(-32000, "Connection closed"), (-32001, "Request 'tools/call' timed out")],
)
def test_errors_the_client_makes_up_are_not(code: int, text: str) -> None:
    assert mcp_error_result(_call(code, text)) is None


def test_a_plain_error_result_is_not() -> None:
    args = {"text": "x"}
    call = Call(args, CallOutcome(args, value=ToolResult.error("bad input")))
    assert mcp_error_result(call) is None
