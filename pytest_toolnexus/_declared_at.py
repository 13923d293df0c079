"""Where a tool is declared, as a file and line a reviewer can open.

A Python tool's position is read by its worker (``process._declared``), so none of
the target's code runs here; a tool imported in pytest's own process
(``--toolnexus-isolation none``) is read here in bounded time. An MCP tool from an
``mcp.json`` points at that file, at the line of its server's entry when it can be
told. Nothing else (a stdio command, a URL) has a file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["DeclaredAt", "declared_at", "mcp_json_line"]

#: ``{"file": path, "line": number}``: the path relative to the rootdir when under it.
DeclaredAt = dict[str, Any]


def declared_at(subject: Any, rootdir: Path, cache: dict[str, Any]) -> DeclaredAt | None:
    """The file and line of a ``ToolSubject`` (or ``None`` when the kit cannot tell)."""
    position = getattr(subject, "position", None)
    if position is None and getattr(subject, "tool", None) is not None:
        position = _read_in_process(subject)
    if isinstance(position, tuple | list) and len(position) == 2:
        path, line = position
        if isinstance(path, str) and isinstance(line, int):
            return {"file": _relative(Path(path), rootdir), "line": max(1, line)}
    return _mcp_json(str(getattr(subject, "target", "")), subject, rootdir, cache)


def _read_in_process(subject: Any) -> tuple[str, int] | None:
    """A tool this process imported: its function's file and line, read in bounded time."""
    from toolnexus_conformance._reading import read_bounded
    from toolnexus_conformance.process._declared import _position

    tool = subject.tool
    if type(tool).__name__ == "DeclaredTool":  # declarations from a worker: plain data
        return None
    try:
        value = read_bounded([tool], [("position", _position)], limit=2.0)[0]["position"]
    except Exception:
        return None
    return value if isinstance(value, tuple) else None


def _relative(path: Path, rootdir: Path) -> str:
    try:
        return path.resolve().relative_to(rootdir.resolve()).as_posix()
    except (ValueError, OSError):
        return str(path)


def _mcp_json(target: str, subject: Any, rootdir: Path, cache: dict[str, Any]) -> DeclaredAt | None:
    """The ``mcp.json`` a target names, at the line of the tool's server when there is one."""
    from toolnexus_conformance.targets import TargetError, TargetKind, parse_target

    label = re.sub(r"#\d+$", "", target)  # a target given twice is labelled "x#2"
    try:
        spec = parse_target(label, base_dir=rootdir)
    except TargetError:
        return None
    if spec.kind is not TargetKind.MCP_JSON:
        return None
    path = Path(spec.value)
    if not path.is_absolute():
        path = rootdir / path
    key = str(path)
    if key not in cache:
        try:
            cache[key] = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            cache[key] = None
    text = cache[key]
    if text is None:
        return None
    name = str(getattr(subject, "display_name", "") or "")
    return {"file": _relative(path, rootdir), "line": mcp_json_line(text, name)}


def mcp_json_line(text: str, tool: str) -> int:
    """The line of the server entry a tool belongs to; 1 when that cannot be told.

    A file of one server: that server's line. Of several: the server whose name
    begins the tool's name (how the MCP source prefixes tools of several servers).
    """
    try:
        data = json.loads(text)
    except ValueError:
        return 1
    servers: list[str] = []
    if isinstance(data, dict):
        for key in ("mcpServers", "servers", "mcp_servers"):
            block = data.get(key)
            if isinstance(block, dict):
                servers.extend(str(name) for name in block)
    chosen = servers[0] if len(servers) == 1 else None
    for name in sorted(servers, key=len, reverse=True):
        if len(servers) > 1 and re.match(rf"{re.escape(name)}(\W|_|$)", tool):
            chosen = name
            break
    if chosen is None:
        return 1
    needle = json.dumps(chosen)
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return 1
