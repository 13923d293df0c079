"""A target's listing as plain data, and the target built back from it, unloaded.

Under xdist one worker lists a target (``_shared_loads``) and the others build
the same subjects from what it wrote: a Python target from its declarations
(``process._declared``: the form they already cross from its worker process in),
an MCP target from its servers' ``tools/list`` results and statuses. Nothing of
the target runs to build them. A worker given the target's tools to explore
loads it then: a Python target's worker starts at its first tool, MCP servers
start at the first live check (``McpSource.connect``); either way, tools that
differ from the listing are the target's error, never judged against it.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from pathlib import Path
from typing import Any

from toolnexus_conformance._imports import import_whole
from toolnexus_conformance._subject import extras_of
from toolnexus_conformance.process._declared import dumps, loads
from toolnexus_conformance.process._isolation import TargetWorker, WorkerError
from toolnexus_conformance.targets import LoadedTarget, TargetKind, TargetSpec

__all__ = [
    "ListedWorker",
    "listing_of",
    "loaded_from",
    "mcp_from_listing",
    "needs_client",
    "python_from_listing",
    "ready_to_build",
    "server_prefixes",
    "shareable",
]

_MCP_KINDS = (TargetKind.STDIO, TargetKind.MCP_JSON)
_CLIENT_KINDS = (*_MCP_KINDS, TargetKind.HTTP)


def shareable(spec: TargetSpec, *, isolated: bool) -> bool:
    """Whether a target can be listed in one worker and built in another.

    MCP stdio servers and mcp.json files, and Python targets imported in worker
    processes (whose declarations are plain data already). A Python target
    imported in pytest's own process has its tools' code there, and an HTTP
    server or a skills folder costs little to open twice.
    """
    return spec.kind in _MCP_KINDS or (spec.kind is TargetKind.PYTHON and isolated)


def needs_client(spec: TargetSpec) -> bool:
    """Whether loading the target imports the MCP SDK (through the kit's client)."""
    return spec.kind in _CLIENT_KINDS


def ready_to_build(spec: TargetSpec) -> None:
    """Import what loading the target, or building it from a listing, needs (for an MCP
    target, the SDK through its adapter), on the calling thread.

    Called by a worker about to wait for another's listing of it: imported once the
    listing had come, it held up this worker's collection, and so the whole run's
    start (xdist schedules once every worker has collected), by half a second or
    more. Called by a load before the event loop's thread runs it, so that the import
    takes its turn with the warm-up's (``toolnexus_conformance._imports``) here,
    never holding up the loop.
    """
    if needs_client(spec):
        with contextlib.suppress(ImportError):  # without it the load says why, as before
            import_whole("toolnexus_ref.mcp")


def listing_of(loaded: LoadedTarget, worker: TargetWorker | None) -> bytes:
    """What another worker needs to build the target's subjects, as bytes."""
    if worker is not None:
        return dumps(worker.declared, worker.info)
    source = loaded.info.get("mcp_source")
    if source is None or not hasattr(source, "listing"):
        raise ValueError(f"{loaded.label!r} has no listing to share")
    return json.dumps(source.listing()).encode()


def server_prefixes(spec: TargetSpec, data: bytes) -> list[str]:
    """The tool-name prefix of each server of an mcp.json that lists tools, when it has
    two or more: such a target is explored by server (``_units``). Else none."""
    if spec.kind is not TargetKind.MCP_JSON:
        return []
    from toolnexus_ref._naming import sanitize

    prefixes = [f"{sanitize(str(e['name']))}_" for e in json.loads(data) if e.get("tools")]
    return prefixes if len(prefixes) > 1 else []


def fingerprint(declared: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """What must not change between two imports of a target: each tool's name and contract."""
    return [
        (
            repr(entry.get("name")),
            str(entry.get("display_name")),
            repr(entry.get("description")),
            repr(entry.get("input_schema")),
        )
        for entry in declared
    ]


class ListedWorker(TargetWorker):
    """The worker of a Python target another xdist worker listed: started at its first tool.

    Its declarations are that worker's; its first use starts the process and
    imports the target (as a worker stopped to free its slot is started again),
    and the tools it then declares must be the listed ones, or none is explored.
    """

    def __init__(
        self,
        spec: str,
        label: str,
        *,
        declared: list[dict[str, Any]],
        info: dict[str, Any],
        load_timeout: float,
        **kwargs: Any,
    ) -> None:
        super().__init__(spec, label, **kwargs)
        self.declared, self.info = declared, info
        self.tools = len(declared)
        self._expected = fingerprint(declared)
        self._mismatch: str | None = None
        # Not started yet: the first use starts and loads it, which is no restart.
        self._suspended = True
        self._load_timeout = load_timeout

    def load(self, timeout: float) -> int:
        if self._mismatch is not None:
            raise WorkerError(self._mismatch)
        count = super().load(timeout)
        now = fingerprint(self.declared)
        if now != self._expected:
            self._stop_process()
            names = [name for name, *_ in now]
            listed = [name for name, *_ in self._expected]
            what = (
                f"it now declares {', '.join(names[:10]) or 'no tool'} where"
                f" {', '.join(listed[:10]) or 'no tool'} were listed"
                if names != listed
                else "a tool's description or input schema changed"
            )
            self._mismatch = (
                f"{self.spec!r} declares other tools in this worker than where it was"
                f" listed at collection: {what}"
            )
            raise WorkerError(self._mismatch)
        return count


def python_from_listing(data: bytes) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The declarations and info of a Python target, as its worker process sent them."""
    return loads(data)


def mcp_from_listing(
    spec: TargetSpec, data: bytes, *, base_dir: Path | None, launcher: Any
) -> LoadedTarget:
    """An MCP target's tools from its listing: no server is started (``McpSource.connect``)."""
    from toolnexus_ref import mcp

    listing = json.loads(data)
    if spec.kind is TargetKind.MCP_JSON:
        path = Path(spec.value)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        configs = mcp.load_mcp_json(path, base_dir=path.parent, isolate=True)
    else:
        configs = [mcp.stdio_config(shlex.split(spec.value), cwd=base_dir)]
    return loaded_from(spec.label, mcp.listed_servers(configs, listing, launcher=launcher))


def loaded_from(label: str, source: Any) -> LoadedTarget:
    """The target of an MCP source built from listings (``toolnexus_ref.mcp.listed_servers``)."""
    tools = list(source.tools)
    loaded = LoadedTarget(label, tools, extras_of(tools))
    loaded.info["statuses"] = source.statuses
    loaded.info["sources"] = ("mcp",)
    loaded.info["mcp_source"] = source
    loaded.close = source.close
    return loaded
