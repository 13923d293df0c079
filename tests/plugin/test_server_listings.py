"""An mcp.json's servers listed by the xdist workers between them: each server once, by one."""

from __future__ import annotations

import json
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_toolnexus._server_listings import (
    NotListed,
    Started,
    list_by_server,
    server_costs,
    server_key,
    share_of,
    shares,
)
from pytest_toolnexus._shared_loads import Claim, SharedListings, listers, remove_folder, run_folder

NAMES = ["alpha", "beta", "gamma", "delta", "epsilon"]
PREFIXES = [f"{name}_" for name in NAMES]


class Starts:
    """A ``start`` that records which worker started which server, and can fail."""

    def __init__(self, worker: str, log: list[tuple[str, str]], *, fails: bool = False) -> None:
        self.worker, self.log, self.fails = worker, log, fails

    def __call__(self, positions: list[int]) -> Started:
        if self.fails:
            raise RuntimeError("the loop went away")
        self.log.extend((NAMES[i], self.worker) for i in positions)
        listed = {i: {"name": NAMES[i], "status": {}, "tools": [{"name": "t"}]} for i in positions}
        return listed, {i: f"{NAMES[i]} running in {self.worker}" for i in positions}


def _list(
    folder: Path, worker: int, log: list[tuple[str, str]], **given: Any
) -> tuple[list[dict[str, Any]], dict[int, Any]]:
    options: dict[str, Any] = {
        "share": (worker, 2),
        "start": Starts(f"gw{worker}", log),
        "patience": time.monotonic() + 30.0,
        "limit": 30.0,
    }
    options.update(given)
    return list_by_server(
        SharedListings(folder, f"gw{worker}"),
        "servers/mcp.json",
        "mcp.json",
        NAMES,
        PREFIXES,
        **options,
    )


def test_two_workers_start_each_server_once_and_see_the_same_listing(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    results: dict[int, tuple[list[dict[str, Any]], dict[int, Any]]] = {}

    def worker(index: int) -> None:
        results[index] = _list(tmp_path, index, log)

    threads = [threading.Thread(target=worker, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Server i of the file is worker i mod 2's: listed there, once, and running there.
    assert sorted(log) == sorted((name, f"gw{i % 2}") for i, name in enumerate(NAMES))
    assert sorted(results[0][1]) == [0, 2, 4]
    assert sorted(results[1][1]) == [1, 3]
    assert results[0][0] == results[1][0]
    assert [entry["name"] for entry in results[0][0]] == NAMES


def test_shares_measured_by_the_last_run_balance_the_workers_cost(tmp_path: Path) -> None:
    """A worker explores every server it listed (the scheduler gives them to it at
    once), so its share is its work: one slow server is a share of its own."""
    measured = {
        "toolnexus:mcp.json::alpha_read": 20.0,  # one slow server
        "toolnexus:mcp.json::beta_read": 2.0,
        "toolnexus:mcp.json::gamma_read": 1.0,
        "toolnexus:mcp.json::gamma_write": 1.0,
        "toolnexus:mcp.json::delta_read": 2.0,
        "toolnexus:mcp.json::epsilon_read": 2.0,
        "toolnexus:other.json::alpha_read": 99.0,  # another target's
    }
    costs = server_costs(measured, "toolnexus:mcp.json", PREFIXES)
    assert costs == [20.0, 2.0, 2.0, 2.0, 2.0]
    owners = shares(costs, 2)
    assert owners == [0, 1, 1, 1, 1]
    log: list[tuple[str, str]] = []
    results: dict[int, tuple[list[dict[str, Any]], dict[int, Any]]] = {}

    def worker(index: int) -> None:
        results[index] = _list(tmp_path, index, log, owners=owners)

    threads = [threading.Thread(target=worker, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results[0][1]) == [0]
    assert sorted(results[1][1]) == [1, 2, 3, 4]
    assert results[0][0] == results[1][0]
    # A server the last run did not measure (new, or renamed): the usual split.
    assert shares([20.0, None, 2.0, 2.0, 2.0], 2) == [0, 1, 0, 1, 0]
    assert shares([3.0, 1.0], 4) == [0, 1]


def test_the_controller_reads_which_worker_has_each_server() -> None:
    uid = f"test-run-servers-{uuid.uuid4().hex}"  # runs of the suite side by side share /tmp
    remove_folder(uid)
    try:
        log: list[tuple[str, str]] = []
        folder = run_folder(uid)
        done = threading.Thread(target=_list, args=(folder, 1, log))
        done.start()
        _list(folder, 0, log)
        done.join()
        found, _ = listers(uid)
    finally:
        remove_folder(uid)
    assert found == {
        f"toolnexus:mcp.json::{prefix}*": f"gw{i % 2}" for i, prefix in enumerate(PREFIXES)
    }


@pytest.mark.parametrize("rule", ["patience", "grace"])
def test_a_worker_that_never_lists_its_share_leaves_it_to_the_others(
    tmp_path: Path, rule: str
) -> None:
    log: list[tuple[str, str]] = []
    # Past patience (a dead worker), or no sign of it on this file for a grace (it is
    # listing a target of its own, perhaps waiting for this worker's share of that).
    entries, running = _list(
        tmp_path, 0, log, **{rule: 0.2 if rule == "grace" else time.monotonic() + 0.2}
    )
    assert sorted(running) == [0, 1, 2, 3, 4]  # gw1 never came: gw0 listed its share too
    assert len(log) == len(NAMES)
    assert [entry["name"] for entry in entries] == NAMES


def test_a_worker_seen_on_the_file_is_left_its_share_past_the_grace(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    other = SharedListings(tmp_path, "gw1")
    beta = other.take(server_key("servers/mcp.json", "beta"))
    assert isinstance(beta, Claim)

    def slow_gw1() -> None:  # holds beta past gw0's grace, then lists its share
        time.sleep(0.6)
        Starts("gw1", log)([1])
        beta.publish("mcp.json", json.dumps({"name": "beta", "tools": []}).encode(), server="beta_")
        delta = other.take(server_key("servers/mcp.json", "delta"))
        assert isinstance(delta, Claim)
        Starts("gw1", log)([3])
        delta.publish(
            "mcp.json", json.dumps({"name": "delta", "tools": []}).encode(), server="delta_"
        )

    thread = threading.Thread(target=slow_gw1)
    thread.start()
    _, running = _list(tmp_path, 0, log, grace=0.2)
    thread.join()
    assert sorted(running) == [0, 2, 4]
    assert sorted(log) == sorted((name, f"gw{i % 2}") for i, name in enumerate(NAMES))


def test_a_server_held_by_a_worker_that_never_publishes_ends_in_a_clear_error(
    tmp_path: Path,
) -> None:
    held = SharedListings(tmp_path, "gw1").take(server_key("servers/mcp.json", "beta"))
    assert isinstance(held, Claim)
    with pytest.raises(NotListed, match="'beta'"):
        _list(tmp_path, 0, [], patience=time.monotonic(), limit=0.3)
    held.release()


def test_a_start_that_fails_releases_its_servers_for_another_worker(tmp_path: Path) -> None:
    log: list[tuple[str, str]] = []
    with pytest.raises(RuntimeError, match="went away"):
        _list(tmp_path, 0, log, start=Starts("gw0", log, fails=True))
    entries, running = _list(tmp_path, 1, log, patience=time.monotonic())
    assert sorted(running) == [0, 1, 2, 3, 4]  # nothing was left held or half listed
    assert json.loads(json.dumps(entries)) == entries


@pytest.mark.parametrize(
    ("workerinput", "share"),
    [
        (None, (0, 1)),
        ({"workerid": "gw3", "workercount": 4}, (3, 4)),
        ({"workerid": "gw5", "workercount": 2}, (1, 2)),
    ],
)
def test_share_of_reads_the_worker_and_the_count(workerinput: Any, share: tuple[int, int]) -> None:
    assert share_of(workerinput) == share
