"""Under xdist, each target is listed once per run on a machine, and explored where it runs."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, Session, early, start_session

from pytest_toolnexus._shared_loads import (
    SHARED_KEY,
    Claim,
    Listing,
    SharedListings,
    listers,
    remove_folder,
    run_folder,
)

BASE = ["-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-only"]
BASE += ["--toolnexus-sandbox", "off"]


# -- the shared folder ----------------------------------------------------------------------
def test_racing_workers_list_a_target_once_and_read_the_listing(tmp_path: Path) -> None:
    takers = 8
    barrier = threading.Barrier(takers)
    got: list[Listing | Claim | None] = []
    lock = threading.Lock()

    def race(index: int) -> None:
        # One open file each: flock holds between open files, in one process or many.
        listings = SharedListings(tmp_path / "run", f"gw{index}")
        barrier.wait()
        found = listings.take("stdio:python server.py")
        with lock:
            got.append(found)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(takers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    claims = [found for found in got if isinstance(found, Claim)]
    assert len(claims) == 1  # the others saw it held (None), none listed it twice
    assert all(found is None for found in got if not isinstance(found, Claim))
    claims[0].publish("stdio:python server.py", b"tools")
    later = SharedListings(tmp_path / "run", "gw9").take("stdio:python server.py")
    assert isinstance(later, Listing)
    assert later.data == b"tools"
    assert later.error is None
    assert later.worker in {f"gw{i}" for i in range(takers)}


def test_a_lister_that_dies_leaves_the_target_to_the_next(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from pathlib import Path\n"
            "from pytest_toolnexus._shared_loads import SharedListings\n"
            "claim = SharedListings(Path(sys.argv[1]), 'gw0').take('t')\n"
            "print(type(claim).__name__, flush=True)\n"
            "time.sleep(60)\n",
            str(folder),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "Claim"
        mine = SharedListings(folder, "gw1")
        assert mine.take("t") is None  # held: being listed
    finally:
        holder.kill()
        holder.wait()
    taken = mine.wait("t", 10.0)
    assert isinstance(taken, Claim)  # the dead lister's lock went with its process
    taken.publish("t", error="broken on purpose")
    listing = mine.read("t")
    assert listing is not None
    assert listing.error == "broken on purpose"


def test_the_controller_reads_who_listed_what_and_removes_the_folder() -> None:
    uid = f"test-run-uid-{uuid.uuid4().hex}"  # runs of the suite side by side share /tmp
    remove_folder(uid)
    listings = SharedListings(run_folder(uid), "gw1")
    claim = listings.take("five.json")
    assert isinstance(claim, Claim)
    claim.publish("five.json", b"[]")
    assert listers(uid) == ({"toolnexus:five.json": "gw1"}, {})
    remove_folder(uid)
    assert not run_folder(uid).exists()


# -- the scheduler --------------------------------------------------------------------------
class _Gateway:
    def __init__(self, name: str) -> None:
        self.id = name


class _Node:
    def __init__(self, name: str, workerinput: dict[str, Any]) -> None:
        self.gateway = _Gateway(name)
        self.workerinput = workerinput
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _ids(target: str, tools: int) -> list[str]:
    ids = [f"toolnexus:{target}::TN001-target-loads"]
    return ids + [f"toolnexus:{target}::t{t}::TN5{c:02d}-x" for t in range(tools) for c in range(3)]


def _two_workers(
    config: pytest.Config,
    uid: str,
    collection: list[str],
    measured: dict[str, float] | None = None,
) -> tuple[Any, list[_Node]]:
    """A scheduler of two local workers (gw0, gw1) of run ``uid``, given ``collection``
    and the tools' ``measured`` costs."""
    from pytest_toolnexus._scheduler import ToolScheduling

    workerinput = {"testrunuid": uid, SHARED_KEY: True}
    sched = ToolScheduling(config, None, concurrency=4, numnodes=2, measured=measured)
    nodes = [_Node("gw0", workerinput), _Node("gw1", workerinput)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    return sched, nodes


def _run_all(sched: Any, nodes: list[_Node], first: float = 0.1) -> None:
    """Each node in turn finishes its next item, until none is left; each item takes
    0.1 s, but a node's first takes ``first`` (it explores what the node was given)."""
    done: set[str] = set()
    while sched.has_pending:
        for node in nodes:
            pending = sched.node2pending.get(node)
            if pending:
                took = 0.1 if node.gateway.id in done else first
                done.add(node.gateway.id)
                sched.mark_test_complete(node, pending[0], took)


def test_the_scheduler_gives_each_server_to_the_worker_that_listed_it(
    pytestconfig: pytest.Config,
) -> None:
    pytest.importorskip("xdist")
    uid = f"test-scheduler-uid-{uuid.uuid4().hex}"  # runs of the suite side by side share /tmp
    remove_folder(uid)
    servers = [f"stdio:python s{n}.py" for n in range(5)]
    collection = [i for s in servers for i in _ids(s, 2)]
    listed_by = {servers[0]: "gw1", servers[1]: "gw1", servers[2]: "gw0", servers[3]: "gw1"}
    for server, worker in listed_by.items():  # s4: listed by nobody (a remote host)
        claim = SharedListings(run_folder(uid), worker).take(server)
        assert isinstance(claim, Claim)
        claim.publish(server, b"[]")
    try:
        sched, nodes = _two_workers(pytestconfig, uid, collection)
        _run_all(sched, nodes)
        given = {unit: node for node, units in sched.given.items() for unit in units}
        # gw1 listed three: it is given all three at once, and explores them together;
        # gw0, out of servers of its own, runs the one nobody listed rather than wait.
        assert {s: given[f"toolnexus:{s}"] for s in servers} == {
            servers[0]: "gw1",
            servers[1]: "gw1",
            servers[2]: "gw0",
            servers[3]: "gw1",
            servers[4]: "gw0",
        }
        assert [n.sent for n in nodes][1][:3] == [0, 1, 2]  # gw1's first send held s0...
        assert sched.together == [
            [u for u in sched.units if u.key in {f"toolnexus:{s}" for s in servers[:2]}]
            + [u for u in sched.units if u.key == f"toolnexus:{servers[3]}"]
        ]
    finally:
        remove_folder(uid)


def test_a_worker_that_takes_another_workers_servers_takes_them_all(
    pytestconfig: pytest.Config,
) -> None:
    """Their lister would explore them all at once: split between two workers, a
    tool of theirs would be explored in both."""
    pytest.importorskip("xdist")
    uid = (
        f"test-scheduler-thief-uid-{uuid.uuid4().hex}"  # runs of the suite side by side share /tmp
    )
    remove_folder(uid)
    servers = [f"stdio:python t{n}.py" for n in range(4)]
    python = "toolnexus:tools:big"
    collection = [f"{python}::big::TN5{c:02d}-x" for c in range(3)]
    collection += [i for s in servers for i in _ids(s, 2)]
    for n, server in enumerate(servers):  # gw0 listed t0 and t1, gw1 t2 and t3
        claim = SharedListings(run_folder(uid), f"gw{n // 2}").take(server)
        assert isinstance(claim, Claim)
        claim.publish(server, b"[]")
    try:
        # The Python tool costs most: it goes first, to gw0, before gw0's own servers.
        measured = {f"toolnexus:{s}::t{t}": 0.1 for s in servers for t in range(2)}
        measured[f"{python}::big"] = 100.0
        sched, nodes = _two_workers(pytestconfig, uid, collection, measured)
        assert sched.given["gw0"] == [python + "::big"]
        while sched.node2pending[nodes[1]]:  # gw1 is free first, gw0 still busy
            sched.mark_test_complete(nodes[1], sched.node2pending[nodes[1]][0], 0.1)
        _run_all(sched, nodes)
        assert sched.given["gw1"] == [f"toolnexus:{s}" for s in servers[2:] + servers[:2]]
        assert [[u.key for u in units] for units in sched.together] == [
            [f"toolnexus:{s}" for s in servers[2:]],
            [f"toolnexus:{s}" for s in servers[:2]],
        ]
    finally:
        remove_folder(uid)


def test_a_worker_is_given_every_server_it_listed_at_once_and_none_starts_twice(
    pytestconfig: pytest.Config,
) -> None:
    """Given one at a time, a worker done with its own servers took the next from the
    worker that listed it, and started that server a second time."""
    pytest.importorskip("xdist")
    uid = f"test-scheduler-servers-uid-{uuid.uuid4().hex}"  # runs of the suite side by side share /tmp
    remove_folder(uid)
    target = "five.json"
    prefixes = [f"s{n}_" for n in range(5)]
    collection = [f"toolnexus:{target}::TN851-servers-start"]
    collection += [f"toolnexus:{target}::{p}tool::TN5{c:02d}-x" for p in prefixes for c in range(3)]
    # gw0 listed s0, s2 and s4; gw1 s1 and s3 (server i: worker i mod 2).
    for n, prefix in enumerate(prefixes):
        claim = SharedListings(run_folder(uid), f"gw{n % 2}").take(f"{target} {prefix}")
        assert isinstance(claim, Claim)
        claim.publish(target, b"[]", server=prefix)
    SharedListings(run_folder(uid), "gw0").write(target, target, b"[]", None, prefixes)
    try:
        sched, nodes = _two_workers(pytestconfig, uid, collection)
        first = {node.gateway.id: list(node.sent) for node in nodes}
        _run_all(sched, nodes[::-1], first=9.0)  # gw1, with fewer, finishes first
        servers = {
            node: sorted(u.rsplit("::", 1)[1] for u in units if u.endswith("*"))
            for node, units in sched.given.items()
        }
        assert servers == {"gw0": ["s0_*", "s2_*", "s4_*"], "gw1": ["s1_*", "s3_*"]}
        # Each worker had all its servers' items from the start.
        for node in nodes:
            mine = {p[:-1] for p in servers[node.gateway.id]}
            wanted = [i for i, n in enumerate(collection) if n.split("::")[1][:3] in mine]
            assert set(wanted) <= set(first[node.gateway.id])
        assert sorted(i for node in nodes for i in node.sent) == list(range(len(collection)))
        # Explored together, timed together: the first server's tools do not carry
        # its siblings' time into the next run's shares.
        costs = {tool.split("::")[1][:2]: cost for tool, cost in sched.tool_costs().items()}
        # gw0's: three servers' nine items and the file's own (gw0 wrote its listing).
        assert costs["s0"] == costs["s2"] == costs["s4"] == round((9.0 + 9 * 0.1) / 3, 4)
        assert costs["s1"] == costs["s3"] == round((9.0 + 5 * 0.1) / 2, 4)
    finally:
        remove_folder(uid)


def test_an_mcp_json_with_known_servers_is_cut_by_server() -> None:
    from pytest_toolnexus._units import units_of

    target = "toolnexus:servers/mcp.json"
    collection = [f"{target}::TN851-servers-start"]
    for tool in ("a_one", "a_b_two", "a_two", "zz_other", "a_b_one"):
        collection += [f"{target}::{tool}::TN5{c:02d}-x" for c in range(2)]
    whole = units_of(collection, workers=2, concurrency=4)
    assert [u.key for u in whole] == [target]
    cut = units_of(collection, workers=2, concurrency=4, servers={target: ["a_", "a_b_"]})
    assert {u.key: sorted(t.rsplit("::", 1)[1] for t in u.tools) for u in cut} == {
        target: [],  # the target's own items and a tool of no server
        f"{target}::a_*": ["a_one", "a_two"],
        f"{target}::a_b_*": ["a_b_one", "a_b_two"],  # the longest prefix
    }
    assert all(u.kind == "target" for u in cut)
    assert sorted(i for u in cut for i in u.indices) == list(range(len(collection)))


def test_a_worker_explores_the_servers_it_listed_together_and_no_others() -> None:
    from types import SimpleNamespace

    from pytest_toolnexus._distribution import prefetch_groups

    target = "toolnexus:five.json"
    prefixes = [f"s{n}_" for n in range(4)]
    subjects = {p: object() for p in prefixes}
    items = [SimpleNamespace(nodeid=f"{target}::TN851-servers-start", subject=None)]
    items += [
        SimpleNamespace(nodeid=f"{target}::{p}tool::TN5{c:02d}-x", subject=subjects[p])
        for p in prefixes
        for c in range(2)
    ]
    cut = {target: prefixes}
    alone = prefetch_groups(items, workers=2, concurrency=4, servers=cut)  # type: ignore[arg-type]
    assert alone[id(subjects["s0_"])] == {id(subjects["s0_"])}
    here = prefetch_groups(
        items,  # type: ignore[arg-type]
        workers=2,
        concurrency=4,
        servers=cut,
        listed_here={f"{target}::s0_*", f"{target}::s2_*"},
    )
    mine = {id(subjects["s0_"]), id(subjects["s2_"])}
    assert here[id(subjects["s0_"])] == here[id(subjects["s2_"])] == mine
    assert here[id(subjects["s1_"])] == {id(subjects["s1_"])}  # another worker's


# -- the listed MCP source ------------------------------------------------------------------
SERVER = '''
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

HERE = Path(__file__).resolve().parent
NAME = sys.argv[1]
with (HERE / "starts").open("a") as handle:
    handle.write(f"{NAME} {os.getpid()} {os.getppid()}\\n")
server = MCPServer(NAME)


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def read_note(name: str) -> str:
    """Read a note by name."""
    return f"note {name}"


if (HERE / "listed").exists():

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def write_note(name: str) -> str:
        """Write a note."""
        return name


if __name__ == "__main__":
    server.run()
'''


def _mcp_json(folder: Path, names: str) -> Path:
    (folder / "notes_server.py").write_text(SERVER)
    servers = {
        name: {"command": sys.executable, "args": [str(folder / "notes_server.py"), name]}
        for name in names
    }
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_a_listed_source_starts_its_servers_only_when_asked_and_checks_their_tools(
    tmp_path: Path,
) -> None:
    import asyncio

    from toolnexus_ref import mcp

    path = _mcp_json(tmp_path, "ab")

    async def scenario() -> None:
        first = await mcp.open_mcp_json(path)
        listing = json.loads(json.dumps(first.listing()))  # plain data, as written
        await first.close()
        starts = (tmp_path / "starts").read_text().splitlines()
        configs = mcp.load_mcp_json(path, isolate=True)
        listed = mcp.listed_servers(configs, listing)
        assert [t.name for t in listed.tools] == ["a_read_note", "b_read_note"]
        assert {n: s.state for n, s in listed.statuses.items()} == {
            "a": "connected",
            "b": "connected",
        }
        assert (tmp_path / "starts").read_text().splitlines() == starts  # none started
        assert await listed.connect() == []
        assert await listed.connect() == []  # once
        result = await listed.tools[0].execute({"name": "x"})
        assert not result.is_error
        await listed.close()
        assert len((tmp_path / "starts").read_text().splitlines()) == len(starts) + 2
        (tmp_path / "listed").touch()  # the servers now list one more tool
        again = mcp.listed_servers(configs, listing)
        problems = await again.connect()
        await again.close()
        assert len(problems) == 2
        assert "a: its tools differ from those listed: now lists 'write_note'" in problems[0]

    asyncio.run(scenario())


def test_a_listed_source_uses_the_servers_running_here_as_they_are(tmp_path: Path) -> None:
    import asyncio

    from toolnexus_ref import mcp

    path = _mcp_json(tmp_path, "ab")

    async def scenario() -> None:
        configs = mcp.load_mcp_json(path, isolate=True)
        mine = await mcp.open_servers(configs[:1])  # this worker's share: a
        other = await mcp.open_servers(configs[1:])  # another worker's: b
        listing = json.loads(json.dumps([*mine.listing(), *other.listing()]))
        await other.close()
        starts = len((tmp_path / "starts").read_text().splitlines())
        source = mcp.listed_servers(configs, listing, running=dict(mine.connections))
        assert source.connections["a"] is mine.connections["a"]
        assert await source.connect() == []  # b starts again; a is left running
        assert len((tmp_path / "starts").read_text().splitlines()) == starts + 1
        result = await source.tools[0].execute({"name": "x"})  # a's tool, on a
        assert not result.is_error
        await source.close()

    asyncio.run(scenario())


def test_a_listed_python_target_that_declares_other_tools_is_not_explored(
    tmp_path: Path,
) -> None:
    from toolnexus_conformance._options import RunOptions
    from toolnexus_conformance.process._isolation import TargetWorker, WorkerError
    from toolnexus_conformance.process._sandbox import Sandbox

    from pytest_toolnexus._listed import ListedWorker

    (tmp_path / "looks.py").write_text(TARGET.replace("{n}", "0"))
    # Uncontained: the target notes each import in the folder it is imported from.
    common: dict[str, Any] = {
        "base_dir": tmp_path,
        "options": RunOptions(),
        "sandbox": Sandbox(mode="off"),
    }
    lister = TargetWorker("looks:tools", "looks:tools", **common)
    try:
        lister.load(60.0)
    finally:
        lister.close()
    declared = [dict(entry) for entry in lister.declared]
    same = ListedWorker(
        "looks:tools",
        "looks:tools",
        declared=declared,
        info=lister.info,
        load_timeout=60.0,
        **common,
    )
    try:
        assert same.tools == 1
        assert same.load(60.0) == 1  # what was listed: loaded, no error
    finally:
        same.close()
    declared[0]["input_schema"] = {"type": "object"}
    other = ListedWorker(
        "looks:tools",
        "looks:tools",
        declared=declared,
        info=lister.info,
        load_timeout=60.0,
        **common,
    )
    try:
        with pytest.raises(WorkerError, match="input schema changed"):
            other.load(60.0)
        with pytest.raises(WorkerError, match="declares other tools"):
            other.load(60.0)  # said again, not imported again
    finally:
        other.close()
    assert len((tmp_path / "imports").read_text().splitlines()) == 3


# -- whole runs under -n 2 ------------------------------------------------------------------
def _outcomes(report: dict[str, Any]) -> Counter[tuple[str, str, str, str]]:
    return Counter(
        (r["target"], str(r.get("tool")), r["check"], r["outcome"]) for r in report["results"]
    )


def _started(folder: Path) -> list[list[str]]:
    """The server starts noted in ``folder`` since the last look (one line each)."""
    path = folder / "starts"
    lines = path.read_text().splitlines() if path.exists() else []
    path.unlink(missing_ok=True)
    return [line.split() for line in lines]


#: Which xdist worker process ran each item.
WHERE = """
import os


def pytest_runtest_call(item):
    with open(os.path.join(str(item.config.rootpath), "ran.log"), "a") as log:
        log.write(f"{os.getpid()} {item.nodeid}\\n")
"""


@dataclass(frozen=True)
class ByServer:
    """One mcp.json of three servers run serially, then under ``-n 2``."""

    serial: Session
    n2: Session
    started_serial: list[list[str]]  # (server, its pid, its parent) per start
    started_n2: list[list[str]]  # (server, its pid, the worker that started it) per start
    ran: list[str]  # (worker pid, node id) of each item the ``-n 2`` run called


@early
def by_server_runs(folder: Path) -> dict[str, RunningSession]:
    """Both sessions, ``serial`` and ``n2`` (``-n 2``), each on a project of its own,
    which notes its own servers' starts. Each project's conftest notes where each item
    ran, and holds each worker's import of the MCP SDK until its share of the servers
    has started (``SHARE_BEFORE_THE_SDK``): the serial run has no workers, and a worker
    whose share starts before the import is not held at all. Started early, side by
    side: they mostly wait for their servers."""
    args = [*BASE, "--toolnexus-target", "mcp.json", "--toolnexus-examples", "2"]
    args += ["--toolnexus-select", "TN1,TN5,TN851"]
    started: dict[str, RunningSession] = {}
    for name, extra in (("serial", []), ("n2", ["-n", "2"])):
        project = folder / name
        project.mkdir()
        _mcp_json(project, "abc")
        (project / "conftest.py").write_text(WHERE + SHARE_BEFORE_THE_SDK)
        started[name] = start_session(project, *args, *extra, "--toolnexus-report", f"{name}.json")
    return started


@pytest.fixture(scope="module")
def by_server(by_server_runs: dict[str, RunningSession]) -> ByServer:
    """Both sessions of ``by_server_runs``, finished, and what their projects noted."""
    pytest.importorskip("xdist")
    serial = by_server_runs["serial"].result()
    started_serial = _started(serial.path)
    (serial.path / "ran.log").unlink()
    n2 = by_server_runs["n2"].result()
    ran = (n2.path / "ran.log").read_text().splitlines()
    return ByServer(serial, n2, started_serial, _started(n2.path), ran)


def test_each_server_of_an_mcp_json_is_listed_once_and_explored_by_server(
    by_server: ByServer,
) -> None:
    assert by_server.serial.ret == 0, by_server.serial.text()
    assert len(by_server.started_serial) == 3
    run = by_server.n2
    assert run.ret == 0, run.text()
    started = by_server.started_n2  # (server, its pid, the worker that started it)
    ran: dict[str, set[str]] = {}  # the servers whose tools each worker explored
    for line in by_server.ran:
        pid, nodeid = line.split(" ", 1)
        tool = nodeid.split("::")[1]
        if tool[:2] in ("a_", "b_", "c_"):
            ran.setdefault(pid, set()).add(tool[0])
    # The workers listed the servers between them, each its share (server i of the
    # file: worker i mod 2), each server once: gw0 started a and c, gw1 b.
    lister: dict[str, str] = {}
    for name, _, worker in started:
        lister.setdefault(name, worker)
    assert lister["a"] == lister["c"] != lister["b"], started
    # Each server started once, and explored by the worker that started it.
    assert len(started) == 3, started
    assert ran == {lister["a"]: {"a", "c"}, lister["b"]: {"b"}}, (started, ran)
    reports = [by_server.serial.report("serial.json"), run.report("n2.json")]
    assert _outcomes(reports[0]) == _outcomes(reports[1])
    assert reports[1]["complete"]


TARGET = """
import os
from pathlib import Path

from toolnexus_ref import BaseTool

HERE = Path(__file__).resolve().parent
#: The xdist worker whose session imports it, where the session passes it on (``-`` else).
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "-")

with (HERE / "imports").open("a") as log:
    log.write(f"{__name__} {os.getpid()} {WORKER}\\n")


class Look(BaseTool):
    name = "look_{n}"
    description = "Looks a word up."
    input_schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 8}},
        "required": ["word"],
        "additionalProperties": False,
    }

    def run(self, args, ctx):
        with (HERE / "explored").open("a") as log:
            log.write(f"{__name__} {WORKER}\\n")
        return args["word"]


tools = [Look()]
"""

BROKEN = """
import os
from pathlib import Path

with (Path(__file__).resolve().parent / "imports").open("a") as log:
    log.write(f"{__name__} {os.getpid()} {os.environ.get('PYTEST_XDIST_WORKER', '-')}\\n")
raise RuntimeError("broken on purpose")
"""


#: Both workers begin listing together (each first lists its own share of the targets),
#: however late one of them starts on a busy machine.
TOGETHER = """
import time
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        return
    worker = config.workerinput["workerid"]
    here = Path(str(config.rootpath))
    (here / f"ready-{worker}").touch()
    end = time.monotonic() + 60
    while len(list(here.glob("ready-*"))) < 2 and time.monotonic() < end:
        time.sleep(0.05)
"""


@early
def imported_once(folder: Path) -> RunningSession:
    """Two good Python targets and a broken one under ``-n 2``, each noting its imports
    and its explorations. Started early: it mostly waits for its workers."""
    for n in range(2):
        (folder / f"look{n}.py").write_text(TARGET.replace("{n}", str(n)))
    (folder / "broken.py").write_text(BROKEN)
    (folder / "conftest.py").write_text(TOGETHER)
    args = [*BASE, "--toolnexus-examples", "2", "--toolnexus-select", "TN1,TN5"]
    for target in ("look0:tools", "broken:tools", "look1:tools"):
        args += ["--toolnexus-target", target]
    args += ["--toolnexus-env", "PYTEST_XDIST_WORKER"]
    return start_session(folder, *args, "-n", "2", "--toolnexus-report", "n2.json")


def test_python_targets_are_imported_once_and_a_broken_one_is_one_item(
    imported_once: RunningSession,
) -> None:
    pytest.importorskip("xdist")
    session = imported_once.result()
    run = session.run_result()
    lines = (session.path / "imports").read_text().splitlines()
    imported = Counter((name, worker) for name, _pid, worker in map(str.split, lines))
    explorers: dict[str, set[str]] = {}
    for line in (session.path / "explored").read_text().splitlines():
        name, worker = line.split()
        explorers.setdefault(name, set()).add(worker)
    shown = f"imported: {dict(imported)}, explored: {explorers}\n{run.stdout.str()}"
    # Each target is imported once by a worker that lists it and explores it there; a
    # worker that only reads another's listing never imports it. On a busy machine one
    # worker may list both good targets, and the other be given one of them to explore,
    # which it then imports: still once per worker, never only to list it again.
    assert set(imported.values()) == {1}, shown
    assert {name for name, _ in imported} == {"look0", "look1", "broken"}, shown
    assert sum(name == "broken" for name, _ in imported) == 1, shown  # its error was shared
    for target in ("look0", "look1"):
        assert len(explorers[target]) == 1, shown  # explored once, by one worker
        listed_only = [w for name, w in imported if name == target and w not in explorers[target]]
        assert len(listed_only) <= 1, shown  # listed by one worker, explored by one
    report = json.loads((session.path / "n2.json").read_text())
    broken = [
        (r["check"], r["outcome"]) for r in report["results"] if r["target"] == "broken:tools"
    ]
    assert broken == [("TN001", "failed")]  # one item, the same on both workers
    assert "Different tests collected" not in run.stdout.str()
    outcomes = run.parseoutcomes()
    assert outcomes["failed"] == 1, run.stdout.str()
    assert outcomes["passed"] > 4


#: Each xdist worker notes, in the project, once the MCP SDK's adapter is imported in it.
NOTES_THE_SDK = """
import os
import sys
import threading
import time


def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        return
    note = os.path.join(str(config.rootpath), f"sdk-{worker}")

    def watch():
        while "toolnexus_ref.mcp" not in sys.modules:
            time.sleep(0.01)
        open(note, "w").close()

    threading.Thread(target=watch, daemon=True).start()
"""

#: ``SERVER``, starting only once both workers have imported the SDK (or a while has passed).
WAITS_FOR_BOTH = """
import time
from pathlib import Path

_here = Path(__file__).resolve().parent
_end = time.monotonic() + 60  # only a failing run waits it out
while not all((_here / f"sdk-gw{n}").exists() for n in (0, 1)) and time.monotonic() < _end:
    time.sleep(0.02)
(_here / "waited").write_text("both" if time.monotonic() < _end else "timed out")
"""


@early
def listing_awaited(folder: Path) -> RunningSession:
    """One server, starting only once both workers of its ``-n 2`` session have
    imported the MCP SDK. Started early: it mostly waits for its workers."""
    (folder / "notes_server.py").write_text(WAITS_FOR_BOTH + SERVER)
    (folder / "conftest.py").write_text(NOTES_THE_SDK)
    target = f"stdio:{sys.executable} {folder / 'notes_server.py'} notes"
    args = [*BASE, "--toolnexus-target", target, "--toolnexus-select", "TN1"]
    return start_session(folder, *args, "-n", "2", "--toolnexus-load-timeout", "90")


def test_a_worker_waiting_for_anothers_listing_of_a_server_imports_the_sdk_meanwhile(
    listing_awaited: RunningSession,
) -> None:
    """Building a server's tools from another worker's listing needs the MCP SDK.
    Imported once the listing had come, it held up that worker's collection, and so
    the start of the whole run, by the import (0.7 s on two cores). The server here
    starts only once both workers have imported it: the one that lists it imports it
    to connect, the other must have done so while it waited."""
    pytest.importorskip("xdist")
    session = listing_awaited.result()
    run = session.run_result()
    assert run.ret == 0, run.stdout.str()
    assert (session.path / "waited").read_text() == "both"
    assert len(_started(session.path)) == 1


#: Holds each xdist worker's import of the MCP SDK until the servers of its share of
#: the file (server i: worker i mod 2) have started, or 20 s have passed, and notes
#: which it was: a share started only once the SDK is imported never starts meanwhile.
SHARE_BEFORE_THE_SDK = """
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
SHARE = {"gw0": {"a", "c"}, "gw1": {"b"}}.get(WORKER, set())


def _started():
    lines = (HERE / "starts").read_text().split("\\n") if (HERE / "starts").exists() else []
    return {line.split()[0] for line in lines if line}


class _Waits:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp.client":  # inside ``import mcp``: the SDK is being imported
            sys.meta_path.remove(self)
            deadline = time.monotonic() + 20
            while not SHARE <= _started() and time.monotonic() < deadline:
                time.sleep(0.01)
            seen = "started first" if SHARE <= _started() else "not started"
            (HERE / f"sdk-{WORKER}").write_text(seen)
        return None


if WORKER is not None:
    sys.meta_path.insert(0, _Waits())
"""


def test_each_worker_starts_its_share_of_an_mcp_json_before_importing_the_sdk(
    by_server: ByServer,
) -> None:
    """The file is read without the SDK, so a worker's servers start while it imports
    the SDK, as a serial run's do; each is still started once, by its worker."""
    run = by_server.n2
    assert run.ret == 0, run.text()
    for worker in ("gw0", "gw1"):
        assert (run.path / f"sdk-{worker}").read_text() == "started first", worker
    started = by_server.started_n2
    assert sorted(name for name, _, _ in started) == ["a", "b", "c"], started
