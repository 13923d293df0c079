"""Whole tools and whole servers to each xdist worker and each shard; shards merged."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from _sessions import RunningSession, Session, SessionAfter, early, start_session
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_toolnexus._distribution import shard_of
from pytest_toolnexus._units import (
    SESSION_COST,
    assign,
    bundles,
    estimated_cost,
    rounds,
    split_nodeid,
    units_of,
)
from pytest_toolnexus.merge_reports import MergeError, main, merge

BASE = ["-p", "no:cacheprovider", "--toolnexus-conformance", "--toolnexus-sandbox", "off"]


def _nodeids(target: str, tools: int, checks: int = 3) -> list[str]:
    ids = [f"toolnexus:{target}::TN001-target-loads"]
    for t in range(tools):
        ids += [f"toolnexus:{target}::tool_{t}::TN5{c:02d}-x" for c in range(checks)]
    return ids


COLLECTION = [
    "tests/test_a.py::test_one",
    *_nodeids("pkg.mod:tools", 10),
    *_nodeids("stdio:python server.py", 4),
    *_nodeids("servers/mcp.json", 2),
    "tests/test_a.py::test_two",
]


def test_units_keep_a_tools_items_and_a_servers_items_together() -> None:
    units = units_of(COLLECTION, workers=2, concurrency=16)
    assert sorted(i for u in units for i in u.indices) == list(range(len(COLLECTION)))
    by_tool: dict[str, set[int]] = defaultdict(set)
    for number, unit in enumerate(units):
        for index in unit.indices:
            found = split_nodeid(COLLECTION[index])
            if found is not None and found[1] is not None:
                by_tool[f"{found[0]}::{found[1]}"].add(number)
    assert all(len(owners) == 1 for owners in by_tool.values())  # no tool cut in two
    kinds = {u.key: u.kind for u in units}
    assert kinds["toolnexus:stdio:python server.py"] == "target"
    assert kinds["toolnexus:servers/mcp.json"] == "target"
    assert kinds["tests/test_a.py::test_one"] == "other"
    python = [u for u in units if u.kind == "tools" and u.tools]
    # 10 tools over 2 workers that explore 16 at once: one bundle each, whole tools.
    assert [len(u.tools) for u in python] == [5, 5]
    assert split_nodeid("toolnexus:t::a::b::TN101-x") == ("toolnexus:t", "a::b")


def test_costs_come_from_measurements_and_the_longest_go_first() -> None:
    units = units_of(COLLECTION, workers=1, concurrency=2)
    server = next(u for u in units if u.key == "toolnexus:stdio:python server.py")
    assert estimated_cost(server, {}) == 4.0 + SESSION_COST  # never measured: tools, a start
    measured = {"toolnexus:stdio:python server.py::tool_0": 9.0, "x::y": 1.0}
    assert estimated_cost(server, measured) == 9.0 + 3 * 9.0  # unmeasured: the median
    # Once measured, the slow tool goes to one bundle and the others to the other...
    assert bundles([1.0, 1.0, 9.0, 1.0, 1.0, 1.0], workers=2, concurrency=16) == [
        [0, 1, 3, 4, 5],
        [2],
    ]
    # ...slow tools are spread, one to a bundle, the fast ones beside them...
    costs = [9.0, 9.0, 1.0, 1.0, 1.0, 1.0, 9.0, 9.0]
    cut = bundles(costs, workers=2, concurrency=4)
    assert [sum(costs[i] for i in b) for b in cut] == [20.0, 20.0]
    assert all(len(b) <= 4 for b in cut)
    # ...unless one worker explores them all at once anyway.
    assert bundles([1.0, 1.0, 9.0, 1.0, 1.0, 1.0], workers=1, concurrency=16) == [list(range(6))]
    assert assign([1.0, 5.0, 1.0, 3.0, 2.0], 2) == [[0, 1], [2, 3, 4]]  # 6 and 6
    assert assign([1.0, 5.0, 1.0, 3.0, 2.0], 2, capacity=3) == [[0, 1], [2, 3, 4]]
    assert assign([5.0, 1.0, 1.0, 1.0], 2, capacity=2) == [[0, 3], [1, 2]]


@settings(max_examples=200)
@given(
    tools=st.integers(1, 2000),
    workers=st.integers(1, 64),
    concurrency=st.integers(1, 64),
    measured=st.booleans(),
)
def test_bundles_fill_each_workers_concurrency_in_as_few_rounds_as_it_allows(
    tools: int, workers: int, concurrency: int, measured: bool
) -> None:
    """A worker explores one bundle at a time: bundles of a few tools leave its
    concurrency idle (twenty tools that wait on a service, cut in fives, took twice
    as long on one xdist worker as serially)."""
    costs = [1.0 + (i % 7 if measured else 0) for i in range(tools)]
    cut = bundles(costs, workers=workers, concurrency=concurrency)
    assert sorted(i for b in cut for i in b) == list(range(tools))  # each once
    assert all(b == sorted(b) for b in cut)
    assert cut == sorted(cut, key=lambda b: b[0])
    assert all(1 <= len(r) <= concurrency for r in cut)
    least = rounds(tools, workers, concurrency)
    assert least == -(-tools // (workers * concurrency))
    assert len(cut) <= min(tools, workers * least)
    if not measured:  # a bundle for each worker in each round, as even as can be
        assert len(cut) == min(tools, workers * least)
        assert max(map(len, cut)) - min(map(len, cut)) <= 1
        assert [i for b in cut for i in b] == list(range(tools))  # runs of the collection


def test_shards_are_disjoint_cover_everything_and_cut_no_tool() -> None:
    for n in (1, 2, 3, 7):
        shards = [shard_of(COLLECTION, k, n) for k in range(1, n + 1)]
        assert sum(len(s) for s in shards) == len(COLLECTION)
        assert set().union(*shards) == set(range(len(COLLECTION)))
        assert shards == [shard_of(list(COLLECTION), k, n) for k in range(1, n + 1)]
        for shard in shards:
            found = (split_nodeid(COLLECTION[i]) for i in shard)
            for target, tool in {f for f in found if f is not None and f[1] is not None}:
                prefix = f"{target}::{tool}::"
                owning = {i for i, nodeid in enumerate(COLLECTION) if nodeid.startswith(prefix)}
                assert owning <= shard


class _Gateway:
    def __init__(self, name: str) -> None:
        self.id = name


class _Node:
    """What the scheduler uses of xdist's ``WorkerController``: a fake, no process."""

    def __init__(self, name: str) -> None:
        self.gateway = _Gateway(name)
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_the_scheduler_gives_whole_units_and_finishes(pytestconfig: pytest.Config) -> None:
    pytest.importorskip("xdist")
    from pytest_toolnexus._scheduler import ToolScheduling

    sched = ToolScheduling(pytestconfig, None, concurrency=2, numnodes=2)
    nodes = [_Node("gw0"), _Node("gw1")]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, COLLECTION)
    sched.schedule()
    # Run whatever each node holds, one item at a time, until all is done.
    done: dict[str, list[int]] = {node.gateway.id: [] for node in nodes}
    while sched.has_pending:
        for node in nodes:
            pending = sched.node2pending.get(node)
            if pending:
                index = pending[0]
                done[node.gateway.id].append(index)
                sched.mark_test_complete(node, index, 0.5)
    assert sched.tests_finished
    assert all(node.shutting_down for node in nodes)
    assert sorted(done["gw0"] + done["gw1"]) == list(range(len(COLLECTION)))
    for unit in sched.units:  # every unit ran on one node
        assert set(unit.indices) <= set(done["gw0"]) or set(unit.indices) <= set(done["gw1"])
    costs = sched.tool_costs()
    assert len(costs) == 16
    assert all(v > 0 for v in costs.values())


SLOW_TOOLS = """
import os
from toolnexus_ref import BaseTool

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log")


def make(index):
    class Lookup(BaseTool):
        name = f"lookup_{index}"
        description = "Looks a word up."
        input_schema = {
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 8}},
            "required": ["word"],
            "additionalProperties": False,
        }

        def run(self, args, ctx):
            with open(LOG, "a") as log:
                log.write(f"{os.getpid()} lookup_{index}\\n")
            return args["word"]

    return Lookup()


tools = [make(i) for i in range(4)]
"""

PROJECT_TESTS = """
import os


def test_plain_one():
    assert os.environ.get("PYTEST_XDIST_WORKER")


def test_plain_two():
    assert True
"""

WHERE = """
import os


def pytest_runtest_call(item):
    with open(os.path.join(str(item.config.rootpath), "ran.log"), "a") as log:
        log.write(f"{os.environ['PYTEST_XDIST_WORKER']} {item.nodeid}\\n")
"""


@early
def two_workers(folder: Path) -> RunningSession:
    """Four slow tools and two plain tests under ``-n 2``; a conftest notes which worker
    ran each item. Started early: it mostly waits for its workers."""
    (folder / "slowtools.py").write_text(SLOW_TOOLS)
    (folder / "test_project.py").write_text(PROJECT_TESTS)
    (folder / "conftest.py").write_text(WHERE)
    args = [*BASE, "--toolnexus-target", "slowtools:tools", "--toolnexus-isolation", "none"]
    args += ["--toolnexus-select", "TN5,TN101", "--toolnexus-examples", "2"]
    return start_session(folder, *args, "-n", "2", "--toolnexus-report", "r.json")


def test_two_workers_explore_each_tool_once_and_run_the_rest(
    two_workers: RunningSession,
) -> None:
    pytest.importorskip("xdist")
    session = two_workers.result()
    run = session.run_result()
    outcomes = run.parseoutcomes()
    assert outcomes.get("failed", 0) == 0, run.stdout.str()
    assert outcomes["passed"] > 4
    ran = [line.split(" ", 1) for line in (session.path / "ran.log").read_text().splitlines()]
    assert {"test_project.py::test_plain_one", "test_project.py::test_plain_two"} <= {
        nodeid for _, nodeid in ran
    }  # (c) the project's own tests ran too
    workers_of: dict[str, set[str]] = defaultdict(set)
    for worker, nodeid in ran:
        found = split_nodeid(nodeid)
        if found is not None and found[1] is not None:
            workers_of[found[1]].add(worker)
    assert len(workers_of) == 4
    assert all(len(w) == 1 for w in workers_of.values())
    assert len(set().union(*workers_of.values())) == 2  # both workers had tools
    callers: dict[str, set[str]] = defaultdict(set)
    for line in (session.path / "calls.log").read_text().splitlines():
        pid, tool = line.split()
        callers[tool].add(pid)
    assert len(callers) == 4
    assert all(len(p) == 1 for p in callers.values())
    report = session.report("r.json")
    assert report["complete"]
    assert report["summary"]["tools"] == 4


def test_shards_cover_the_run_and_merge_into_its_verdicts(tools_module: pytest.Pytester) -> None:
    args = [*BASE, "--toolnexus-execute", "none", "--toolnexus-target", "mytools:mixed"]
    args += ["--toolnexus-target", "mytools:good", "test_project.py"]
    tools_module.makepyfile(
        test_project="def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
    )
    serial = tools_module.runpytest(*args, "--toolnexus-report", "serial.json")
    shards = [
        tools_module.runpytest(
            *args, "--toolnexus-shard", f"{k}/2", "--toolnexus-report", f"{k}.json"
        )
        for k in (1, 2)
    ]
    full = serial.parseoutcomes()
    counts = [s.parseoutcomes() for s in shards]
    for key in ("passed", "failed", "skipped"):
        assert sum(c.get(key, 0) for c in counts) == full.get(key, 0)
    selected = [sum(c.get(k, 0) for k in ("passed", "failed", "skipped")) for c in counts]
    assert [c.get("deselected", 0) for c in counts] == [sum(selected) - s for s in selected]
    path = tools_module.path
    summary = merge([path / f"{k}.json" for k in (1, 2)], path / "merged.json")
    merged = json.loads((path / "merged.json").read_text())
    expected = json.loads((path / "serial.json").read_text())
    assert summary == expected["summary"]
    assert merged["complete"]

    def as_text(r: dict[str, Any]) -> str:
        return json.dumps(r, sort_keys=True)

    assert sorted(map(as_text, merged["results"])) == sorted(map(as_text, expected["results"]))
    assert merged["not_called"] == expected["not_called"]
    with pytest.raises(MergeError, match="given twice"):
        merge([path / "1.json", path / "1.json"], path / "bad.json")
    # More shards than units: a shard left empty passes (not pytest's 5), saying why.
    empty = tools_module.runpytest(*args, "--toolnexus-shard", "999/999")
    assert empty.ret == 0
    empty.stdout.fnmatch_lines(["toolnexus shard 999/999: nothing to run; *"])
    assert main([str(path / "m2.json"), str(path / "serial.json"), str(path / "merged.json")]) == 2
    # Costs balance shards: given alone, the option is a usage error, said as such.
    alone = tools_module.runpytest(*args, "--toolnexus-shard-costs", "serial.json")
    assert alone.ret == pytest.ExitCode.USAGE_ERROR
    alone.stderr.fnmatch_lines(
        ["*--toolnexus-shard-costs balances shards: give --toolnexus-shard*"]
    )
    # A shard's baseline update holds its own tools' changes: the run says where the rest is.
    update = ["--toolnexus-baseline", "b.toml", "--toolnexus-update-baseline"]
    updated = tools_module.runpytest(*args, "--toolnexus-shard", "1/2", *update)
    updated.stdout.fnmatch_lines(
        ["the baseline holds shard 1/2's changes alone: *pytest_toolnexus.update_baseline *b.toml*"]
    )


def test_merge_refuses_another_version_and_marks_an_unfinished_shard(tmp_path: Path) -> None:
    done: dict[str, Any] = {
        "version": 1,
        "complete": True,
        "interrupted": None,
        "not_judged": [],
        "results": [],
    }
    killed = {**done, "complete": False, "interrupted": "SIGTERM", "not_judged": ["toolnexus:x"]}
    (tmp_path / "a.json").write_text(json.dumps(done))
    (tmp_path / "b.json").write_text(json.dumps(killed))
    (tmp_path / "c.json").write_text(json.dumps({**done, "version": 99}))
    merge([tmp_path / "a.json", tmp_path / "b.json"], tmp_path / "m.json")
    merged = json.loads((tmp_path / "m.json").read_text())
    assert not merged["complete"]
    assert "b.json: SIGTERM" in merged["interrupted"]
    assert merged["not_judged"] == ["toolnexus:x"]
    with pytest.raises(MergeError, match="version 99"):
        merge([tmp_path / "a.json", tmp_path / "c.json"], tmp_path / "m.json")
    record = {"target": "t", "tool": "x", "check": "TN101", "outcome": "passed", "message": ""}
    record.update(category="naming", severity="error", findings=[])
    for name, shard in (("s1", "1/2"), ("s2", "2/2"), ("s1again", "1/2")):
        (tmp_path / f"{name}.json").write_text(
            json.dumps({**done, "shard": shard, "results": [record]})
        )
    with pytest.raises(MergeError, match="both shard 1"):
        merge([tmp_path / "s1.json", tmp_path / "s1again.json"], tmp_path / "m.json")
    with pytest.raises(MergeError, match="tool 'x' of t is also in"):
        merge([tmp_path / "s1.json", tmp_path / "s2.json"], tmp_path / "m.json")


GOOD_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "good.py"


#: A server that notes its start (``starts.log``: its name) and runs the script given.
COUNTED_SERVER = """
import pathlib, runpy, sys

with open(pathlib.Path(__file__).with_name("starts.log"), "a") as log:
    log.write(sys.argv[1] + "\\n")
runpy.run_path(sys.argv[2], run_name="__main__")
"""


def _logged(path: Path) -> list[str]:
    """The lines a run's servers and targets wrote to ``path``, sorted; the log cleared."""
    found = sorted(path.read_text().split()) if path.exists() else []
    path.unlink(missing_ok=True)
    return found


@early
def shared_out(folder: Path) -> dict[str, RunningSession]:
    """An mcp.json of two counted servers, run whole (``serial``) and as each of three
    shards (``1/3``...), each run in a project of its own: each notes its own servers'
    starts. Started early, side by side: they mostly wait for their servers."""
    servers = {
        name: {"command": sys.executable, "args": ["counted.py", name, str(GOOD_SERVER)]}
        for name in "ab"
    }
    args = [*BASE, "--toolnexus-only", "--toolnexus-execute", "none"]
    args += ["--toolnexus-target", "mcp.json", "--toolnexus-select", "TN101,TN851"]
    runs: dict[str, list[str]] = {"serial": ["--toolnexus-report", "serial.json"]}
    for k in (1, 2, 3):
        runs[f"{k}/3"] = ["--toolnexus-shard", f"{k}/3", "--toolnexus-report", f"{k}.json"]
    started: dict[str, RunningSession] = {}
    for name, extra in runs.items():
        project = folder / name.replace("/", "-of-")
        project.mkdir()
        (project / "counted.py").write_text(COUNTED_SERVER)
        # A setting for a tool of server b: in shard 1, where b is not listed, it is not lost.
        (project / "pyproject.toml").write_text(
            "[tool.toolnexus.tools.b_lookup]\ncall_timeout = 5\n"
        )
        (project / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        started[name] = start_session(project, *args, *extra)
    return started


def test_shards_share_out_an_mcp_jsons_servers_before_any_starts(
    shared_out: dict[str, RunningSession], tmp_path: Path
) -> None:
    """A CI matrix over one mcp.json: each server starts, and is explored, in one shard
    only; the file's own checks, judged where its servers are, merge into one verdict;
    a shard given nothing exits 0, saying why. Merged, the same verdicts as one run."""
    serial = shared_out["serial"].result()
    assert serial.ret == 0, serial.stdout.str()
    (serial.path / "starts.log").unlink()
    started = []
    shards = []
    for k in (1, 2, 3):
        shard = shared_out[f"{k}/3"].result()
        shards.append(shard.run_result())
        started.append(_logged(shard.path / "starts.log"))
    assert started == [["a"], ["b"], []]
    assert [s.ret for s in shards] == [0] * 3, [s.stdout.str() for s in shards]
    shards[2].stdout.fnmatch_lines(["toolnexus shard 3/3: nothing to run; *"])
    paths = [shared_out[f"{k}/3"].result().path / f"{k}.json" for k in (1, 2, 3)]
    reports = [json.loads(path.read_text()) for path in paths]
    held = [sorted({r["tool"].split("_", 1)[0] for r in report["results"]}) for report in reports]
    assert held == [["*", "a"], ["*", "b"], []]
    summary = merge(paths, tmp_path / "merged.json")
    expected = serial.report("serial.json")
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert summary == expected["summary"]

    def verdicts(report: dict[str, Any]) -> list[tuple[str, ...]]:
        return sorted((r["target"], r["tool"], r["check"], r["outcome"]) for r in report["results"])

    assert verdicts(merged) == verdicts(expected)


def test_each_server_given_goes_to_one_shard_before_any_starts(tmp_path: Path) -> None:
    from toolnexus_conformance.targets import TargetSpec

    from pytest_toolnexus._shard_targets import SERVER_COST, shard_targets

    servers: dict[str, Any] = {name: {"command": "s", "args": [name]} for name in ("x", "y", "z")}
    servers["off"] = {"command": "s", "disabled": True}  # starts nowhere: in every share
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    raws = ["pkg.mod:tools", "stdio:one", "mcp.json", "stdio:two", "stdio:one", "stdio:"]
    shares = [shard_targets(raws, tmp_path, k, 2) for k in (1, 2)]
    # The python target (cut later) and the unreadable one stay in both; one server each in
    # turn: stdio:one, then x, y, z, then stdio:two; the second stdio:one follows the first.
    assert shares[0].kept[:2] == ["pkg.mod:tools", "stdio:one"]
    assert shares[1].kept[0] == "pkg.mod:tools"
    [first_json] = [s for s in shares[0].kept if isinstance(s, TargetSpec)]
    [second_json] = [s for s in shares[1].kept if isinstance(s, TargetSpec)]
    assert (first_json.only, second_json.only) == (("y", "off"), ("x", "z", "off"))
    assert "stdio:two" in shares[0].kept
    assert "stdio:two" not in shares[1].kept
    assert shares[0].kept.count("stdio:one") == 2
    assert "stdio:one" not in shares[1].kept
    assert all(s.kept[-1] == "stdio:" for s in shares)  # unreadable: cut after collection
    assert shares[0].loads == shares[1].loads == [3 * SERVER_COST, 2 * SERVER_COST]
    assert shares[0].held == {"stdio:one", "mcp.json", "stdio:two"}
    assert shares[1].held == {"mcp.json"}
    assert shares[0].elsewhere == {"mcp.json"}  # some of its servers are shard 2's
    assert shares[1].elsewhere == {"mcp.json", "stdio:one", "stdio:two"}


def test_given_costs_the_costliest_server_goes_first_to_the_least_loaded_shard(
    tmp_path: Path,
) -> None:
    """Dealt out in turn, the slow server and a fast one share a shard while the other
    shard idles; weighed by an earlier run's seconds, the slow one is alone."""
    from pytest_toolnexus._shard_targets import shard_targets

    servers = {name: {"command": "s", "args": [name]} for name in ("fast", "slow", "new")}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    costs = {
        "toolnexus:stdio:one::t": 1.0,
        "toolnexus:stdio:two::t": 1.0,
        "toolnexus:mcp.json::fast_t": 1.0,
        "toolnexus:mcp.json::slow_t": 9.0,
        "toolnexus:mcp.json::slow_u": 9.0,
    }
    raws = ["stdio:one", "mcp.json", "stdio:two", "pkg.mod:tools"]
    by_count = [shard_targets(raws, tmp_path, k, 2) for k in (1, 2)]
    assert by_count[0].kept[0] == "stdio:one"
    assert by_count[0].kept[1].only == ("slow",)  # one, fast, slow, new, two: in turn
    assert by_count[0].kept[2] == "stdio:two"
    weighed = [shard_targets(raws, tmp_path, k, 2, costs) for k in (1, 2)]
    # A shard explores 16 tools at once: slow holds it 0.5 s (a start) and 18/16 s of
    # work, but lasts 9 s (its longest tool); one, two, fast and new (unmeasured: the
    # median server) 0.5625 s each, 1 s alone. Slow first, then the rest where it is not.
    files = [[s for s in share.kept if not isinstance(s, str)] for share in weighed]
    assert [f[0].only for f in files] == [("slow",), ("fast", "new")]
    assert "stdio:one" not in weighed[0].kept
    assert [s for s in weighed[1].kept if isinstance(s, str)] == [
        "stdio:one",
        "stdio:two",
        "pkg.mod:tools",
    ]
    assert weighed[0].loads == weighed[1].loads == [9.0, 4 * 0.5625]
    assert weighed[0].measured == costs  # the Python target's tools are cut by them too
    assert (weighed[0].weighed, weighed[0].guessed) == (4, 1)  # new: the median server
    # Costs that know none of the servers: dealt out in turn, as with none.
    unknown = [shard_targets(raws, tmp_path, k, 2, {"toolnexus:x::t": 1.0}) for k in (1, 2)]
    assert [u.kept for u in unknown] == [b.kept for b in by_count]


def test_given_costs_a_small_python_target_is_imported_in_one_shard_only(tmp_path: Path) -> None:
    """A Python target the costs know, no heavier than a shard's mean, is placed whole
    before any shard imports it; a heavier one, or one never measured, is imported in
    every shard and cut by tool after collection."""
    from pytest_toolnexus._shard_targets import shard_targets

    costs = {f"toolnexus:stdio:s{i}::t": 4.0 for i in range(4)}
    costs.update({"toolnexus:pkg.small:tools::a": 1.0, "toolnexus:pkg.small:tools::b": 1.0})
    costs.update({f"toolnexus:pkg.big:tools::t{i}": 9.0 for i in range(40)})
    raws = [f"stdio:s{i}" for i in range(4)]
    raws += ["pkg.small:tools", "pkg.big:tools", "pkg.new:tools", "pkg.small:tools"]
    shares = [shard_targets(raws, tmp_path, k, 2, costs) for k in (1, 2)]
    assert [s.kept.count("pkg.small:tools") for s in shares] in ([2, 0], [0, 2])
    assert all({"pkg.big:tools", "pkg.new:tools"} <= set(s.kept) for s in shares)
    holder, other = shares if "pkg.small:tools" in shares[0].kept else shares[::-1]
    assert "pkg.small:tools" in holder.held
    assert "pkg.small:tools" in other.elsewhere
    # Without costs, every Python target is in every shard, as before.
    assert all(s.kept.count("pkg.small:tools") == 2 for s in (shard_targets(raws, tmp_path, 1, 2),))


LOGGED_TOOLS = """
import os, pathlib

with open(pathlib.Path(__file__).with_name("imports.log"), "a") as log:
    log.write(__name__ + "\\n")


class Echo:
    description = "Echo the text it is given."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}}

    def __init__(self, name):
        self.name = name

    def execute(self, args, ctx=None):
        return str(args.get("text", ""))


tools = [Echo(__name__ + "_a"), Echo(__name__ + "_b")]
"""
#: A server of 24 quick tools: twelve times the two of each good server the session
#: keeps (``-k "not wait"``), so its measured seconds outweigh the rest of the run put
#: together however loaded the machine was when they were measured.
HEAVY_SERVER = """
from toolnexus_ref import BaseTool, ToolAnnotations
from toolnexus_ref.mcp import serve_stdio
import asyncio


class Echo(BaseTool):
    description = "Echo the text it is given."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    annotations = ToolAnnotations(read_only=True, destructive=False)

    def __init__(self, name):
        self.name = name

    def run(self, args, ctx):
        return str(args.get("text", ""))


asyncio.run(serve_stdio([Echo(f"echo_{i}") for i in range(24)], name="heavy"))
"""


#: The weighed runs' options: an mcp.json of one heavy server and two light ones, and
#: two small Python targets. The good server's ``wait`` takes seconds and weighs
#: nothing here: left out.
WEIGHED_ARGS = [
    *BASE,
    "--toolnexus-only",
    "--toolnexus-target",
    "mcp.json",
    "--toolnexus-target",
    "first:tools",
    "--toolnexus-target",
    "second:tools",
    "--toolnexus-select",
    "TN601",
    "--toolnexus-depth",
    "0",
    "-k",
    "not wait",
]


def _weighed_project(folder: Path) -> None:
    """The weighed runs' project in ``folder``: its servers note their starts in
    ``starts.log``, its Python targets their imports in ``imports.log``."""
    for name in ("first", "second"):
        (folder / f"{name}.py").write_text(LOGGED_TOOLS)
    (folder / "counted.py").write_text(COUNTED_SERVER)
    (folder / "heavy.py").write_text(HEAVY_SERVER)
    scripts = {"b": "heavy.py", "a": str(GOOD_SERVER), "c": str(GOOD_SERVER)}
    servers = {
        name: {"command": sys.executable, "args": ["counted.py", name, script]}
        for name, script in scripts.items()
    }
    (folder / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


@early
def weighed(folder: Path) -> dict[str, RunningSession | SessionAfter]:
    """The weighed runs, each in a project of its own: ``serial`` (it mostly waits for
    its servers), and shard ``1`` and ``2``, side by side once the serial run has ended:
    its report holds the costs that cut them."""
    projects = {key: folder / key for key in ("serial", "1", "2")}
    for project in projects.values():
        project.mkdir()
        _weighed_project(project)
    serial = start_session(projects["serial"], *WEIGHED_ARGS, "--toolnexus-report", "serial.json")

    def start_shard(key: str, ended: Session) -> RunningSession:
        project = projects[key]
        (project / "serial.json").write_bytes((ended.path / "serial.json").read_bytes())
        shard = ["--toolnexus-shard", f"{key}/2", "--toolnexus-shard-costs", "serial.json"]
        return start_session(project, *WEIGHED_ARGS, *shard, "--toolnexus-report", f"{key}.json")

    shards = {key: SessionAfter(serial, partial(start_shard, key)) for key in ("1", "2")}
    return {"serial": serial, **shards}


def test_shards_weighed_by_an_earlier_report_start_each_server_once_and_import_each_target_once(
    weighed: dict[str, RunningSession | SessionAfter], tmp_path: Path
) -> None:
    """An mcp.json of one heavy server and two light ones, and two small Python targets,
    over two shards weighed by a serial run's report. Dealt out in turn, the heavy
    server would share a shard (``b, c | a``); weighed, it has one to itself, each server
    starts once, and each Python target is imported by the one shard that explores it.
    The merge is the serial run's; shards cut by other costs are refused at the merge."""
    serial = weighed["serial"].result()
    assert serial.ret == 0, serial.stdout.str()
    shards = [weighed[str(k)] for k in (1, 2)]
    started, imported = [], []
    for k, running in zip((1, 2), shards, strict=True):
        shard = running.result()
        run = shard.run_result()
        assert run.ret == 0, run.stdout.str()
        run.stdout.fnmatch_lines(
            [
                "toolnexus shard: *, weighed by the seconds in *",
                f"toolnexus shard {k}/2: * servers and targets placed by their seconds in *, 0 not *",
            ]
        )
        started.append(_logged(shard.path / "starts.log"))
        imported.append(set(_logged(shard.path / "imports.log")))
    assert started == [["b"], ["a", "c"]], started
    assert imported[0] | imported[1] == {"first", "second"}
    assert not imported[0] & imported[1], imported
    paths = [running.result().path / f"{k}.json" for k, running in zip((1, 2), shards, strict=True)]
    summary = merge(paths, tmp_path / "merged.json")
    expected = serial.report("serial.json")
    assert summary == expected["summary"]

    def verdicts(report: dict[str, Any]) -> list[tuple[str, ...]]:
        return sorted((r["target"], r["tool"], r["check"], r["outcome"]) for r in report["results"])

    assert verdicts(json.loads((tmp_path / "merged.json").read_text())) == verdicts(expected)
    # What cut each shard: the costs' digest and the concurrency they were weighed at.
    assert json.loads(paths[0].read_text())["shard_costs"].endswith("/16")
    uncosted = json.loads(paths[1].read_text())  # as shard 2 cut by count would say
    uncosted["shard_costs"] = "none"
    (tmp_path / "count.json").write_text(json.dumps(uncosted))
    with pytest.raises(MergeError, match="cut by different costs"):
        merge([paths[0], tmp_path / "count.json"], tmp_path / "bad.json")


def test_a_shard_lasts_its_tools_seconds_over_its_concurrency_or_its_longest_tool() -> None:
    """Four real servers (their seconds measured in one run, 16 tools at once):
    server-everything has one tool that waits 10 s, the filesystem server fourteen quick
    ones. Summed, the filesystem's seconds outweighed everything's, and everything went
    with the time server; weighed as a shard lasts, everything is alone."""
    from pytest_toolnexus._shard_costs import place, weight_of

    everything = weight_of([10.3, *[26.2 / 11] * 11], 16, 0.5)
    files = weight_of([4.57, *[32.7 / 13] * 13], 16, 0.5)
    time, thinking = weight_of([2.39, 1.72], 16, 0.5), weight_of([2.78], 16, 0.5)
    owners, loads = place([everything, files, time, thinking], 2)
    assert owners == [0, 1, 1, 1]
    assert loads[0] == everything.span


@settings(max_examples=50)
@given(
    st.lists(st.lists(st.floats(0.01, 100), min_size=1, max_size=5), min_size=1, max_size=12),
    st.integers(1, 5),
)
def test_each_weight_goes_to_one_shard_whose_time_holds_it(
    seconds: list[list[float]], shards: int
) -> None:
    from pytest_toolnexus._shard_costs import place, weight_of

    weights = [weight_of(s, 4) for s in seconds]
    owners, loads = place(weights, shards)
    assert owners == place(weights, shards)[0]  # every shard cuts alike
    assert all(0 <= o < shards for o in owners)
    for weight, owner in zip(weights, owners, strict=True):
        assert loads[owner] >= weight.alone
    assert sum(loads) >= sum(w.work for w in weights) - 1e-9


def test_the_costs_of_a_shard_plan_come_from_a_reports_seconds(tmp_path: Path) -> None:
    from pytest_toolnexus._shard_costs import read_costs

    def record(tool: str, seconds: Any) -> dict[str, Any]:
        return {"target": "stdio:s", "tool": tool, "check": "TN601", "seconds": seconds}

    path = tmp_path / "report.json"
    results = [record("a", 1.5), record("a", 2.0), record("b", 0.25), record("*", 9.0)]
    results += [record("c", "soon"), record("d", -1), record("e", float("nan")), {"no": "record"}]
    path.write_text(json.dumps({"results": results}))
    found = read_costs(path)
    assert found.tools == {"toolnexus:stdio:s::a": 2.0, "toolnexus:stdio:s::b": 0.25}
    assert found.digest == read_costs(path).digest != "none"
    path.write_text(json.dumps({"results": [record("a", 1.5)]}))
    assert read_costs(path).digest != found.digest
    assert "does not exist" in read_costs(tmp_path / "gone.json").problem
    path.write_text("{half")
    assert "not a readable JSON report" in read_costs(path).problem
    path.write_text(json.dumps({"results": [record("a", None)]}))
    broken = read_costs(path)
    assert (broken.tools, broken.digest) == ({}, "none")
    assert "records no tool's seconds" in broken.describe()


NO_TOOLS_SERVER = Path(__file__).resolve().parents[1] / "sources" / "servers" / "no_tools.py"


@early
def no_tools_shards(folder: Path) -> list[RunningSession]:
    """An mcp.json of a good server and one offering no tools, run as each of two
    shards, each in a project of its own. Started early, side by side: they mostly wait
    for their servers."""
    servers = {
        "a": {"command": sys.executable, "args": [str(GOOD_SERVER)]},
        "b": {"command": sys.executable, "args": [str(NO_TOOLS_SERVER)]},
    }
    args = [*BASE, "--toolnexus-only", "--toolnexus-execute", "none"]
    args += ["--toolnexus-target", "mcp.json", "--toolnexus-select", "TN001,TN851"]
    started: list[RunningSession] = []
    for k in (1, 2):
        project = folder / f"shard-{k}"
        project.mkdir()
        (project / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
        shard = ["--toolnexus-shard", f"{k}/2", "--toolnexus-report", f"{k}.json"]
        started.append(start_session(project, *args, *shard))
    return started


def test_a_shards_share_of_an_mcp_json_may_list_no_tools(
    no_tools_shards: list[RunningSession], tmp_path: Path
) -> None:
    """A server that offers no tools (prompts, resources) is no fault of the file when
    the file's other servers do: in the shard given only that server, no TN001 either."""
    runs: list[Session] = [running.result() for running in no_tools_shards]
    assert [r.ret for r in runs] == [0, 0], [r.stdout.str() for r in runs]
    paths = [run.path / f"{k}.json" for k, run in zip((1, 2), runs, strict=True)]
    summary = merge(paths, tmp_path / "m.json")
    assert summary["failed"] == 0


ORDERED_TOOLS = """
import os
import time
from toolnexus_ref import BaseTool

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "order.log")


def make(label, pause):
    class Lookup(BaseTool):
        name = label
        description = "Looks a word up."
        input_schema = {
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 8}},
            "required": ["word"],
            "additionalProperties": False,
        }

        def run(self, args, ctx):
            with open(LOG, "a") as log:
                log.write(f"{label}\\n")
            time.sleep(pause)
            return args["word"]

    return Lookup()


tools = [make("quick", 0.0), make("slow", 0.1)]
"""


def test_a_serial_run_begins_the_tool_the_last_run_found_slowest(
    pytester: pytest.Pytester,
) -> None:
    """With one slot, tools are explored in turn: the listing's order on a first run, the
    slowest first once a run has measured them (pytest's cache keeps their seconds)."""
    pytester.makepyfile(orderedtools=ORDERED_TOOLS)
    pytester.syspathinsert()
    args = ["--toolnexus-conformance", "--toolnexus-only", "--toolnexus-sandbox", "off"]
    args += ["--toolnexus-target", "orderedtools:tools", "--toolnexus-isolation", "none"]
    args += ["--toolnexus-concurrency", "1", "--toolnexus-select", "TN601"]
    args += ["--toolnexus-examples", "1"]
    log = pytester.path / "order.log"

    def first_called() -> str:
        log.unlink(missing_ok=True)
        pytester.runpytest(*args).assert_outcomes(passed=2)
        return log.read_text().split()[0]

    assert first_called() == "quick"
    costs = json.loads((pytester.path / ".pytest_cache/v/toolnexus/tool-seconds").read_text())
    quick, slow = (costs[f"toolnexus:orderedtools:tools::{name}"] for name in ("quick", "slow"))
    assert slow > quick
    assert first_called() == "slow"


ORDERED_SERVER = """
import asyncio
import os

from toolnexus_ref import BaseTool, ToolAnnotations
from toolnexus_ref.mcp import serve_stdio

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "order.log")


class Lookup(BaseTool):
    description = "Looks a word up."
    input_schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "maxLength": 8}},
        "required": ["word"],
        "additionalProperties": False,
    }
    annotations = ToolAnnotations(read_only=True, destructive=False)

    def __init__(self, name):
        self.name = name

    def run(self, args, ctx):
        with open(LOG, "a") as log:
            log.write(f"{self.name}\\n")
        return args["word"]


tools = [Lookup("quick_a"), Lookup("quick_b"), Lookup("slow")]
asyncio.run(serve_stdio(tools, name="ordered"))
"""


def test_an_xdist_worker_begins_the_tool_a_serial_run_found_slowest(
    pytester: pytest.Pytester,
) -> None:
    """Workers read the seconds a serial run kept, and keep none: the worker given a
    server whose tools outnumber its slots begins the one kept as slowest."""
    pytest.importorskip("xdist")
    pytester.makepyfile(orderedserver=ORDERED_SERVER)
    server = f"stdio:{sys.executable} {pytester.path / 'orderedserver.py'}"
    args = ["--toolnexus-conformance", "--toolnexus-only", "--toolnexus-sandbox", "off"]
    args += ["--toolnexus-target", server, "--toolnexus-concurrency", "1"]
    args += ["--toolnexus-select", "TN601", "--toolnexus-examples", "1"]
    kept = {f"toolnexus:{server}::ordered_{name}": 0.1 for name in ("quick_a", "quick_b")}
    kept[f"toolnexus:{server}::ordered_slow"] = 5.0  # what a serial run would have kept
    seconds = pytester.path / ".pytest_cache/v/toolnexus/tool-seconds"
    seconds.parent.mkdir(parents=True)
    seconds.write_text(json.dumps(kept))
    pytester.runpytest_subprocess(*args, "-n", "2").assert_outcomes(passed=3)
    calls = (pytester.path / "order.log").read_text().split()
    assert calls[0] == "slow", calls
    assert json.loads(seconds.read_text()) == kept  # the workers kept nothing of their own
