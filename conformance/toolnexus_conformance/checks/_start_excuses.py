"""Why an MCP server's failed start (TN851), or a Python target's failed import in its
worker (TN001), was the run's doing, not the server's or the target's.

The kit starts those processes with their environment cut to an allowlist, and, in a
sandbox that holds, with no network (a loopback of their own), the machine read-only
but for their scratch, and an empty home folder. One that fails for one of those
reasons is not broken: the check then skips, saying what the run kept from it and how
to judge it. Each excuse reads the failure's output, and for a server its command and
configuration; a failure none of them explains is the server's or the target's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._options import RunOptions

__all__ = ["excuse", "import_excuse", "network_refused"]


def excuse(subject: Any, name: str, status: Any, options: RunOptions) -> str | None:
    """Why the server ``name`` did not start for the run's own reason, or ``None``."""
    said = str(getattr(status, "stderr_tail", "") or "")
    began = f"{name} did not start ({status.reason or 'failed'})"
    config = _config_of(subject, name)
    if (withheld := _withheld(said, getattr(config, "env", None) or {}, options)) is not None:
        advice = _variable_advice(*withheld)
        return f"{began}: {advice}, or give it in the server's env block (mcp.json)"
    if subject.target not in options.contained:
        return None  # outside a sandbox that holds, the machine refused it: the server's
    command = _command_of(config)
    if (runner := _runner_of(command)) is not None:
        return (
            f"{began}: its command, {runner}, fetches the server when it starts, and the"
            " sandbox has no network. Install the server and name its own command (node"
            " .../dist/index.js, the package's script), or pass --toolnexus-allow-network"
        )
    if (kept := _kept_by_the_sandbox(said)) is not None:
        return f"{began}: {kept}"
    if (refused := _read_only_write(said, getattr(config, "cwd", None), options)) is not None:
        written, folder = refused
        return (
            f"{name} did not start: it writes to {written}, which the sandbox keeps"
            " read-only (only the server's scratch folder, its HOME and TMPDIR, is"
            " writable). Point what it writes there (a log file, a cache), give it a"
            f" copy to write with --toolnexus-writable-copy {folder}, or judge it with"
            " --toolnexus-sandbox off"
        )
    if (missing := _missing_path_of(command, said, options)) is not None:
        return (
            f"{began}: its command names {missing}, which does not exist, and the sandbox"
            " lets it create nothing outside its scratch folder (its HOME and TMPDIR). Give"
            " it a copy of the folder to write with --toolnexus-writable-copy"
            f" {os.path.dirname(missing)}, create it first (the sandbox shows it,"
            " read-only), or judge the server with --toolnexus-sandbox off"
        )
    return None


def import_excuse(subject: Any, options: RunOptions) -> str | None:
    """Why a Python target did not load in its worker process for the run's own reason
    (TN001), or ``None``: the worker's environment is cut as a server's is, and in a
    sandbox that holds it has no network, an empty home and nothing writable but its
    scratch. Loaded in pytest's own process (``--toolnexus-isolation none``), nothing
    was kept from it.
    """
    if not subject.extra.get("loaded_in_worker"):
        return None
    said = str(subject.extra.get("load_error") or "")
    began = "the target did not load in its worker process"
    if (withheld := _withheld(said, {}, options)) is not None:
        return f"{began}: {_variable_advice(*withheld)}"
    if subject.target not in options.contained:
        return None
    if (kept := _kept_by_the_sandbox(said)) is not None:
        return f"{began}: {kept}"
    if (refused := _read_only_write(said, None, options)) is not None:
        written, folder = refused
        return (
            f"{began}: it writes to {written} as it is imported, which the sandbox keeps"
            " read-only (only the worker's scratch folder, its HOME and TMPDIR, is"
            f" writable). Give it a copy to write with --toolnexus-writable-copy {folder},"
            " or judge it with --toolnexus-sandbox off"
        )
    return None


def _kept_by_the_sandbox(said: str) -> str | None:
    """What a failure's output says the sandbox kept from the process (the network, a
    file in the home folder), and how to judge it; ``None`` if it says neither."""
    if (reached := network_refused(said)) is not None:
        return (
            f"it reaches the network as it starts ({reached}), and the sandbox has none,"
            " not even your loopback's services (a database on localhost). Judge it with"
            " --toolnexus-allow-network"
        )
    if (home := _missing_in_home(said)) is not None:
        return (
            f"it looks for {home} in its home folder, which the sandbox replaces with an"
            " empty one (yours is hidden: ~/.ssh, ~/.aws). Name the file in its command or"
            " its env block (a path its command names is shown, read-only), or judge it"
            " with --toolnexus-sandbox off"
        )
    return None


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


def _withheld(said: str, given: Mapping[str, Any], options: RunOptions) -> tuple[str, bool] | None:
    """A variable the failure ``said`` names that did not reach the process, and whether
    it is set in this one (then the kit cut it: not allowlisted, not passed by the user);
    one not set anywhere counts only on a line about the environment (``BRAVE_API_KEY
    environment variable is required``, ``os.environ["X"]``), where the program asks
    for its configuration, not on any line that names a constant. Never one ``given``
    (a server's ``env`` block) holds or the user passed: that failure is real.
    """
    from ..process._sandbox import passes

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


def _variable_advice(variable: str, set_here: bool) -> str:
    """What to say of a variable ``_withheld`` found, and how to pass it."""
    if set_here:
        return (
            f"it names {variable}, which is set here but not passed to the processes the kit"
            f" starts (only a short allowlist is). Pass it with --toolnexus-env {variable}"
        )
    return (
        f"it names {variable}, which is not set here: it needs it (a key, a setting) to"
        f" start. Set it and pass it with --toolnexus-env {variable}"
    )


#: What a name lookup or a connection refused for want of a network says (Python,
#: asyncio, Node, libpq): in a sandbox without one, every lookup fails and nothing
#: listens on its own loopback.
_NO_NETWORK = (
    "getaddrinfo",
    "ENOTFOUND",
    "EAI_AGAIN",
    "Temporary failure in name resolution",
    "Name or service not known",
    "Network is unreachable",
    "ENETUNREACH",
    "ECONNREFUSED",
    "Connection refused",
    "Connect call failed",
    "[Errno 111]",
)


def network_refused(said: str) -> str | None:
    """The line of a failure's output that says a lookup or a connection was refused,
    shortened, if one does."""
    for line in said.splitlines():
        if any(words in line for words in _NO_NETWORK):
            shown = " ".join(line.split())
            return shown if len(shown) <= 160 else f"{shown[:157]}..."
    return None


#: A file not found in the home folder the sandbox gave a server or a worker (``HOME``
#: is ``.home`` in its scratch: ``_sandbox.Sandbox.wrap``).
_IN_SCRATCH_HOME = re.compile(
    r"/(?:toolnexus-scratch|toolnexus-(?:server|worker)-[^/\s'\"]+)/\.home(/[^\s'\"]+)"
)
_NOT_FOUND = ("No such file", "ENOENT", "not found", "does not exist", "FileNotFoundError")


def _missing_in_home(said: str) -> str | None:
    """The file, as ``~/...``, that a failure's output says was not found in the home
    folder the sandbox gave the process, if it says so."""
    for line in said.splitlines():
        found = _IN_SCRATCH_HOME.search(line)
        if found and any(words in line for words in _NOT_FOUND):
            return f"~{found.group(1)}"
    return None


def _missing_path_of(command: tuple[Any, ...], said: str, options: RunOptions) -> str | None:
    """A path a server's ``command`` names (``/x`` or ``--opt=/x``) that does not exist,
    in a folder that does: a database or a file it would create as it starts.

    Not one it says it could not find (``No such file``, ``Cannot find module``): a
    mistyped script or a file it only reads, which fails outside the sandbox too. Nor
    one in a writable copy, where the sandbox let it create the file.
    """
    for word in command[1:]:
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


def _read_only_write(said: str, cwd: object, options: RunOptions) -> tuple[str, str] | None:
    """The path a failure's output says a write was refused to (as it says it), and the
    folder to give as a writable copy (``FOLDER`` for a relative path where the working
    directory ``cwd`` is not known); ``None`` if it says none, or the path lies in a
    writable copy, where the sandbox did not refuse it."""
    found = _READ_ONLY.search(said)
    if found is None:
        return None
    path = found.group(1)
    written = path if os.path.isabs(path) else os.path.join(str(cwd), path) if cwd else None
    if written is None:
        return path, "FOLDER"
    if _in_copy(written, options):
        return None
    return path, os.path.dirname(written)


def _in_copy(path: str, options: RunOptions) -> bool:
    """Whether the absolute ``path`` lies in a folder the sandbox gave as a writable copy."""
    from ..process._command_roots import within

    return within(Path(os.path.normpath(path)), map(Path, options.writable_copies))


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


def _command_of(config: Any) -> tuple[Any, ...]:
    """The command line a server is started with (empty if none: over HTTP)."""
    command = getattr(config, "command", ())
    return command if isinstance(command, tuple) else ()


def _runner_of(command: tuple[Any, ...]) -> str | None:
    """``npx`` (or another package runner) when it is how the server starts."""
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
