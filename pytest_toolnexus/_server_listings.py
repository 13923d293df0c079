"""An mcp.json's servers listed by the xdist workers between them, each server by one.

Listing a server means starting it. Listed whole, an mcp.json's servers all start
in the one worker that lists the file, and each server the scheduler then gives to
another worker starts a second time there (five servers over two workers: seven
starts). Here each worker lists its share of the servers (server ``i`` of the file:
worker ``i mod n``, or shares balanced by the last run's costs: ``shares``),
publishes each server's listing on its own (``_shared_loads``, one record per
server), and builds the whole target from its own servers, still
running, and the others' listings; the scheduler gives each server to the worker
that has it running (``_scheduler``), so no server starts twice.

A server whose worker has not listed it by ``patience`` (a worker that died, or
never began) is listed by whichever worker gets to it first, as a whole target is.

Imports only the standard library (and ``_units``, which does too): the session brings
the SDK's part (``start``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._shared_loads import POLL, Claim, Listing, SharedListings
from ._units import assign

__all__ = [
    "NotListed",
    "Started",
    "list_by_server",
    "server_costs",
    "server_key",
    "share_of",
    "shares",
]

#: How long another worker's servers are left to it with no sign of it on the file.
GRACE = 3.0

#: What starting some servers gives: each one's listing entry (``McpSource.listing``),
#: and the running connections, both by the server's position in the file.
Started = tuple[Mapping[int, dict[str, Any]], Mapping[int, Any]]


class NotListed(Exception):
    """Servers another worker holds were not listed in time."""


def share_of(workerinput: Any) -> tuple[int, int]:
    """This xdist worker's index among the run's workers, and how many there are."""
    if not isinstance(workerinput, dict):
        return 0, 1
    count = max(1, int(workerinput.get("workercount", 1)))
    digits = "".join(c for c in str(workerinput.get("workerid", "")) if c.isdigit())
    return int(digits or 0) % count, count


def shares(costs: Sequence[float | None], count: int) -> list[int]:
    """The worker index whose share each server is: balanced by cost where every
    server's is known (longest first to the least loaded), else server ``i`` to worker
    ``i mod count``.

    Every worker computes this from the same costs (the last run's, sent by the
    controller), so all agree without talking. A worker is given all the servers it
    listed at once (``ToolScheduling._siblings``), so its share is its work.
    """
    count = max(1, count)
    if not costs or any(c is None for c in costs):
        return [i % count for i in range(len(costs))]
    known = [float(c) for c in costs if c is not None]
    out = [0] * len(costs)
    for worker, positions in enumerate(assign(known, min(count, len(known)))):
        for position in positions:
            out[position] = worker
    return out


def server_costs(
    measured: Mapping[str, float], target: str, prefixes: Sequence[str]
) -> list[float | None]:
    """Each server's cost as the last run measured it: its tools' (``target::tool``,
    a tool going to the longest prefix it starts with), ``None`` if none was measured."""
    ordered = sorted(set(prefixes), key=len, reverse=True)
    found: dict[str, float] = {}
    head = f"{target}::"
    for name, cost in measured.items():
        if not name.startswith(head):
            continue
        tool = name[len(head) :]
        prefix = next((p for p in ordered if tool.startswith(p)), None)
        if prefix is not None:
            found[prefix] = found.get(prefix, 0.0) + cost
    return [found.get(prefix) for prefix in prefixes]


def server_key(key: str, name: str) -> str:
    """The shared key of one server of the target ``key``."""
    return f"{key}\0server\0{name}"


def list_by_server(
    shared: SharedListings,
    key: str,
    label: str,
    names: Sequence[str],
    prefixes: Sequence[str],
    *,
    share: tuple[int, int],
    start: Callable[[list[int]], Started],
    patience: float,
    limit: float,
    grace: float = GRACE,
    owners: Sequence[int] | None = None,
) -> tuple[list[dict[str, Any]], dict[int, Any]]:
    """Every server's listing entry, in the file's order, and the servers running here.

    ``start`` starts and lists the servers at the given positions (they are this
    worker's to keep); it runs while their claims are held, and a failure releases
    them for another worker. Another worker's servers are left to it until
    ``patience`` (a ``time.monotonic`` instant), unless ``grace`` seconds pass with
    no sign of it on this file (none of its servers held or listed): it is busy
    elsewhere, listing a target of its own, and may be waiting for this worker's
    share of that one. ``limit``: how long, in all, to wait for a server another
    worker holds; then ``NotListed``. ``owners``: the worker index whose share each
    server is (``shares``); by default server ``i`` is worker ``i mod n``'s.
    """
    index, count = share
    owner_of = list(owners) if owners is not None else shares([None] * len(names), count)
    keys = [server_key(key, name) for name in names]
    entries: dict[int, dict[str, Any]] = {}
    running: dict[int, Any] = {}
    seen: set[int] = {index}  # the workers known to be listing this file
    pending = sorted(range(len(names)), key=lambda i: owner_of[i] != index)  # own first
    begun = time.monotonic()
    end = begun + limit
    while pending:
        claims: dict[int, Claim] = {}
        waiting: list[int] = []
        for i in pending:
            owner = owner_of[i]
            found: Listing | Claim | None = shared.read(keys[i])
            now = time.monotonic()
            if found is None and (
                owner == index or now >= patience or (owner not in seen and now >= begun + grace)
            ):
                found = shared.take(keys[i])
                if found is None:
                    seen.add(owner)  # held: being listed
            if isinstance(found, Listing):
                entries[i] = _entry(found, names[i])
                seen.add(owner)
            elif isinstance(found, Claim):
                claims[i] = found
            else:
                waiting.append(i)
        if claims:
            try:
                listed, started = start(sorted(claims))
            except BaseException:
                for claim in claims.values():
                    claim.release()
                raise
            running.update(started)
            for i, claim in claims.items():
                entries[i] = listed[i]
                claim.publish(label, json.dumps(listed[i]).encode(), server=prefixes[i])
        pending = waiting
        if pending:
            if time.monotonic() >= end:
                shown = ", ".join(repr(names[i]) for i in pending)
                raise NotListed(f"no worker listed the servers {shown} within {limit:g}s")
            time.sleep(POLL)
    return [entries[i] for i in range(len(names))], running


def _entry(listing: Listing, name: str) -> dict[str, Any]:
    if listing.error is not None:
        raise ValueError(f"server {name!r} was not listed: {listing.error}")
    entry = json.loads(listing.data)
    if not isinstance(entry, dict) or entry.get("name") != name:
        raise ValueError(f"the listing of server {name!r} is not that server's")
    return entry
