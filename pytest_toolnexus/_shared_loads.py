"""Targets listed once per xdist run on one machine, whichever worker lists them.

xdist's workers each collect the whole run, and collecting needs every target's
tools: without this, every worker starts every MCP server and imports every
Python target. Here the workers of one run share a folder (named by xdist's
``testrunuid``, in the system's temporary folder). The first worker to want a
target takes its lock (``fcntl.flock``, released by the kernel if the worker
dies), loads it for real and writes what it listed as plain data with a record
of who listed it; the others read that and build the same subjects without
loading. The controller reads the records to give a server to the worker that
already has it running (``_scheduler``), and removes the folder at the end.

Only local workers share (the controller says so in ``workerinput``): a worker
on another host has its own temporary folder, and loads what it needs itself.

Imports only the standard library (and ``_units``, which does too): loaded at
configure.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._units import server_unit

__all__ = [
    "SHARED_KEY",
    "Claim",
    "Listing",
    "SharedListings",
    "listers",
    "local_node",
    "remove_folder",
    "run_folder",
    "shared_for",
]

#: The key of xdist's ``workerinput`` saying that the worker may share listings.
SHARED_KEY = "toolnexus_shared_listings"
FOLDER_PREFIX = "toolnexus-listings-"
#: How often a worker waiting for another's listing looks again.
POLL = 0.05
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def run_folder(testrunuid: str) -> Path:
    """The folder the run's workers share: the same path in every local process."""
    return Path(tempfile.gettempdir()) / f"{FOLDER_PREFIX}{_UNSAFE.sub('_', testrunuid)}"


def local_node(node: Any) -> bool:
    """Whether an xdist node runs on this machine (a ``popen`` gateway, not via another)."""
    spec = getattr(getattr(node, "gateway", None), "spec", None)
    return bool(getattr(spec, "popen", False)) and not getattr(spec, "via", None)


def shared_for(workerinput: Any) -> SharedListings | None:
    """The listings a worker shares, if the controller said it may (``SHARED_KEY``)."""
    if not isinstance(workerinput, dict) or not workerinput.get(SHARED_KEY):
        return None
    uid = workerinput.get("testrunuid")
    if not uid:
        return None
    try:
        return SharedListings(run_folder(str(uid)), str(workerinput.get("workerid", "")))
    except OSError:  # no folder to share: each worker loads what it needs, as before
        return None


def remove_folder(testrunuid: str) -> None:
    shutil.rmtree(run_folder(testrunuid), ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Listing:
    """What a worker listed of a target: its declarations, or why it did not load."""

    label: str
    #: The xdist worker that listed it (``gw0``...), and its process.
    worker: str
    pid: int
    error: str | None
    #: The declarations, in the form of the target's kind (``_listed``).
    data: bytes


class Claim:
    """A target this worker lists: its lock is held until ``publish`` or ``release``."""

    def __init__(self, listings: SharedListings, key: str, fd: int) -> None:
        self._listings, self.key, self._fd = listings, key, fd

    def publish(
        self,
        label: str,
        data: bytes = b"",
        *,
        error: str | None = None,
        servers: list[str] | None = None,
        server: str | None = None,
    ) -> None:
        """Write the listing (the data first, then its record: a record means it is whole).

        ``servers``: the prefixes of the target's servers' tool names, when the
        target is explored by server (``_units``). ``server``: the tool-name prefix
        of the one server of an mcp.json this listing holds (the workers list an
        mcp.json's servers between them, each server once).
        """
        try:
            self._listings.write(self.key, label, data, error, servers or [], server)
        finally:
            self.release()

    def release(self) -> None:
        """Give the target up unlisted: the next worker to want it loads it."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class SharedListings:
    """The run's listings on this machine, as one worker sees them."""

    def __init__(self, folder: Path, worker: str) -> None:
        self.folder = folder
        self.worker = worker
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _path(self, key: str, suffix: str) -> Path:
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.folder / f"{digest}{suffix}"

    def take(self, key: str) -> Listing | Claim | None:
        """The target's listing if it is written, else its claim; ``None`` while another
        worker holds it (it is loading it now)."""
        listing = self.read(key)
        if listing is not None:
            return listing
        fd = os.open(self._path(key, ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return None
            raise
        listing = self.read(key)  # written between the first look and the lock
        if listing is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            return listing
        return Claim(self, key, fd)

    def wait(self, key: str, limit: float) -> Listing | Claim | None:
        """``take``, waiting up to ``limit`` seconds for the worker that holds the target."""
        end = time.monotonic() + limit
        while True:
            found = self.take(key)
            if found is not None or time.monotonic() >= end:
                return found
            time.sleep(POLL)

    def read(self, key: str) -> Listing | None:
        try:
            record = json.loads(self._path(key, ".json").read_text("utf-8"))
            data = self._path(key, ".data").read_bytes()
        except (OSError, ValueError):
            return None
        return Listing(
            label=str(record["label"]),
            worker=str(record["worker"]),
            pid=int(record["pid"]),
            error=record.get("error"),
            data=data,
        )

    def write(
        self,
        key: str,
        label: str,
        data: bytes,
        error: str | None,
        servers: list[str],
        server: str | None = None,
    ) -> None:
        record = {
            "key": key,
            "label": label,
            "worker": self.worker,
            "pid": os.getpid(),
            "error": error,
            "servers": servers,
            "server": server,
        }
        _replace(self._path(key, ".data"), data)
        _replace(self._path(key, ".json"), json.dumps(record).encode())


def _replace(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a reader never sees half of it."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def listers(testrunuid: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Which worker listed each target, and its servers' tool-name prefixes (for a
    target explored by server), by its node name (``toolnexus:<label>``).

    A server of an mcp.json listed on its own is keyed as its unit is
    (``toolnexus:<label>::<prefix>*``, ``_units``): its worker has it running.
    """
    found: dict[str, str] = {}
    servers: dict[str, list[str]] = {}
    for path in run_folder(testrunuid).glob("*.json"):
        try:
            record = json.loads(path.read_text("utf-8"))
            name = f"toolnexus:{record['label']}"
            if record.get("server"):
                found[server_unit(name, str(record["server"]))] = str(record["worker"])
                continue
            found[name] = str(record["worker"])
            if record.get("servers"):
                servers[name] = [str(p) for p in record["servers"]]
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found, servers
