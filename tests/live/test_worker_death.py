"""A tool's answer is not taken while its worker lies dead unseen.

A tool's process has a process group of its own and outlives a worker it killed;
the worker's listener sees the death only when it next polls. A tool's watcher
that took the answer (or the end of its socket) first would miss the kill. So the
watcher asks the worker process itself, and waits for the listener to say how it
ended; and the listener marks the worker gone before it wakes the tools' watchers.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from toolnexus_conformance.process._isolation import _Job


def _ended_worker() -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process


def test_a_dead_worker_is_seen_before_its_listener_says_so() -> None:
    gone = threading.Event()
    job = _Job(1, generation=1, gone=gone, worker=_ended_worker())
    said = threading.Timer(0.2, gone.set)  # the listener's next poll
    said.start()
    try:
        assert job.worker_died()
        assert gone.is_set()  # it waited for the listener, which records how it ended
    finally:
        said.cancel()


def test_a_live_worker_is_not_dead() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert not _Job(1, gone=threading.Event(), worker=process).worker_died()
        assert not _Job(2).worker_died()  # no worker known: in-process
    finally:
        process.kill()
        process.wait()
