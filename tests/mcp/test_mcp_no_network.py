"""A call that fails or waits for want of a network: what the finding tells.

TN803 and a call that waits on a service: what the server wrote while it waited.

mcp-neo4j-cypher with no database to reach answers no call: its driver retries the
connection, and says so on stderr, until long past the call timeout. "The call did not
return within 30s" is a warning its authors would accept (a host waits that long), but
the reason is in what the server wrote meanwhile, and in the kit's sandbox (no network,
not even the loopback's services) the way to judge the tool is
``--toolnexus-allow-network``. The finding quotes the end of that stderr, and names the
option when the sandbox held the server and the stderr says a connection was refused.

TN651 and a call the sandbox's missing network failed: @notionhq/notion-mcp-server
answers ``getaddrinfo EAI_AGAIN api.notion.com`` with JSON-RPC -32603 for every tool,
read-only ones too. The finding stands (an outage is answered the same way, and the
specification puts API failures in an isError result), and it says that the sandbox
refused the lookup, as it did for tools called only because the sandbox holds.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from toolnexus_conformance._model import Finding
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance._subject import ToolSubject
from toolnexus_conformance.checks.mcp_live import _called_for_the_sandbox
from toolnexus_conformance.checks.timing import SAID_LINES, call_answers
from toolnexus_conformance.live._calls import CallOutcome
from toolnexus_conformance.live._observation import Observation
from toolnexus_conformance.live._search import Call
from toolnexus_conformance.process._sandbox import probe

from toolnexus_ref import ToolAnnotations

WAITS_FOR_SERVICE = Path(__file__).resolve().parent / "servers" / "waits_for_service.py"
TARGET = "stdio:server"
REFUSED = "lookup failed, retrying in 0.2s ([Errno 111] Connect call failed ('127.0.0.1', 7687))"


def _subject(transport: str = "stdio") -> ToolSubject:
    """A read-only tool of an MCP server over ``transport`` (an mcp.json may mix stdio
    and http servers), called for its own hints."""
    connection = SimpleNamespace(config=SimpleNamespace(type=transport))
    return ToolSubject(
        tool=None,
        target=TARGET,
        name="lookup",
        description="Look the key up.",
        input_schema={"type": "object"},
        source="mcp",
        display_name="lookup",
        extra={"connection": connection},
        hints=ToolAnnotations(read_only=True),
    )


def _hung(said: str, options: RunOptions, transport: str = "stdio") -> str:
    """TN803's message for a call that timed out while its server wrote ``said``."""
    observation = Observation(_subject(transport), call_timeout=30.0)
    observation.simplest = {"query": ""}
    outcome = CallOutcome({"query": ""}, timed_out=True, elapsed=30.0, said=said)
    observation.unresponsive = Call({"query": ""}, outcome)
    found = call_answers(observation, options)
    assert isinstance(found, list)
    [finding] = found
    return str(finding.message)


def test_the_finding_quotes_the_end_of_what_the_server_wrote() -> None:
    banner = [f"starting, step {n}" for n in range(10)]
    message = _hung("\n".join([*banner, "", "x" * 1000, REFUSED]), RunOptions())
    first, _, quoted = message.partition("\n")
    assert first == (
        "the call did not return within 30s, for arguments {'query': ''}. While it waited,"
        " the server wrote on stderr:"
    )
    lines = quoted.splitlines()
    assert len(lines) == SAID_LINES
    assert lines[-1] == REFUSED  # the last line, where the reason is
    assert lines[-2].endswith("...")  # a long line shortened
    assert len(lines[-2]) < 300
    assert "starting, step 3" not in message  # older lines left out
    # Outside a sandbox that holds, the refused connection is the service's absence:
    # allowing the network would not change it.
    assert "--toolnexus-allow-network" not in message


def test_in_the_sandbox_a_refused_connection_names_the_option_that_gives_the_network() -> None:
    contained = RunOptions(contained=frozenset({TARGET}))
    message = _hung(REFUSED, contained)
    assert f"{REFUSED}\nIt was reaching for the network, and the sandbox" in message
    assert message.endswith("If the tool needs a service, judge it with --toolnexus-allow-network")
    # What the server wrote that says nothing of the network gets no advice about it,
    # nor does an HTTP server of the same mcp.json: the sandbox holds only stdio servers.
    assert "--toolnexus-allow-network" not in _hung("still working", contained)
    assert "--toolnexus-allow-network" not in _hung(REFUSED, contained, "http")


def test_a_call_that_timed_out_while_the_server_wrote_nothing_is_reported_as_before() -> None:
    assert _hung("", RunOptions()) == (
        "the call did not return within 30s, for arguments {'query': ''}"
    )


NOTION = (
    "valid arguments got a JSON-RPC error (code -32603) instead of an isError result:"
    " MCP error -32603: getaddrinfo EAI_AGAIN api.notion.com, for arguments {}"
)


def _aside(message: str, options: RunOptions, transport: str = "stdio") -> str | None:
    """What TN651 adds to ``message`` for a read-only tool (called for its own hints)."""
    observation = Observation(_subject(transport))
    return _called_for_the_sandbox(observation, options, Finding(message))


def test_a_protocol_error_for_a_lookup_the_sandbox_refused_says_so() -> None:
    contained = RunOptions(contained=frozenset({TARGET}))
    aside = _aside(NOTION, contained)
    assert aside is not None
    assert aside.startswith("the sandbox gives the server no network, so that may be what")
    assert aside.endswith("--toolnexus-allow-network judges the tool with the network")
    # Outside the sandbox the lookup failed by itself; another failure says nothing of
    # the network; an HTTP server is not in the sandbox.
    assert _aside(NOTION, RunOptions()) is None
    assert _aside("valid arguments got a JSON-RPC error (code -32603): boom", contained) is None
    assert _aside(NOTION, contained, "http") is None


def _serve(pytester: pytest.Pytester, port: int, *options: str) -> Any:
    return pytester.runpytest_subprocess(
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        f"stdio:{sys.executable} {WAITS_FOR_SERVICE} {port}",
        "--toolnexus-select",
        "TN803",
        "--toolnexus-call-timeout",
        "1",
        "-p",
        "no:cacheprovider",
        *options,
    )


def test_a_server_waiting_on_a_service_is_told_apart_from_one_that_hangs(
    pytester: pytest.Pytester,
) -> None:
    """End to end on a real server: the stderr of the call that hung is in the warning;
    with the service listening and the network given, the call answers."""
    with socket.create_server(("127.0.0.1", 0)) as service:
        port = service.getsockname()[1]
    # Nothing listens on the port now: the server's calls retry until they time out.
    waiting = _serve(pytester, port)
    waiting.assert_outcomes(passed=1, warnings=1)
    waiting.stdout.fnmatch_lines(
        [
            "*TN803 call-answers: the call did not return within 1s, for arguments"
            " {'key': ''}. While it waited, the server wrote on stderr:",
            "*lookup failed, retrying in 0.2s (*Connect call failed*",
        ],
        consecutive=False,
    )
    if probe().available:
        waiting.stdout.fnmatch_lines(["*judge it with --toolnexus-allow-network"])
    with socket.create_server(("127.0.0.1", 0)) as service:
        service.listen(8)
        answered = _serve(pytester, service.getsockname()[1], "--toolnexus-allow-network")
    answered.assert_outcomes(passed=1)
