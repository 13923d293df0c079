"""What the live suite costs: calls per tool, wall time, hangs, the hostile corpus, xdist.

Run:  .venv/bin/python benchmarks/bench_live.py [--repeat 5] [--skip-xdist] [--only SECTION]

1. Calls per tool and wall time of the default live suite (``RunOptions()``:
   examples=10, grace=1.0, execute=auto) on a trivial tool, three tools and the
   example toolkit. The baseline is the bare cost of the same number of direct
   ``execute`` calls on one event loop, measured in the same run, interleaved;
   the ratio says what the harness (hypothesis, threads, bounds) costs on top.
2. Hanging tools: 1, 2, 4 and 8 tools that never answer (call timeout 2 s, grace
   0.5 s): the wall time of the whole live suite over all of them.
3. The hostile corpus (``conformance/corpus/bad/live_hostile.py``: hangs, a blocked
   loop, sys.exit, 20 MB outputs, a writer) with the options its test uses.
4. pytest-xdist: the plugin on a 200-tool live target, serial and ``-n 2``.
5. Isolation: the plugin's live suite on the example toolkit and on the 200-tool
   target, with tools called in a worker process (a forked process per tool, the
   default) and in pytest's own process (``--toolnexus-isolation none``); whole
   pytest processes, start-up included, interleaved.
6. Many targets: the plugin's live suite on 20 one-tool Python targets whose tool
   sleeps 0.5 s per call, against one such target alone (default worker pool, and
   one worker per target with ``--toolnexus-workers 20``), and on 20 targets of
   which 5 have that slow tool and 15 a fast one; whole pytest processes,
   interleaved. Targets load and are explored at once, so 20 should cost about
   one plus the start-up of each worker (which takes CPU: on few cores, more), as
   long as the slow tools fit in the concurrency (16 by default: 20 slow tools do not).
7. The sandbox: the plugin's live suite on the example toolkit and on the 200-tool
   target with ``--toolnexus-sandbox auto`` (bubblewrap) and ``off``, interleaved;
   and an MCP stdio server (``toolnexus-mcp-serve`` of the example toolkit) started,
   listed and closed through the sandbox's launcher, through it with a writable copy
   of a folder holding a 256 MiB file (``--toolnexus-writable-copy``), its limits
   alone, and bare.
8. Scale: serial, ``-n 1`` and ``-n 2`` on the 200-tool target, on 20 one-tool
   targets (0.6 s per call: ``SCALE_PAUSE``), on an mcp.json of five copies of the corpus's stdio
   server (``conformance/corpus/servers/seeded_bugs.py``; no network) and on the
   same five servers given as five ``stdio:`` targets: speed-up
   against serial, the machine's busy CPU seconds during each run (run it on a quiet
   machine: the cores a serial run already keeps busy bound what more workers can
   gain; so do whole units, a server or a one-tool target, that no worker can split:
   five alike over two workers give one of them three, 1.67x at most), and
   explorations per tool (each Python tool notes the process calling it; the MCP
   server notes nothing: n/a), and loads: servers started and targets imported
   (each server is started once, whatever the workers).
   Sandbox off, bytecode cached.
   ``--scale-set 20-targets`` (repeatable) runs only the sets named.
9. A culprit among slow neighbours: the plugin's live suite on a target of four
   tools that take 0.5 s per call, with and without a fifth that kills the worker
   process once they are running (each of the four is then explored again on a
   worker of its own, to tell which one did it), against the four alone.
10. Remote tools at once: 8 http tools whose loopback server takes 0.1 s per
    request, explored with concurrency=1 against the default concurrency.
11. TLS contexts: the CPU of one ``HttpTool`` call and one ``A2ATool`` call to a
    loopback endpoint in the same process (client and server together), with the
    one TLS context every call shares (``toolnexus_ref._tls``) against a context
    built per call (httpx's default, which reads and parses the whole CA bundle even
    for ``http://``); rounds interleaved, medians per call.
12. What a tool's speed costs: the plugin's live suite on a one-tool target whose
    tool takes 0.05 to 1.5 s a call, marked read-only (its calls made at once) and
    not (one after another); whole pytest processes, interleaved, and the ratio to
    the 0.05 s tool of the same kind. A tool under ``FAST_CALL`` (0.5 s) gets every
    edge value, up to three budgets; a slower one half a budget.
13. A fresh machine: the plugin's live suite on eight tools whose arguments hold a
    ``uri`` and an object open to invented keys, with hypothesis's storage empty at
    each run (every CI job's, unless it keeps the folder) against one kept from an
    earlier run; whole pytest processes, interleaved, wall and the machine's busy
    CPU. A table hypothesis builds on a fresh machine, in each tool's process that
    draws before it is written, shows as the fresh run's ratio.

Medians of interleaved repeats; no test asserts on these numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "conformance")]

from toolnexus_conformance._options import ExecuteMode, RunOptions  # noqa: E402
from toolnexus_conformance._runner import check_tools  # noqa: E402

from toolnexus_ref import BaseTool, ToolAnnotations, ToolContext, ToolResult  # noqa: E402

LIVE = ("TN5", "TN6", "TN7", "TN8", "TN9")


class Echo(BaseTool):
    name = "echo"
    description = "Returns its text."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 100}},
        "required": ["text"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return args["text"]


class Add(BaseTool):
    name = "add"
    description = "Adds two integers."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"sum": args["a"] + args["b"]}


class Lookup(BaseTool):
    name = "lookup"
    description = "Looks a city up."
    input_schema: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "city": {"enum": ["paris", "oslo", "lima"]},
            "fields": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        },
        "required": ["city"],
        "additionalProperties": False,
    }

    def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return {"city": args["city"], "fields": args.get("fields", [])}


class Counting:
    """Counts calls through to a tool, so the baseline makes as many."""

    def __init__(self, tool: Any) -> None:
        self.tool = tool
        self.calls = 0
        for attr in ("name", "description", "input_schema", "source", "annotations"):
            setattr(self, attr, getattr(tool, attr))

    async def execute(self, args: Any, ctx: ToolContext | None = None) -> Any:
        self.calls += 1
        return await self.tool.execute(args, ctx)


def suite(tools: list[Any], options: RunOptions) -> tuple[float, int, int]:
    counted = [Counting(t) for t in tools]
    started = time.perf_counter()
    verdicts = check_tools(counted, select=LIVE, options=options)
    elapsed = time.perf_counter() - started
    failed = sum(v.is_failure for v in verdicts)
    return elapsed, sum(c.calls for c in counted), failed


def baseline(tools: list[Any], calls: int) -> float:
    args = {
        "echo": {"text": "hi"},
        "add": {"a": 1, "b": 2},
        "lookup": {"city": "oslo"},
        "get_weather": {"city": "Lisbon"},
        "convert_units": {"value": 3.5, "from_unit": "km", "to_unit": "mi"},
        "search_fares": {"origin": "LIS", "destination": "OPO"},
        "count_days": {"start": "2026-01-01", "end": "2026-01-05"},
    }

    async def direct() -> None:
        for i in range(calls):
            tool = tools[i % len(tools)]
            await tool.execute(args[tool.name], ToolContext())

    started = time.perf_counter()
    asyncio.run(direct())
    return time.perf_counter() - started


class Hangs:
    """Never answers: a sync tool sleeping for a day (its daemon thread is abandoned)."""

    description = "Sleeps for a day."
    source = "custom"
    input_schema: Mapping[str, Any] = {"type": "object", "properties": {}}

    def __init__(self, index: int) -> None:
        self.name = f"hangs_{index}"

    def execute(self, args: Any, ctx: Any = None) -> Any:
        time.sleep(86400)


def calls_and_wall(repeat: int) -> None:
    options = RunOptions()
    print(
        f"1. live suite ({', '.join(LIVE)}), {options.examples} examples, grace {options.grace:g}s"
    )
    from toolnexus_ref.examples import build_toolkit

    cases: tuple[tuple[str, list[Any]], ...] = (
        ("trivial tool", [Echo()]),
        ("toolkit of 3", [Echo(), Add(), Lookup()]),
        ("example kit", list(build_toolkit().tools)),
    )
    suite([Echo()], options)  # warm: imports, the first hypothesis run
    for label, tools in cases:
        walls, bases, calls_seen = [], [], []
        for _ in range(repeat):
            elapsed, calls, failed = suite(tools, options)
            walls.append(elapsed)
            bases.append(baseline(tools, calls))
            calls_seen.append(calls)
        wall, base = statistics.median(walls), statistics.median(bases)
        per_tool = statistics.median(calls_seen) / len(tools)
        print(
            f"  {label:13} {per_tool:6.1f} calls/tool  suite {wall * 1000:7.1f} ms"
            f"  direct {base * 1000:6.1f} ms  ratio {wall / base:5.1f}x  failed={failed}"
        )


def hangs(repeat: int) -> None:
    options = RunOptions(execute=ExecuteMode.ALL, call_timeout=2.0, grace=0.5)
    print(f"2. hanging tools, call timeout {options.call_timeout:g}s, grace {options.grace:g}s")
    one = None
    for count in (1, 2, 4, 8):
        walls = []
        for _ in range(repeat):
            started = time.perf_counter()
            check_tools([Hangs(i) for i in range(count)], select=LIVE, options=options)
            walls.append(time.perf_counter() - started)
        wall = statistics.median(walls)
        one = one or wall
        print(f"  {count} hanging: {wall:5.2f} s  ({wall / one:4.2f}x one)")


def hostile(repeat: int) -> None:
    from toolnexus_conformance.corpus import load_corpus

    entries = [e for _, e in load_corpus(ROOT / "conformance" / "corpus" / "bad") if e.hostile]
    options = RunOptions(execute=ExecuteMode.ALL, examples=3, grace=0.3, call_timeout=0.3)
    walls = []
    for _ in range(repeat):
        started = time.perf_counter()
        check_tools([e.tool for e in entries], select=LIVE, options=options)
        walls.append(time.perf_counter() - started)
    print(f"3. hostile corpus ({len(entries)} tools): {statistics.median(walls):5.2f} s")


XDIST_TOOLS = """
import time
from toolnexus_ref import BaseTool, ToolAnnotations


def make(index):
    class Lookup(BaseTool):
        name = f"lookup_{index}"
        description = "Looks a word up (takes a few milliseconds, like a small query)."
        input_schema = {
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 40}, "limit": {"type": "integer"}},
            "required": ["word"],
            "additionalProperties": False,
        }
        annotations = ToolAnnotations(read_only=True, idempotent=True)

        def run(self, args, ctx):
            time.sleep(0.003)
            return {"word": args["word"], "hits": len(args["word"])}

    return Lookup()


tools = [make(i) for i in range({count})]
"""


def _write_tools(folder: str, count: int) -> None:
    (Path(folder) / "bench_xdist_tools.py").write_text(XDIST_TOOLS.replace("{count}", str(count)))


def _live_suite(target: str) -> list[str]:
    """The plugin's live suite on ``target``, as a pytest command line."""
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-target",
        target,
        "--toolnexus-select",
        ",".join(LIVE),
    ]


def xdist(repeat: int, count: int = 200) -> None:
    print(f"4. pytest, a {count}-tool live target, serial and under pytest-xdist")
    with tempfile.TemporaryDirectory() as folder:
        _write_tools(folder, count)
        base = _live_suite("bench_xdist_tools:tools")
        variants = {"serial": base, "-n 2": [*base, "-n", "2"]}
        walls: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(repeat):
            for name, command in variants.items():
                started = time.perf_counter()
                subprocess.run(command, cwd=folder, capture_output=True, check=False, timeout=900)
                walls[name].append(time.perf_counter() - started)
        serial = statistics.median(walls["serial"])
        for name, values in walls.items():
            wall = statistics.median(values)
            print(f"  {name:22} {wall:6.1f} s  speed-up {serial / wall:4.2f}x")


def _compare(folder: str, repeat: int, variants: dict[str, list[str]]) -> None:
    """Whole runs of each variant, interleaved; medians and ratios to the first variant."""
    walls: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, command in variants.items():
            started = time.perf_counter()
            subprocess.run(command, cwd=folder, capture_output=True, check=False, timeout=900)
            walls[name].append(time.perf_counter() - started)
    first = statistics.median(next(iter(walls.values())))
    for name, values in walls.items():
        wall = statistics.median(values)
        print(f"    {name:18} {wall:6.2f} s  ratio {wall / first:4.2f}x")


def isolation(repeat: int, count: int = 200) -> None:
    print("5. isolation: a worker process (a process per tool) against pytest's own process")
    with tempfile.TemporaryDirectory() as folder:
        _write_tools(folder, count)
        for label, target in (
            ("example toolkit", "toolnexus_ref.examples:toolkit"),
            (f"{count}-tool target", "bench_xdist_tools:tools"),
        ):
            base = _live_suite(target)
            print(f"  {label}")
            _compare(
                folder,
                repeat,
                {
                    "in-process": [*base, "--toolnexus-isolation", "none"],
                    "worker process": [*base, "--toolnexus-isolation", "process"],
                },
            )


SLOW_TOOL = """
import time
from toolnexus_ref import BaseTool, ToolAnnotations


class Slow(BaseTool):
    name = "slow_{index}"
    description = "Looks a word up slowly (half a second per call, like a remote service)."
    input_schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 20}},
        "required": ["word"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, idempotent=True)

    def run(self, args, ctx):
        time.sleep(0.5)
        return {"word": args["word"]}


tools = [Slow()]
"""


#: The same tool, answering at once.
FAST_TOOL = (
    SLOW_TOOL.replace("        time.sleep(0.5)\n", "")
    .replace("slowly (half a second per call, like a remote service)", "at once")
    .replace('"slow_{index}"', '"fast_{index}"')
)
#: Of the mixed set of targets, how many have the slow tool (the rest the fast one).
MIXED_SLOW = 5


def many_targets(repeat: int, count: int = 20) -> None:
    print(f"6. {count} one-tool targets (0.5 s per call) against one, live suite, whole pytest")
    with tempfile.TemporaryDirectory() as folder:
        for index in range(count):
            text = SLOW_TOOL.replace("{index}", str(index))
            (Path(folder) / f"slow_target_{index}.py").write_text(text)
            text = FAST_TOOL.replace("{index}", str(index))
            (Path(folder) / f"fast_target_{index}.py").write_text(text)

        def command(targets: int, *extra: str) -> list[str]:
            base = _live_suite("slow_target_0:tools")
            for index in range(1, targets):
                base += ["--toolnexus-target", f"slow_target_{index}:tools"]
            return [*base, *extra]

        # The shape of a real project: a few slow tools among fast ones.
        mixed = command(MIXED_SLOW)
        for index in range(MIXED_SLOW, count):
            mixed += ["--toolnexus-target", f"fast_target_{index}:tools"]
        variants = {
            "one target": command(1),
            f"{count} targets": command(count),
            f"{count} targets, {MIXED_SLOW} slow": mixed,
            f"{count} targets, 4 workers": command(count, "--toolnexus-workers", "4"),
            f"{count} targets, {count} at once": command(
                count, "--toolnexus-workers", str(count), "--toolnexus-concurrency", str(count)
            ),
        }
        walls: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(repeat):
            for name, argv in variants.items():
                started = time.perf_counter()
                subprocess.run(argv, cwd=folder, capture_output=True, check=False, timeout=1800)
                walls[name].append(time.perf_counter() - started)
        one = statistics.median(walls["one target"])
        for name, values in walls.items():
            wall = statistics.median(values)
            print(f"  {name:24} {wall:6.1f} s  ratio {wall / one:5.2f}x one")


#: The four slow tools are ``SLOW_TOOL``'s, written as ``slow_target_{index}`` beside it.
CULPRIT_TOOLS = """
import importlib
import os
import signal
import time

from toolnexus_ref import BaseTool


class KillsItsWorker(BaseTool):
    name = "kills_its_worker"
    description = "Signals its parent, the worker process, once its neighbours are running."
    input_schema = {"type": "object", "properties": {}, "additionalProperties": False}

    def run(self, args, ctx):
        time.sleep(1.0)
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(5.0)
        return {}


slow = [importlib.import_module(f"slow_target_{index}").tools[0] for index in range(4)]
with_culprit = [*slow, KillsItsWorker()]
"""


def culprit(repeat: int) -> None:
    print("9. a tool that kills its worker among four slow ones, against the four alone")
    with tempfile.TemporaryDirectory() as folder:
        for index in range(4):
            text = SLOW_TOOL.replace("{index}", str(index))
            (Path(folder) / f"slow_target_{index}.py").write_text(text)
        (Path(folder) / "culprit_tools.py").write_text(CULPRIT_TOOLS)
        _compare(
            folder,
            repeat,
            {
                "four slow tools": _live_suite("culprit_tools:slow"),
                "and the culprit": _live_suite("culprit_tools:with_culprit"),
            },
        )


def remote(repeat: int, count: int = 8, pause: float = 0.1) -> None:
    print(f"10. {count} http tools, {pause:g}s per request on loopback: at once against in turns")
    import dataclasses
    import http.server
    import threading

    from toolnexus_ref.http import HttpTool

    requests = [0]

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests[0] += 1
            time.sleep(pause)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    class Quiet(http.server.ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a cancelled call hangs up on its request: that is the probe, not an error

    server = Quiet(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    # The tools themselves, unwrapped: what the exploration reads from them decides.
    tools = [
        HttpTool(name=f"page_{i}", description="Reads a page.", method="GET", url=url + "/{page}")
        for i in range(count)
    ]
    options = RunOptions()
    variants = {
        "in turns (concurrency=1)": dataclasses.replace(options, concurrency=1),
        f"at once (concurrency={options.concurrency})": options,
    }
    walls: dict[str, list[float]] = {name: [] for name in variants}
    calls: dict[str, list[int]] = {name: [] for name in variants}
    try:
        for _ in range(repeat):
            for name, chosen in variants.items():
                before = requests[0]
                started = time.perf_counter()
                verdicts = check_tools(tools, select=LIVE, options=chosen)
                walls[name].append(time.perf_counter() - started)
                calls[name].append(requests[0] - before)
                failed = [v for v in verdicts if v.is_failure]
                assert not failed, f"{name}: {failed}"
    finally:
        server.shutdown()
        server.server_close()
    first = statistics.median(next(iter(walls.values())))
    for name in variants:
        wall = statistics.median(walls[name])
        made = statistics.median(calls[name])
        print(f"   {name:28} {wall:6.2f}s  {made:5.0f} requests  {first / wall:4.2f}x")


def tls_contexts(repeat: int, http_calls: int = 100, a2a_calls: int = 40) -> None:
    print("11. CPU per call to a loopback endpoint: one shared TLS context against one per call")
    import http.server
    import importlib
    import threading

    from toolnexus_ref import tool
    from toolnexus_ref._tls import tls_context as shared
    from toolnexus_ref.a2a import open_agent, serve_loopback
    from toolnexus_ref.http import HttpTool

    class Ok(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    @tool
    def refuse(message: str) -> ToolResult:
        """Always refuse: this agent cannot do that."""
        return ToolResult.error(f"cannot do {message!r}")

    async def calls(chosen: Any, count: int) -> None:
        for _ in range(count):
            result = await chosen.execute(
                {"page": "x"} if isinstance(chosen, HttpTool) else {"message": "x"}, ToolContext()
            )
            assert result.is_error == (chosen is not page), result

    # The modules that open clients hold the name; the old way is restored in each.
    users = [
        importlib.import_module(f"toolnexus_ref.{name}")
        for name in ("http._tool", "a2a._tool", "a2a._source", "a2a._card")
    ]

    def use(context: Any) -> None:
        for module in users:
            module.tls_context = context

    ways = {"one context per call (httpx's default)": lambda: True, "one shared context": shared}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = HttpTool(
        name="page",
        description="Reads a page.",
        method="GET",
        url=f"http://127.0.0.1:{server.server_port}/{{page}}",
    )
    try:
        with serve_loopback([refuse], name="refusing.agent") as agent:
            (skill,) = asyncio.run(open_agent(agent.url)).tools
            for label, chosen, count in (
                ("HttpTool GET", page, http_calls),
                ("A2ATool", skill, a2a_calls),
            ):
                cpu: dict[str, list[float]] = {way: [] for way in ways}
                wall: dict[str, list[float]] = {way: [] for way in ways}
                for _ in range(repeat):
                    for way, context in ways.items():
                        use(context)
                        started, clock = time.process_time(), time.perf_counter()
                        asyncio.run(calls(chosen, count))
                        cpu[way].append((time.process_time() - started) * 1000 / count)
                        wall[way].append((time.perf_counter() - clock) * 1000 / count)
                base = statistics.median(cpu[next(iter(ways))])
                print(f"   {label} ({count} calls a round)")
                for way in ways:
                    mine = statistics.median(cpu[way])
                    print(
                        f"     {way:40} cpu {mine:6.1f} ms/call  wall "
                        f"{statistics.median(wall[way]):6.1f} ms/call  {base / mine:5.1f}x"
                    )
    finally:
        use(shared)
        server.shutdown()
        server.server_close()


def sandbox(repeat: int, count: int = 200) -> None:
    from toolnexus_conformance.process._sandbox import probe

    status = probe()
    if not status.available:
        print(f"7. sandbox: not available here ({status.why})")
        return
    print("7. sandbox: the live suite with the processes it starts in bubblewrap, and without")
    with tempfile.TemporaryDirectory() as folder:
        _write_tools(folder, count)
        for label, target in (
            ("example toolkit", "toolnexus_ref.examples:toolkit"),
            (f"{count}-tool target", "bench_xdist_tools:tools"),
        ):
            base = _live_suite(target)
            print(f"  {label}")
            _compare(
                folder,
                repeat,
                {
                    "sandbox off": [*base, "--toolnexus-sandbox", "off"],
                    "sandbox on": [*base, "--toolnexus-sandbox", "required"],
                },
            )
    print("  an MCP stdio server: start, handshake, list, close")
    for name, value in asyncio.run(_server_starts(repeat)).items():
        print(f"    {name:18} {value * 1000:7.0f} ms")


async def _server_starts(repeat: int) -> dict[str, float]:
    from toolnexus_conformance.process._sandbox import Sandbox

    from toolnexus_ref.mcp import open_stdio

    command = [
        sys.executable,
        "-m",
        "toolnexus_ref.mcp.serve_cli",
        "toolnexus_ref.examples:toolkit",
    ]
    with tempfile.TemporaryDirectory() as data:
        # A writable copy's folder, holding a database of 256 MiB: an overlay, nothing
        # of it is copied at the start.
        with open(Path(data) / "app.db", "wb") as database:
            database.truncate(256 << 20)
        boxes = {
            "bare": None,
            "limits only": Sandbox(mode="off"),
            "sandboxed": Sandbox(mode="auto"),
            "with a copy": Sandbox(mode="auto", copies=(Path(data),)),
        }
        walls: dict[str, list[float]] = {name: [] for name in boxes}
        for _ in range(repeat):
            for name, box in boxes.items():
                started = time.perf_counter()
                source = await open_stdio(command, launcher=box.launcher() if box else None)
                assert source.tools, source.statuses
                await source.close()
                walls[name].append(time.perf_counter() - started)
        for box in boxes.values():
            if box is not None:
                box.close()
    return {name: statistics.median(values) for name, values in walls.items()}


#: Seconds a call of the speeds section's tool takes.
SPEEDS = (0.05, 0.2, 0.35, 0.5, 0.7, 1.0, 1.5)


def speeds(repeat: int) -> None:
    """One target, one tool, at each of ``SPEEDS``: read-only and not."""
    print("12. what a tool's speed costs: one one-tool target, the plugin's live suite")
    with tempfile.TemporaryDirectory() as folder:
        for kind, read_only in (("read-only", True), ("not read-only", False)):
            variants = {}
            for index, pause in enumerate(SPEEDS):
                module = f"speed_{int(read_only)}_{index}"
                text = SLOW_TOOL.replace("time.sleep(0.5)", f"time.sleep({pause})")
                if not read_only:
                    text = text.replace("read_only=True, idempotent=True", "idempotent=True")
                (Path(folder) / f"{module}.py").write_text(text.replace("{index}", "0"))
                variants[f"{pause:g} s a call"] = _live_suite(f"{module}:tools")
            print(f"  {kind}")
            _compare(folder, repeat, variants)


#: Tools whose arguments hold a string of a format and an object open to keys the
#: generator invents: strings a regex draws (``fresh``).
FORMAT_TOOLS = """
from toolnexus_ref import BaseTool, ToolAnnotations


def make(index):
    class Fetch(BaseTool):
        name = f"fetch_{index}"
        description = "Fetches a page and notes it."
        input_schema = {
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri"},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
            },
            "required": ["url"],
        }
        annotations = ToolAnnotations(read_only=True, idempotent=True)

        def run(self, args, ctx):
            return {"url": args["url"], "tags": len(args.get("tags", {}))}

    return Fetch()


tools = [make(i) for i in range(8)]
"""


def fresh(repeat: int) -> None:
    """A machine whose cache is empty, as every CI job's, against one that kept it."""
    print("13. a fresh machine: hypothesis's storage empty at each run, against one kept")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "format_tools.py").write_text(FORMAT_TOOLS)
        command = _live_suite("format_tools:tools")
        kept = folder / "kept"
        env = _bench_env()
        storage = "HYPOTHESIS_STORAGE_DIRECTORY"
        subprocess.run(  # fills the kept storage
            command, cwd=folder, env={**env, storage: str(kept)}, capture_output=True, timeout=900
        )
        walls: dict[str, list[float]] = {"kept": [], "fresh": []}
        cpus: dict[str, list[float]] = {"kept": [], "fresh": []}
        for _ in range(repeat):
            for variant in walls:
                where = kept if variant == "kept" else Path(tempfile.mkdtemp(dir=folder))
                busy, started = _busy_cpu()[0], time.perf_counter()
                subprocess.run(
                    command,
                    cwd=folder,
                    env={**env, storage: str(where)},
                    capture_output=True,
                    timeout=900,
                )
                walls[variant].append(time.perf_counter() - started)
                cpus[variant].append(_busy_cpu()[0] - busy)
        base_wall, base_cpu = statistics.median(walls["kept"]), statistics.median(cpus["kept"])
        for variant in walls:
            wall, cpu = statistics.median(walls[variant]), statistics.median(cpus[variant])
            print(
                f"    {variant:6} {wall:6.2f} s  {cpu:6.2f} s CPU"
                f"  ratio {wall / base_wall:4.2f}x wall, {cpu / base_cpu:4.2f}x CPU"
            )


SECTIONS = (
    "calls",
    "hangs",
    "hostile",
    "xdist",
    "isolation",
    "targets",
    "sandbox",
    "scale",
    "culprit",
    "remote",
    "tls",
    "speeds",
    "fresh",
)


#: A tool that notes each call (its process and name) in ``calls.log`` beside it: the
#: distinct processes calling a tool are its explorations (a worker explores a tool in
#: one forked process, or, with ``--toolnexus-isolation none``, in its own).
COUNTED_TOOLS = """
import os
import time
from toolnexus_ref import BaseTool, ToolAnnotations

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log")
with open(os.path.join(os.path.dirname(LOG), "loads.log"), "a") as loads:
    loads.write(f"{os.getpid()} {__name__}\\n")


def make(index, pause):
    class Lookup(BaseTool):
        name = f"lookup_{index}"
        description = "Looks a word up."
        input_schema = {
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 40}},
            "required": ["word"],
            "additionalProperties": False,
        }
        annotations = ToolAnnotations(read_only=True, idempotent=True)

        def run(self, args, ctx):
            with open(LOG, "a") as log:
                log.write(f"{os.getpid()} {__name__}:{self.name}\\n")
            time.sleep(pause)
            return {"word": args["word"]}

    return Lookup()


tools = [make(i, {pause}) for i in range({count})]
"""

#: The corpus's MCP stdio server, five times: an mcp.json that needs no network. Each
#: start is noted in ``loads.log`` (``COUNTED_SERVER``).
FIVE_SERVERS = {
    "mcpServers": {
        f"s{n}": {
            "command": sys.executable,
            "args": ["counted_server.py", str(ROOT / "conformance/corpus/servers/seeded_bugs.py")],
        }
        for n in range(5)
    }
}
COUNTED_SERVER = """
import os
import runpy
import sys

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "loads.log"), "a") as log:
    log.write(f"{os.getpid()} {sys.argv[1]}\\n")
runpy.run_path(sys.argv[1], run_name="__main__")
"""


def _loads(folder: Path) -> int:
    """Servers started and targets imported (``loads.log``), and the log cleared."""
    log = folder / "loads.log"
    if not log.exists():
        return 0
    count = len(log.read_text().splitlines())
    log.unlink()
    return count


def _explorations(folder: Path) -> float | None:
    """Explorations per tool, from ``calls.log`` (``None`` if no tool logged a call)."""
    log = folder / "calls.log"
    if not log.exists():
        return None
    pairs = {tuple(line.split()) for line in log.read_text().splitlines() if line.strip()}
    tools = {tool for _, tool in pairs}
    log.unlink()
    return len(pairs) / len(tools) if tools else None


#: The sets of the scale section, by the name ``--scale-set`` gives.
SCALE_SETS = ("200-tools", "20-targets", "mcp-json", "stdio-5")
#: The units of each scale set no worker can split: an MCP server is explored whole by
#: the worker that started it, a one-tool target by one worker (the 200-tool target
#: is cut into bundles of tools: many, no bound worth printing).
WHOLE_UNITS = {"20-targets": 20, "mcp-json": 5, "stdio-5": 5}
#: Seconds a call of the 20 targets' tool takes. Not 0.5: that is the search's
#: ``FAST_CALL`` times a load stretch of 1, so a tool right on it is slow on a quiet
#: machine and fast (its edge values get up to three budgets, not half of one) on one a
#: little busy: one target took 10.6-12.2 s or 19.6-20.3 s. At 0.6 it is slow until
#: the stretch passes 1.2, which a loaded run (``-n 2`` on two cores) may reach.
SCALE_PAUSE = 0.6


def scale(repeat: int, only: Sequence[str] = SCALE_SETS) -> None:
    """``-n 1`` and ``-n 2`` against serial on a 200-tool target, 20 targets and 5 servers."""
    print("8. scale: serial, -n 1 and -n 2 (whole tools and servers to each worker)")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "counted_200.py").write_text(
            COUNTED_TOOLS.replace("{count}", "200").replace("{pause}", "0.003")
        )
        for index in range(20):
            (folder / f"counted_slow_{index}.py").write_text(
                COUNTED_TOOLS.replace("{count}", "1").replace("{pause}", str(SCALE_PAUSE))
            )
        (folder / "five.json").write_text(json.dumps(FIVE_SERVERS))
        (folder / "counted_server.py").write_text(COUNTED_SERVER)
        twenty = [a for i in range(20) for a in ("--toolnexus-target", f"counted_slow_{i}:tools")]
        server = " ".join(FIVE_SERVERS["mcpServers"]["s0"]["args"])
        stdio = [  # a trailing word the server ignores makes five targets of one command
            a
            for n in range(5)
            for a in ("--toolnexus-target", f"stdio:{sys.executable} {server} s{n}")
        ]
        sets = {
            "200-tool target": ["--toolnexus-target", "counted_200:tools"],
            f"20 targets ({SCALE_PAUSE:g} s/call)": twenty,
            "mcp.json, 5 servers": ["--toolnexus-target", "five.json"],
            "5 stdio: targets": stdio,
        }
        names = dict(zip(sets, SCALE_SETS, strict=True))
        for label, targets in sets.items():
            if names[label] not in only:
                continue
            base = [*_live_suite(targets[1]), *targets[2:]]
            base += ["--toolnexus-sandbox", "off", "--toolnexus-load-timeout", "300"]
            variants = {"serial": base, "-n 1": [*base, "-n", "1"], "-n 2": [*base, "-n", "2"]}
            walls: dict[str, list[float]] = {v: [] for v in variants}
            cpus: dict[str, list[float]] = {v: [] for v in variants}
            stolen: dict[str, list[float]] = {v: [] for v in variants}
            explored: dict[str, float | None] = {}
            loads: dict[str, int] = {}
            load_average: dict[str, float] = {}
            for _ in range(repeat):
                for variant, command in variants.items():
                    before, steal_before = _busy_cpu()
                    started = time.perf_counter()
                    subprocess.run(
                        command,
                        cwd=folder,
                        capture_output=True,
                        check=False,
                        timeout=3600,
                        env=_bench_env(),
                    )
                    walls[variant].append(time.perf_counter() - started)
                    busy, steal = _busy_cpu()
                    cpus[variant].append(busy - before)
                    stolen[variant].append(steal - steal_before)
                    explored[variant] = _explorations(folder)
                    loads[variant] = _loads(folder)
                    load_average[variant] = os.getloadavg()[0]
            serial = statistics.median(walls["serial"])
            print(f"  {label}")
            for variant, values in walls.items():
                wall = statistics.median(values)
                cpu = statistics.median(cpus[variant])
                per_tool = explored.get(variant)
                shown = f"{per_tool:4.2f}" if per_tool is not None else " n/a"
                print(
                    f"    {variant:8} {wall:6.1f} s  {cpu:6.1f} s CPU ({cpu / wall:3.1f} cores)"
                    f"  speed-up {serial / wall:4.2f}x"
                    f"  explorations per tool {shown}  loads {loads.get(variant, 0):3d}"
                    f"  (load average {load_average.get(variant, 0.0):.1f}"
                    f", steal {statistics.median(stolen[variant]):.1f} s)"
                )
            # A serial run that already keeps u cores busy (its tools' processes, the
            # servers) can be sped up at most cores / u times by more workers.
            used = statistics.median(cpus["serial"]) / serial
            cores = os.cpu_count() or 1
            print(
                f"    serial keeps {used:3.1f} cores busy: on {cores} cores more workers can"
                f" speed it up at most {max(1.0, cores / max(used, 1e-9)):4.2f}x"
            )
            whole = WHOLE_UNITS.get(names[label])
            if whole:  # a server is explored whole, by one worker: they cannot share it
                most = math.ceil(whole / 2)
                print(
                    f"    {whole} whole units, alike, over 2 workers: one of them explores"
                    f" {most}, so -n 2 can speed it up at most {whole / most:4.2f}x"
                )


def _busy_cpu() -> tuple[float, float]:
    """Busy CPU seconds of the whole machine so far (``/proc/stat``), else of the children
    waited for, and the seconds the hypervisor took from this machine's CPUs (steal).

    The machine's: a run's worker and tool processes are not all waited for by the
    process this starts (a SIGKILLed worker's tools are reaped by nobody it counts),
    so their time is missing from its own; on a quiet machine the machine's busy time
    is the run's. Steal is apart: on a virtual machine whose host is busy, the same
    run takes longer on the clock without doing more work, and a set measured then is
    slower for the host's reasons, not the run's (it is printed beside the figures).
    """
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()[1:]
        ticks = [int(f) for f in fields]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle and iowait
        steal = ticks[7] if len(ticks) > 7 else 0
        tick = os.sysconf("SC_CLK_TCK")
        return (sum(ticks[:8]) - idle - steal) / tick, steal / tick
    except (OSError, ValueError, IndexError):
        import resource

        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime, 0.0


def _bench_env() -> dict[str, str]:
    """The environment of a user's run: bytecode cached, the test extras' plugins off."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTEST_ADDOPTS"] = (env.get("PYTEST_ADDOPTS", "") + " -p no:langsmith_plugin").strip()
    return env


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-xdist", action="store_true")
    parser.add_argument("--only", choices=SECTIONS, action="append", help="run these sections")
    parser.add_argument(
        "--scale-set", choices=SCALE_SETS, action="append", help="the scale section's sets to run"
    )
    args = parser.parse_args()
    wanted = set(args.only or SECTIONS) - ({"xdist"} if args.skip_xdist else set())
    if "calls" in wanted:
        calls_and_wall(args.repeat)
    if "hangs" in wanted:
        hangs(max(1, args.repeat // 2))
    if "hostile" in wanted:
        hostile(max(1, args.repeat // 2))
    if "xdist" in wanted:
        xdist(max(1, args.repeat // 2))
    if "isolation" in wanted:
        isolation(args.repeat)
    if "targets" in wanted:
        many_targets(max(1, args.repeat // 2))
    if "sandbox" in wanted:
        sandbox(args.repeat)
    if "scale" in wanted:
        scale(max(1, args.repeat // 2), args.scale_set or SCALE_SETS)
    if "culprit" in wanted:
        culprit(args.repeat)
    if "remote" in wanted:
        remote(args.repeat)
    if "tls" in wanted:
        tls_contexts(args.repeat)
    if "speeds" in wanted:
        speeds(max(1, args.repeat // 2))
    if "fresh" in wanted:
        fresh(args.repeat)


if __name__ == "__main__":
    main()
