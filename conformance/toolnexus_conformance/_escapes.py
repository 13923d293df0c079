"""What a tool tried to reach beyond its scratch folder, seen from inside its own process.

The sandbox refuses a write outside the scratch folder or a connection out, and the
tool usually turns the refusal into an error result or swallows it: the user would
never learn that, uncontained, the tool writes to their home or phones out. So the
process of each tool (``process._worker``) installs an audit hook (PEP 578) before
the tool runs: it records files opened for writing, removed, renamed or created
outside the scratch folder, and connections, name lookups and listening sockets that
leave the process. An audit hook cannot be removed, so a tool cannot hide from it.
TN607 reports what was recorded. Only Python code is seen: what a subprocess of the
tool does (``curl``, a shell) and what an MCP server in another language does is not.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["ESCAPES", "install", "installed"]

#: What the tool tried, in order, each once: ``(kind, what)``.
ESCAPES: list[tuple[str, str]] = []
#: At most this many are kept: a tool writing in a loop is one finding, not thousands.
LIMIT = 20

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1", "", "ip6-localhost"})
#: Path events: event name -> the positions of the paths they change.
_PATH_EVENTS = {
    "os.remove": ("remove", (0,)),
    "os.rmdir": ("remove", (0,)),
    "os.mkdir": ("create the folder", (0,)),
    "os.rename": ("rename", (0, 1)),
    "os.symlink": ("link", (1,)),
    "os.link": ("link", (1,)),
    "os.truncate": ("truncate", (0,)),
    "shutil.rmtree": ("remove", (0,)),
}

_state: dict[str, Any] = {"roots": (), "seen": set(), "bound": set(), "on": False}


def installed() -> bool:
    return bool(_state["on"])


def install(allowed: Iterable[str | os.PathLike[str]]) -> None:
    """Record, from now on, what this process does outside ``allowed`` folders."""
    _state["roots"] = tuple(os.path.realpath(os.fspath(p)) for p in allowed)
    if not _state["on"]:
        _state["on"] = True
        sys.addaudithook(_hook)


def _record(kind: str, what: str) -> None:
    key = (kind, what)
    seen: set[tuple[str, str]] = _state["seen"]
    if key in seen or len(ESCAPES) >= LIMIT:
        return
    seen.add(key)
    ESCAPES.append(key)


def _outside(path: Any) -> str | None:
    """The absolute path when it lies outside every allowed folder (and is not the kit's own)."""
    if isinstance(path, int) or path is None:
        return None
    raw = os.fsdecode(os.fspath(path))
    full = os.path.normpath(os.path.join(os.getcwd(), raw))
    if "__pycache__" in full.split(os.sep) or _in_bytecode_prefix(full):
        return None  # the interpreter caching bytecode of a module it imports (its folder too)
    if full.startswith("/dev/") and not full.startswith("/dev/shm/"):
        return None  # /dev/null, a terminal
    if full.startswith("/proc/self/"):
        return None
    roots: Sequence[str] = _state["roots"]
    if any(_under(full, root) for root in roots):
        return None
    real = os.path.realpath(full)  # a symlink inside scratch may point out of it
    if real != full and any(_under(real, root) for root in roots):
        return None
    return full


def _under(path: str, root: str) -> bool:
    """``path`` is the folder ``root`` or lies inside it (both absolute, normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _in_bytecode_prefix(full: str) -> bool:
    """Under ``sys.pycache_prefix`` (``PYTHONPYCACHEPREFIX``), where Python then keeps the
    bytecode it would write to ``__pycache__``: a module the tool imports lazily is
    compiled there during its call."""
    prefix = sys.pycache_prefix
    if not prefix:
        return False
    return _under(full, os.path.normpath(os.path.join(os.getcwd(), prefix)))


def _hook(event: str, args: tuple[Any, ...]) -> None:
    # Never raises: an exception here would fail the tool's own operation.
    try:
        if event == "open":
            path, mode, flags = (*tuple(args), None, None)[:3]
            writes = isinstance(mode, str) and any(c in mode for c in "wax+")
            if writes or (isinstance(flags, int) and flags & _WRITE_FLAGS):
                where = _outside(path)
                if where is not None:
                    _record("write", where)
        elif event in _PATH_EVENTS:
            kind, positions = _PATH_EVENTS[event]
            for position in positions:
                if position < len(args):
                    where = _outside(args[position])
                    if where is not None:
                        _record(kind, where)
        elif event in ("socket.connect", "socket.bind"):
            _socket(event, args[1])
        elif event == "socket.getaddrinfo":
            host = args[0]
            if isinstance(host, bytes):
                host = host.decode("idna", "replace")
            if isinstance(host, str) and not _local(host) and not _numeric(host):
                _record("look up", f"{host}:{args[1]}" if args[1] else host)
    except Exception:
        pass


def _numeric(host: str) -> bool:
    """An address, not a name: no lookup leaves the machine (its connection is recorded)."""
    import ipaddress

    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True


def _local(host: str) -> bool:
    return host.lower() in _LOCAL_HOSTS or host.startswith("127.")


def _socket(event: str, address: Any) -> None:
    if isinstance(address, (str, bytes)):  # a Unix socket
        name = os.fsdecode(address)
        if name.startswith("\0") or not name:
            if event == "socket.connect":
                _record("connect to", f"abstract Unix socket @{name[1:]}")
            return
        where = _outside(name)
        if where is not None:
            _record("connect to" if event == "socket.connect" else "listen on", where)
        return
    if not isinstance(address, tuple) or len(address) < 2:
        return
    host, port = str(address[0]), address[1]
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if event == "socket.bind":
        if _local(host):
            _state["bound"].add(port)  # its own server: connecting to it stays inside
        else:
            _record("listen on", shown)
        return
    bound: set[Any] = _state["bound"]
    if _local(host) and (port in bound or 0 in bound):
        return
    _record("connect to", shown)
