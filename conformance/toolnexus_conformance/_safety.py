"""Whether a live check may call a tool at all: the suites must never be the thing that deletes data.

Under ``auto`` a tool is called only when nothing says it can act on the world:
MCP tools and builtins must be marked read-only, http tools must be GETs, and no
tool its owner marked destructive or open-world (it reaches systems outside the
machine) is called. Hints are read in every form authors write them
(``annotations_of``); hints that cannot be read make a tool unsafe, never safe.
Native, custom and skill tools without hints are the user's own Python and are called.
A tool's own ``call`` setting (``RunOptions.tools``) outranks all of this, both ways.
Where the kit started the tool's process in a sandbox that holds (no network, nothing
writable outside its scratch: ``RunOptions.contained``), every tool is called: what
it can change is its own scratch. That covers Python targets' workers and MCP stdio
servers, never HTTP servers or in-process objects.
The hints and an http tool's method are those read, in bounded time, with the
declaration (``ToolSubject.hints``, ``ToolSubject.http_method``): deciding reads
nothing of the tool again.
"""

from __future__ import annotations

from typing import Any

from ._options import ExecuteMode, RunOptions
from ._subject import MISSING, ToolSubject, hints_of

__all__ = ["called_for_the_sandbox", "in_sandbox", "may_execute"]

_HOW = (
    "allow it with --toolnexus-execute all, or name it in the ini list toolnexus_allow"
    " (as {name!r} or {qualified!r})"
)


_FORBIDDEN = "not called: its per-tool settings say call = false"


def _method(subject: ToolSubject) -> str | None:
    if subject.http_method is not MISSING:
        method: str | None = subject.http_method
        return method
    return _read_method(subject.tool)


def _read_method(tool: Any) -> str | None:
    """For a subject built without the bounded pass."""
    try:
        value = getattr(tool, "method", None)
    except Exception:  # a hostile attribute is no reason to call the tool
        return None
    return value.upper() if isinstance(value, str) else None


def _unsafe_reason(subject: ToolSubject) -> str | None:
    hints = hints_of(subject)
    source = subject.source if isinstance(subject.source, str) else None
    if not hints.readable:
        return f"its safety hints cannot be read ({hints.unreadable})"
    if hints.destructive is True:
        return "its owner marked it destructive"
    if hints.open_world is True:
        return "its owner marked it open-world (openWorldHint: it reaches systems outside this one)"
    if source == "mcp" and hints.read_only is not True:
        return "it is an MCP tool not marked read-only (readOnlyHint)"
    if source == "builtin" and hints.read_only is not True:
        return "it is a builtin tool that may write files or run commands (not marked read-only)"
    if source == "http":
        method = _method(subject)
        if method != "GET":
            shown = method or "unknown"
            return f"it is an http tool whose method is {shown}, not GET"
    return None


def in_sandbox(subject: ToolSubject, options: RunOptions) -> bool:
    """The tool runs in a process the kit started in a sandbox that holds."""
    if subject.target not in options.contained:
        return False
    if subject.source != "mcp":
        return True
    connection = subject.extra.get("connection")  # an mcp.json may mix stdio and http servers
    config = getattr(connection, "config", None)
    return getattr(config, "type", None) == "stdio"


def may_execute(subject: ToolSubject, options: RunOptions) -> str | None:
    """``None`` when live checks may call this tool; otherwise why not, and how to allow it."""
    name = subject.name if isinstance(subject.name, str) else subject.display_name
    qualified = f"{subject.target}::{name}"
    call = options.settings_for(subject.target, name).call if options.tools else None
    if call is not None:  # the tool's own setting outranks --toolnexus-execute
        return None if call else _FORBIDDEN
    mode = ExecuteMode(options.execute)
    if mode is ExecuteMode.NONE:
        return "live checks are off (--toolnexus-execute none): static checks only"
    if mode is ExecuteMode.ALL:
        return None
    if name in options.allow or qualified in options.allow:
        return None
    reason = _unsafe_reason(subject)
    if reason is None:
        return None
    if in_sandbox(subject, options) and hints_of(subject).readable:
        return None  # a declaration that cannot even be read is not called, sandbox or not
    return f"not called under --toolnexus-execute auto: {reason}; " + _HOW.format(
        name=name, qualified=qualified
    )


def called_for_the_sandbox(subject: ToolSubject, options: RunOptions) -> str | None:
    """Why ``auto`` would not call this tool outside the sandbox, where the sandbox holds.

    Such a tool was called because what it does is refused there (its writes outside
    scratch, its connections out), so an error from every call may be that refusal and
    says nothing of the tool. ``None`` for a tool called for its own hints.
    """
    if not in_sandbox(subject, options):
        return None
    return _unsafe_reason(subject)
