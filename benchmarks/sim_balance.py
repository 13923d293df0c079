"""How evenly a conformance run spreads: 1,000 servers over 16 shards, 200 tools over 16 workers.

Run:  python benchmarks/sim_balance.py [--seed 1] [--costs .pytest_cache/v/toolnexus/tool-costs]

A simulation from measured costs, not a run: each worker (or shard) is one core,
a tool's exploration costs what one was measured to cost, and a worker explores,
at the first item of a batch it runs, every tool of the batch at once (it then
judges the tools' other items for next to nothing): the batch takes the computing
of all its tools on the one core, or its slowest tool, whichever is longer, since
a slow tool's time is waiting (``explored_at_once``). Printed: the balance (the
busiest worker's time over the mean: 1.00 is perfect), the explorations per tool
(1.00: no tool explored twice) and the makespan.

Costs (seconds of one core), and where they come from:

* a trivial Python tool: 0.17 s (a 200-tool target's live suite, 33.7 s of CPU,
  ``bench_mcp_peers.py``/``bench_live.py`` on a quiet machine); spread lognormally
  (sigma 0.5) around it;
* one tool in ten is slow, as a tool calling a remote service: 8 s (20 one-tool
  targets whose tool sleeps 0.5 s per call: 13.3 s for one, ``bench_live.py``
  section 6, of which about 5 s is pytest's start);
* an MCP stdio server's start, initialize and tools/list: median 1.5 s, lognormal
  (sigma 0.6): between amagi-mcp-probe's whole run (1.05 s) and the mcp SDK client
  doing initialize, tools/list and one call per tool (2.00 s), for mcp-server-time;
* tools per server: lognormal, median 6, at most 300 (most servers offer a handful,
  a few offer hundreds).

``--costs`` takes the per-tool costs the toolnexus scheduler last measured (the
JSON object pytest's cache keeps under ``toolnexus/tool-costs``) and draws tools
from them instead.

The schedulers compared:

* toolnexus, workers: whole units (bundles of a Python target's tools cut by
  ``_units.bundles``: of equal size on a first run, of equal cost once a run has
  measured the tools), the most costly first, a new unit to each worker that frees up;
* xdist ``load``: xdist's chunking of items (``LoadScheduling``: a quarter of each
  worker's share at first, then refills between a quarter and a half of the rest),
  twenty items per tool; a worker explores, at a tool's first item it runs, every
  tool of the items it holds that it has not explored (what the plugin did when it
  read xdist's queue);
* toolnexus, shards: ``--toolnexus-shard``'s split, whole servers shared out before
  any starts, server ``i`` to shard ``i mod N`` (every shard cuts alike, knowing no
  server's tools);
* toolnexus, weighed: the same, given an earlier run's report
  (``--toolnexus-shard-costs``): the costliest server first to the least loaded
  shard, by seconds measured in a run that was not this one (``RERUN_NOISE``),
  with some servers new since (``NEW_SHARE``);
* listed in each: the cut the kit made before, after collection: whole servers
  balanced by number of tools plus ``SESSION_COST``, but every shard started and
  listed every server to collect;
* by items: equal runs of consecutive items per shard (what splitting the item list
  evenly gives): every shard lists every server to have the items, and a server
  cut in two is explored in both shards.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from pytest_toolnexus._units import SESSION_COST, assign, bundles  # noqa: E402

TRIVIAL_TOOL = 0.17
SLOW_TOOL = 8.0
SLOW_SHARE = 0.1
SERVER_START = 1.5
TOOLS_PER_SERVER = 6
ITEMS_PER_TOOL = 20
JUDGE = 0.002  # an item whose tool is explored already
#: How far an earlier run's seconds of a server are from this run's (lognormal sigma),
#: and the share of servers new since that run (weighed as the median server).
RERUN_NOISE = 0.3
NEW_SHARE = 0.05


def draw_tool(rng: random.Random, measured: Sequence[float]) -> float:
    if measured:
        return rng.choice(measured)
    if rng.random() < SLOW_SHARE:
        return SLOW_TOOL * rng.lognormvariate(0, 0.3)
    return TRIVIAL_TOOL * rng.lognormvariate(0, 0.5)


def waits(costs: Sequence[float], measured: Sequence[float]) -> list[float]:
    """How much of each tool's cost is waiting (a slow tool waits on its service), not
    computing; measured costs do not tell: all computing, the case least kind to us."""
    if measured:
        return [0.0] * len(costs)
    return [cost - TRIVIAL_TOOL if cost > 1.0 else 0.0 for cost in costs]


def explored_at_once(
    costs: Sequence[float], waiting: Sequence[float], tools: Iterable[int]
) -> float:
    """A worker's time to explore ``tools`` together (``RunOptions.concurrency`` at a time,
    the batches here never larger): its one core computes for all, while the waits
    overlap; the longest tool bounds it from below."""
    chosen = list(tools)
    if not chosen:
        return 0.0
    computing = sum(costs[t] - waiting[t] for t in chosen)
    return max(computing, max(costs[t] for t in chosen))


def balance(loads: Sequence[float]) -> float:
    return max(loads) / statistics.fmean(loads)


# -- workers -----------------------------------------------------------------------------
def toolnexus_workers(
    costs: Sequence[float],
    waiting: Sequence[float],
    workers: int,
    *,
    measured: bool,
    concurrency: int = 16,
) -> list[float]:
    """Bundles of consecutive tools, each to the worker free first. On a first run all
    tools look alike (bundles of equal size, in collection order); once a run has
    measured them, bundles are cut to equal cost and the longest go first."""
    known = costs if measured else [1.0] * len(costs)
    cut = bundles(known, workers=workers, concurrency=concurrency)
    work = [explored_at_once(costs, waiting, r) + JUDGE * ITEMS_PER_TOOL * len(r) for r in cut]
    free = [(0.0, w) for w in range(workers)]
    for cost in sorted(work, reverse=True) if measured else work:
        at, w = heapq.heappop(free)
        heapq.heappush(free, (at + cost, w))
    return [at for at, _ in sorted(free, key=lambda f: f[1])]


def xdist_load(
    costs: Sequence[float], waiting: Sequence[float], workers: int
) -> tuple[list[float], int]:
    """xdist's ``load`` chunking, simulated: the workers' busy times and the explorations."""
    items = [t for t in range(len(costs)) for _ in range(ITEMS_PER_TOOL)]
    pending = list(range(len(items)))
    queues: list[list[int]] = [[] for _ in range(workers)]
    explored: list[set[int]] = [set() for _ in range(workers)]
    clock = [0.0] * workers
    share = len(items) // workers
    chunk = max(min(share // 4, len(items)), 2)
    for w in range(workers):
        queues[w], pending = pending[:chunk], pending[chunk:]
    explorations = 0
    while any(queues):
        # The worker whose next item ends first runs it (a discrete-event step).
        w = min((w for w in range(workers) if queues[w]), key=lambda w: clock[w])
        tool = items[queues[w][0]]
        if tool in explored[w]:
            clock[w] += JUDGE
        else:
            batch = {items[i] for i in queues[w]} - explored[w]
            explored[w] |= batch
            explorations += len(batch)
            clock[w] += explored_at_once(costs, waiting, batch) + JUDGE
        queues[w].pop(0)
        if pending:
            low = max(2, len(pending) // workers // 4)
            high = max(2, len(pending) // workers // 2)
            if len(queues[w]) < low:
                send = high - len(queues[w])
                queues[w] += pending[:send]
                pending = pending[send:]
    return clock, explorations


# -- shards ------------------------------------------------------------------------------
def toolnexus_shards(servers: Sequence[tuple[float, list[float]]], shards: int) -> list[float]:
    """Whole servers shared out before any starts: server ``i`` to shard ``i mod N``
    (``_shard_targets``: no shard knows a server's tools before it is listed)."""
    loads = [0.0] * shards
    for index, (start, tools) in enumerate(servers):
        loads[index % shards] += start + sum(tools)
    return loads


def weighed_shards(
    servers: Sequence[tuple[float, list[float]]], shards: int, rng: random.Random
) -> list[float]:
    """``--toolnexus-shard-costs``: servers placed by an earlier run's seconds, the
    costliest first to the least loaded shard (``_shard_costs.place``, which, with a
    shard as one core as here, is ``assign``).

    What the earlier run measured is not what this one costs: each server's measure
    is off by a lognormal factor (sigma ``RERUN_NOISE``), and a server new since
    (``NEW_SHARE``) weighs the median server. The loads are this run's costs."""
    weights: list[float | None] = []
    for start, tools in servers:
        new = rng.random() < NEW_SHARE
        weights.append(None if new else (start + sum(tools)) * rng.lognormvariate(0, RERUN_NOISE))
    known = sorted(w for w in weights if w is not None)
    median = known[len(known) // 2]
    placed = assign([median if w is None else w for w in weights], shards)
    return [sum(servers[s][0] + sum(servers[s][1]) for s in shard) for shard in placed]


def listed_everywhere(servers: Sequence[tuple[float, list[float]]], shards: int) -> list[float]:
    """The cut made after collection: whole servers balanced by their tools, but every
    shard starts and lists every server to collect (what the kit did before)."""
    placed = assign([len(tools) + SESSION_COST for _, tools in servers], shards)
    listing = sum(start for start, _ in servers)
    return [listing + sum(sum(servers[s][1]) for s in shard) for shard in placed]


def item_shards(
    servers: Sequence[tuple[float, list[float]]], shards: int
) -> tuple[list[float], int, int]:
    """Equal runs of consecutive items: loads, server sessions, explorations.

    Cutting the item list needs the items: every shard starts and lists every server
    to collect, and a server whose items it runs is its session (counted once)."""
    items = [
        (s, t)
        for s, (_, tools) in enumerate(servers)
        for t in range(len(tools))
        for _ in range(ITEMS_PER_TOOL)
    ]
    per = -(-len(items) // shards)
    loads, sessions, explorations = [], 0, 0
    for k in range(shards):
        chunk = items[k * per : (k + 1) * per]
        tools = set(chunk)
        sessions += len(servers)
        explorations += len(tools)
        loads.append(
            sum(start for start, _ in servers)
            + sum(servers[s][1][t] for s, t in tools)
            + JUDGE * len(chunk)
        )
    return loads, sessions, explorations


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--servers", type=int, default=1000)
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--tools", type=int, default=200)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--costs", type=Path, help="per-tool costs from pytest's cache")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    measured: list[float] = []
    if args.costs is not None:
        measured = [float(v) for v in json.loads(args.costs.read_text()).values()]
        print(f"per-tool costs: {len(measured)} measured ({args.costs})")

    servers = []
    for _ in range(args.servers):
        count = min(300, max(1, round(rng.lognormvariate(0, 1.0) * TOOLS_PER_SERVER)))
        start = SERVER_START * rng.lognormvariate(0, 0.6)
        servers.append((start, [draw_tool(rng, measured) for _ in range(count)]))
    total_tools = sum(len(t) for _, t in servers)
    print(f"{args.servers} servers ({total_tools} tools) over {args.shards} shards")
    ours = toolnexus_shards(servers, args.shards)
    print(
        f"  toolnexus shards    balance {balance(ours):5.2f}  server sessions per server 1.00"
        f"  explorations per tool 1.00  longest shard {max(ours):7.0f} s"
    )
    weighed = weighed_shards(servers, args.shards, rng)
    print(
        f"  toolnexus, weighed  balance {balance(weighed):5.2f}  server sessions per server 1.00"
        f"  explorations per tool 1.00  longest shard {max(weighed):7.0f} s"
    )
    before = listed_everywhere(servers, args.shards)
    print(
        f"  listed in each      balance {balance(before):5.2f}  server sessions per server"
        f" {args.shards:4.2f}  explorations per tool 1.00  longest shard {max(before):7.0f} s"
    )
    loads, sessions, explored = item_shards(servers, args.shards)
    print(
        f"  equal item runs     balance {balance(loads):5.2f}  server sessions per server"
        f" {sessions / args.servers:4.2f}  explorations per tool {explored / total_tools:4.2f}"
        f"  longest shard {max(loads):7.0f} s"
    )

    costs = [draw_tool(rng, measured) for _ in range(args.tools)]
    waiting = waits(costs, measured)
    print(
        f"{args.tools} tools of one Python target over {args.workers} workers"
        f" (serial {sum(costs):.0f} s)"
    )
    for measured_before in (False, True):
        ours = toolnexus_workers(costs, waiting, args.workers, measured=measured_before)
        name = "toolnexus, measured" if measured_before else "toolnexus, 1st run"
        print(
            f"  {name:19} balance {balance(ours):5.2f}  explorations per tool 1.00"
            f"  makespan {max(ours):6.1f} s"
        )
    loads, explorations = xdist_load(costs, waiting, args.workers)
    print(
        f"  xdist load          balance {balance(loads):5.2f}  explorations per tool"
        f" {explorations / args.tools:4.2f}  makespan {max(loads):6.1f} s"
    )


if __name__ == "__main__":
    main()
