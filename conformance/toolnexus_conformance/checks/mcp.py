"""MCP-specific checks of what a server declares: its own tool names, the prefixed
names a host exposes, and whether every server starts in time.

They judge the *server*: its tool names against the contract's rule and the MCP
specification's. The live checks of how it answers are in ``mcp_live``. Nothing
here imports the mcp SDK at module level: the catalog loads without the ``mcp`` extra.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from toolnexus_ref import MAX_NAME_LENGTH, is_valid_name

from .._model import Category, Finding, Scope, Severity, Skip
from .._options import RunOptions
from .._registry import check
from .._subject import ToolSubject
from ._start_excuses import excuse

MCP = ("mcp",)
SEP_986 = "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names"
_MCP_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")


# -- helpers ----------------------------------------------------------------------------
def original_name(subject: ToolSubject) -> str:
    value = subject.extra.get("original_name", getattr(subject.tool, "original_name", None))
    if not isinstance(value, str):
        raise Skip("the tool does not say its MCP server's original name")
    return value


def _mcp_name_problems(name: str) -> list[str]:
    try:
        from mcp.shared.tool_name_validation import validate_tool_name
    except ImportError:  # the rule itself, for a catalog loaded without the SDK
        return [] if _MCP_NAME.fullmatch(name) else ["outside [A-Za-z0-9._-]{1,128}"]
    result = validate_tool_name(name)
    return [] if result.is_valid else [w for w in result.warnings if "Allowed characters" not in w]


# -- naming -----------------------------------------------------------------------------
@check(
    "TN151",
    "mcp-name-contract",
    title="The server's own tool name follows the contract's rule",
    category=Category.NAMING,
    severity=Severity.WARNING,
    why="Hosts that pass MCP names through unchanged (many do) send them to OpenAI and"
    " Anthropic, which refuse any name outside [a-zA-Z0-9_-]{1,64} with a 400.",
    fix="Rename the tool on the server to letters, digits, '_' and '-', at most 64 characters"
    " (e.g. 'search_files' instead of 'search.files').",
    reference="openai-python types/shared_params/function_definition.py; anthropic tool_param.py",
    sources=MCP,
)
def mcp_name_contract(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    name = original_name(subject)
    if is_valid_name(name):
        return []
    spec = (
        "valid under the MCP specification"
        if not _mcp_name_problems(name)
        else ("invalid under the MCP specification too")
    )
    return [
        Finding(
            f"MCP tool name {name!r} is {spec}, but OpenAI and Anthropic refuse it: it is not"
            f" 1-64 characters of [a-zA-Z0-9_-] (exposed here as {subject.name!r})",
            path="original_name",
        )
    ]


@check(
    "TN152",
    "mcp-name-spec",
    title="The server's own tool name follows the MCP specification (SEP-986)",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="The MCP specification limits tool names to 1-128 characters of [A-Za-z0-9_.-];"
    " clients may reject or mangle other names.",
    fix="Rename the tool to letters, digits, '_', '-' and '.', at most 128 characters.",
    reference=SEP_986,
    sources=MCP,
)
def mcp_name_spec(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    name = original_name(subject)
    problems = _mcp_name_problems(name)
    if not problems:
        return []
    return [
        Finding(
            f"MCP tool name {name!r} breaks SEP-986: {'; '.join(problems)}", path="original_name"
        )
    ]


@check(
    "TN153",
    "mcp-prefixed-length",
    title="The prefixed name stays within 64 characters",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="Hosts expose MCP tools as '<server>_<tool>'; past 64 characters OpenAI, Anthropic and"
    " Gemini answer with a 400 for the whole request, a common production failure.",
    fix="Shorten the tool name or the server's name in the config; the prefix counts.",
    sources=MCP,
)
def mcp_prefixed_length(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    name = subject.name
    if not isinstance(name, str) or len(name) <= MAX_NAME_LENGTH:
        return []
    server = subject.extra.get("server_name", getattr(subject.tool, "server_name", "?"))
    return [
        Finding(
            f"the exposed name {name!r} is {len(name)} characters (server prefix {server!r} +"
            f" tool {original_name(subject)!r}); the limit is {MAX_NAME_LENGTH}",
            path="name",
        )
    ]


# -- the server as a whole ------------------------------------------------------------------
@check(
    "TN851",
    "mcp-server-starts",
    title="Every enabled server starts and lists its tools within its timeout",
    category=Category.TIMEOUT,
    severity=Severity.ERROR,
    why="A server that hangs at start-up or fails its handshake gives the model no tools, and"
    " a host that waits for it without a bound hangs with it.",
    fix="Read the reason and the stderr tail; make start-up faster or raise 'timeout' in the"
    " server's mcp.json entry. A server started by a package runner (npx, uvx) that fails in"
    " a sandbox without network is not judged: it could not download itself; install it and"
    " name its own command. Nor is one the sandbox refused a write at start (its own folder,"
    " the working directory: read-only there), or one whose command names a path that does"
    " not exist (a database it would create: the sandbox lets it create nothing outside its"
    " scratch), one that reaches the network as it starts (a lookup, a service on localhost),"
    " or one that does not find a file in its home folder (the sandbox gives it an empty"
    " one). --toolnexus-writable-copy FOLDER lets it write there, in a copy that ends with"
    " its sandbox; then it is judged. Nor is one that names a variable it did not get (an API"
    " key): set in your shell, the kit did not pass it; pass it with --toolnexus-env NAME.",
    scope=Scope.TARGET,
    sources=("mcp",),
)
def mcp_server_starts(subject: Any, options: RunOptions) -> Iterable[Finding]:
    statuses = subject.extra.get("statuses")
    if not isinstance(statuses, Mapping) or not statuses:
        raise Skip("not an MCP target")
    failed = {n: s for n, s in statuses.items() if getattr(s, "state", None) == "failed"}
    # A start the run itself prevented is the run's doing, not the server's.
    excused = {n: why for n, st in failed.items() if (why := excuse(subject, n, st, options))}
    if failed and excused.keys() == failed.keys():
        raise Skip("; ".join(excused.values()))
    return [
        Finding(status.describe(), path=f"servers.{name}")
        for name, status in failed.items()
        if name not in excused
    ]


@check(
    "TN852",
    "mcp-server-keeps-protocol",
    title="Every server writes only JSON-RPC on stdout and ends its tools/list paging",
    category=Category.TIMEOUT,
    severity=Severity.ERROR,
    why="Over stdio, stdout is the protocol channel: a banner or a log line there is a message"
    " no client can parse (strict clients drop the connection), and a tools/list whose"
    " nextCursor never runs out keeps a host listing until its own limit cuts the list short.",
    fix="Log to stderr, never stdout (print(..., file=sys.stderr), logging's default handler);"
    " return nextCursor only while pages remain, and never a cursor already given.",
    reference="https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio",
    scope=Scope.TARGET,
    sources=("mcp",),
)
def mcp_server_keeps_protocol(subject: Any, options: RunOptions) -> Iterable[Finding]:
    statuses = subject.extra.get("statuses")
    if not isinstance(statuses, Mapping) or not statuses:
        raise Skip("not an MCP target")
    return [
        Finding(f"{name}: {problem}", path=f"servers.{name}")
        for name, status in statuses.items()
        for problem in getattr(status, "problems", ())
    ]


#: A host name no DNS resolves (RFC 6761): what a page served from a rebound name sends.
FOREIGN_HOST = "rebind.invalid"
#: The bound on the one request the check sends to each HTTP server.
ORIGIN_TIMEOUT = 5.0


@check(
    "TN853",
    "mcp-http-foreign-origin",
    title="An HTTP server refuses a request from a foreign Host and Origin",
    category=Category.TIMEOUT,
    severity=Severity.WARNING,
    why="A web page can make a browser send requests to a server on the user's own machine"
    " under a host name it controls (DNS rebinding); a local MCP server that answers whatever"
    " Host and Origin it is sent lets any page the user opens list and call its tools. The"
    " specification asks servers to validate Origin on every connection.",
    fix="Validate the Host and Origin headers and refuse others with 403 (the Python SDK:"
    " TransportSecuritySettings with enable_dns_rebinding_protection and allowed_hosts /"
    " allowed_origins; the TypeScript SDK: allowedHosts / allowedOrigins, or"
    " createMcpExpressApp's host validation); bind local servers to 127.0.0.1, not 0.0.0.0.",
    reference="https://modelcontextprotocol.io/specification/2025-11-25/basic/transports"
    "#security-warning",
    scope=Scope.TARGET,
    sources=("mcp",),
)
def mcp_http_foreign_origin(subject: Any, options: RunOptions) -> Iterable[Finding]:
    source = subject.extra.get("mcp_source")
    connections = getattr(source, "connections", None)
    if not isinstance(connections, Mapping):
        raise Skip("not an MCP target")
    servers = [
        (name, connection.config)
        for name, connection in connections.items()
        if getattr(connection.config, "type", None) == "http"
        and getattr(connection.config, "url", None)
        and connection.status.ok
    ]
    if not servers:
        raise Skip("no connected MCP server over HTTP (DNS rebinding concerns HTTP servers)")
    findings = []
    for name, config in servers:
        answered = _answers_foreign_origin(config.url, config.headers)
        if answered is not None:
            findings.append(Finding(f"{name}: {answered}", path=f"servers.{name}"))
    return findings


def _answers_foreign_origin(url: str, headers: Mapping[str, Any]) -> str | None:
    """What the server did with an ``initialize`` from a foreign Host and Origin, if it served it.

    ``None`` when it refused (any status but 2xx, or no initialize result), or could
    not be reached at all: only a served request is held against it.
    """
    import json
    from urllib.parse import urlsplit

    import httpx

    parts = urlsplit(url)
    foreign = FOREIGN_HOST + (f":{parts.port}" if parts.port else "")
    sent = {
        **{k: v.reveal() if hasattr(v, "reveal") else str(v) for k, v in headers.items()},
        "Host": foreign,
        "Origin": f"{parts.scheme}://{foreign}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "toolnexus-conformance", "version": "1"},
        },
    }
    try:
        with httpx.Client(timeout=ORIGIN_TIMEOUT, follow_redirects=False) as client:
            with client.stream("POST", url, headers=sent, content=json.dumps(body)) as response:
                text = b""
                if 200 <= response.status_code < 300:
                    for chunk in response.iter_bytes():
                        text += chunk
                        if b'"protocolVersion"' in text or len(text) > 65536:
                            break
                session = response.headers.get("mcp-session-id")
            served = b'"protocolVersion"' in text
            if served and session:  # leave no session behind (with the server's own Host)
                polite = {k: v for k, v in sent.items() if k not in ("Host", "Origin")}
                try:
                    client.delete(url, headers={**polite, "mcp-session-id": session})
                except httpx.HTTPError:
                    pass
    except httpx.HTTPError:
        return None
    if not served:
        return None
    return (
        f"an initialize request with Host {foreign!r} and Origin"
        f" '{parts.scheme}://{foreign}' was answered with HTTP {response.status_code} and an"
        " initialize result; a page under a rebound host name could use this server"
    )
