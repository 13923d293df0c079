"""MCP-specific checks of what a server declares: its own tool names, the prefixed
names a host exposes, and whether every server starts in time.

They judge the *server*: its tool names against the contract's rule and the MCP
specification's. The live checks of how it answers are in ``mcp_live``. Nothing
here imports the mcp SDK at module level: the catalog loads without the ``mcp`` extra.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolnexus_ref import MAX_NAME_LENGTH, is_valid_name

from .._model import Category, Finding, Scope, Severity, Skip
from .._options import RunOptions
from .._registry import check
from .._subject import ToolSubject

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
    " scratch), or one that does not find a file in its home folder (the sandbox gives it an"
    " empty one). --toolnexus-writable-copy FOLDER lets it write there, in a copy that ends with"
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
    # A start the run itself prevented is the run's doing, not the server's: a variable
    # it needs that the kit did not pass (anywhere), and, in a sandbox that holds (no
    # network; the machine read-only but for the server's scratch), what the sandbox kept.
    excused: dict[str, str] = {}
    for name, status in failed.items():
        if (withheld := _withheld(subject, name, status, options)) is not None:
            variable, set_here = withheld
            how = (
                "which is set here but not passed to the processes the kit starts (only a"
                f" short allowlist is). Pass it with --toolnexus-env {variable}"
                if set_here
                else "which is not set here: it needs it (a key, a setting) to start. Set it"
                f" and pass it with --toolnexus-env {variable}"
            )
            excused[name] = (
                f"{name} did not start ({status.reason or 'failed'}): it names {variable},"
                f" {how}, or give it in the server's env block (mcp.json)"
            )
            continue
        if subject.target not in options.contained:
            continue
        runner = _runner_of(subject, name)
        if runner is not None:
            excused[name] = (
                f"{name} did not start ({status.reason or 'failed'}): its command, {runner},"
                " fetches the server when it starts, and the sandbox has no network. Install"
                " the server and name its own command (node .../dist/index.js, the package's"
                " script), or pass --toolnexus-allow-network"
            )
        elif (written := _read_only_write(subject, name, status, options)) is not None:
            excused[name] = (
                f"{name} did not start: it writes to {written}, which the sandbox keeps"
                " read-only (only the server's scratch folder, its HOME and TMPDIR, is"
                " writable). Point what it writes there (a log file, a cache), give it a"
                " copy to write with --toolnexus-writable-copy"
                f" {_folder_of(subject, name, written)}, or judge it with"
                " --toolnexus-sandbox off"
            )
        elif (home := _missing_in_home(status)) is not None:
            excused[name] = (
                f"{name} did not start ({status.reason or 'failed'}): it looks for {home} in"
                " its home folder, which the sandbox replaces with an empty one (yours is"
                " hidden: ~/.ssh, ~/.aws). Name the file in its command or its env block"
                " (a path its command names is shown, read-only), or judge it with"
                " --toolnexus-sandbox off"
            )
        elif (missing := _missing_path_of(subject, name, status, options)) is not None:
            excused[name] = (
                f"{name} did not start ({status.reason or 'failed'}): its command names"
                f" {missing}, which does not exist, and the sandbox lets it create nothing"
                " outside its scratch folder (its HOME and TMPDIR). Give it a copy of the"
                f" folder to write with --toolnexus-writable-copy {os.path.dirname(missing)},"
                " create it first (the sandbox shows it, read-only), or judge the server"
                " with --toolnexus-sandbox off"
            )
    if failed and excused.keys() == failed.keys():
        raise Skip("; ".join(excused.values()))
    return [
        Finding(status.describe(), path=f"servers.{name}")
        for name, status in failed.items()
        if name not in excused
    ]


#: A write the sandbox refused, as a server's stderr says it (Python's OSError, Node's
#: EROFS), with the path it named.
_READ_ONLY = re.compile(
    r"(?:\[Errno 30\] Read-only file system|EROFS: read-only file system)[^'\"\n]*['\"]"
    r"([^'\"\n]+)['\"]"
)


#: A variable's name as programs print it (``GITHUB_TOKEN``, ``BRAVE_API_KEY``).
_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b")
#: A line about the environment: "environment variable", ``process.env.X``,
#: ``os.environ["X"]``, ``getenv`` (not a path through a ``venv``).
_ABOUT_ENVIRONMENT = re.compile(r"\b(?:env|environ|environment|getenv)\b", re.IGNORECASE)


def _withheld(subject: Any, name: str, status: Any, options: RunOptions) -> tuple[str, bool] | None:
    """A variable the failed server's stderr names that did not reach it, and whether it
    is set in this process (then the kit cut it: not allowlisted, not passed by the
    user); one not set anywhere counts only on a line about the environment
    (``BRAVE_API_KEY environment variable is required``, ``os.environ["X"]``), where
    the server asks for its configuration, not on any line that names a constant.
    Never one the server's ``env`` block gives or the user passed: its failure is real.
    """
    from ..process._sandbox import passes

    said = str(getattr(status, "stderr_tail", "") or "")
    given = getattr(_config_of(subject, name), "env", None) or {}
    for line in said.splitlines():
        variable: str
        for variable in _VARIABLE.findall(line):
            if variable in given or passes(variable, options.passed_variables):
                continue
            if os.environ.get(variable):
                return variable, True
            if _ABOUT_ENVIRONMENT.search(line):
                return variable, False
    return None


#: A file a server did not find in the home folder the sandbox gave it (``HOME`` is
#: ``.home`` in the server's scratch: ``_sandbox.Sandbox.wrap``).
_IN_SCRATCH_HOME = re.compile(
    r"/(?:toolnexus-scratch|toolnexus-server-[^/\s'\"]+)/\.home(/[^\s'\"]+)"
)
_NOT_FOUND = ("No such file", "ENOENT", "not found", "does not exist", "FileNotFoundError")


def _missing_in_home(status: Any) -> str | None:
    """The file, as ``~/...``, that the failed server's stderr says it did not find in
    the home folder the sandbox gave it, if it says so."""
    said = str(getattr(status, "stderr_tail", "") or "")
    for line in said.splitlines():
        found = _IN_SCRATCH_HOME.search(line)
        if found and any(words in line for words in _NOT_FOUND):
            return f"~{found.group(1)}"
    return None


def _missing_path_of(subject: Any, name: str, status: Any, options: RunOptions) -> str | None:
    """A path the server ``name``'s command names (``/x`` or ``--opt=/x``) that does not
    exist, in a folder that does: a database or a file it would create as it starts.

    Not one it says it could not find (``No such file``, ``Cannot find module``): a
    mistyped script or a file it only reads, which fails outside the sandbox too. Nor
    one in a writable copy, where the sandbox let it create the file.
    """
    said = getattr(status, "stderr_tail", "") or ""
    for word in _command_of(subject, name)[1:]:
        if not isinstance(word, str):
            continue
        path = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if not os.path.isabs(path) or os.path.lexists(path):
            continue
        if not os.path.isdir(os.path.dirname(path)) or _in_copy(path, options):
            continue
        if path in said and any(n in said for n in ("No such file", "Cannot find module")):
            continue
        return path
    return None


def _read_only_write(subject: Any, name: str, status: Any, options: RunOptions) -> str | None:
    """The path a server that failed to start was refused writing to, if its stderr says
    so; not one in a writable copy, which the sandbox did not refuse."""
    found = _READ_ONLY.search(getattr(status, "stderr_tail", "") or "")
    if found is None:
        return None
    written = _absolute(subject, name, found.group(1))
    return None if written and _in_copy(written, options) else found.group(1)


def _in_copy(path: str, options: RunOptions) -> bool:
    """Whether the absolute ``path`` lies in a folder the sandbox gave as a writable copy."""
    where = Path(os.path.normpath(path))
    return any(where == f or f in where.parents for f in map(Path, options.writable_copies))


def _absolute(subject: Any, name: str, path: str) -> str | None:
    """``path`` as the server ``name`` named it, made absolute from its working directory
    (``None``: relative, and the server's folder is not known here)."""
    if os.path.isabs(path):
        return path
    config = _config_of(subject, name)
    folder = getattr(config, "cwd", None)
    return os.path.join(str(folder), path) if folder else None


def _folder_of(subject: Any, name: str, path: str) -> str:
    """The folder to give as a writable copy, for a write to ``path``."""
    written = _absolute(subject, name, path)
    return os.path.dirname(written) if written else "FOLDER"


#: Commands that download the package they run when it is not cached: in a sandbox
#: without network (and whose HOME, where their cache lives, is empty) they cannot start.
_RUNNERS = {"npx", "pnpx", "bunx", "uvx"}
_RUNNER_VERBS = {"npm": "exec", "pnpm": "dlx", "yarn": "dlx", "bun": "x", "pipx": "run"}


def _config_of(subject: Any, name: str) -> Any:
    """The server ``name``'s configuration (``None`` where the subject does not carry it)."""
    source = subject.extra.get("mcp_source")
    connections = getattr(source, "connections", None)
    connection = connections.get(name) if isinstance(connections, Mapping) else None
    return getattr(connection, "config", None)


def _command_of(subject: Any, name: str) -> tuple[Any, ...]:
    """The command line the server ``name`` is started with (empty if none: over HTTP)."""
    command = getattr(_config_of(subject, name), "command", ())
    return command if isinstance(command, tuple) else ()


def _runner_of(subject: Any, name: str) -> str | None:
    """``npx`` (or another package runner) when it is how the server ``name`` starts."""
    command = _command_of(subject, name)
    if not command or not isinstance(command[0], str):
        return None
    program = re.split(r"[/\\]", command[0])[-1].removesuffix(".cmd").removesuffix(".exe")
    if program in _RUNNERS:
        return program
    verb = _RUNNER_VERBS.get(program)
    if verb is not None and verb in command[1:3]:
        return f"{program} {verb}"
    if program == "uv" and command[1:3] == ("tool", "run"):
        return "uv tool run"
    return None


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
