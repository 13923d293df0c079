"""Coverage in a Python target's processes, when the session measures its own.

``pytest --cov`` (pytest-cov) or ``coverage run -m pytest`` measure pytest's process;
a target's tools run in a worker and in a process per tool, which coverage never
started. The session passes its coverage settings in (``VARIABLE``: coverage's
serialized configuration, its data file in a folder bound writable into the
sandbox), the worker starts measuring just before it imports the target, and every
process saves what it measured while it can: the worker once the target is loaded,
a tool's process before it sends its verdicts (it ends by ``SIGKILL``, which no
exit handler outlives). The session combines the files into its own data.

The worker's half of that, standard library only until the variable is there.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["VARIABLE", "save", "start"]

#: The variable carrying coverage's serialized configuration into a target's worker.
VARIABLE = "TOOLNEXUS_COVERAGE_CONFIG"
#: The measurement this process started (empty: the session asked for none).
_measuring: list[Any] = []


def start() -> None:
    """Measure from here on, as the session does, if it asked (``VARIABLE``).

    The variable is removed first: the tools never see it. Coverage's own start-up
    for subprocesses does the work, from the configuration as coverage serialized it.
    """
    config = os.environ.pop(VARIABLE, None)
    if not config or _measuring:
        return
    try:
        import coverage
    except ImportError:  # the session has it; a worker in another environment may not
        return
    os.environ["COVERAGE_PROCESS_CONFIG"] = config
    try:
        started = coverage.process_startup()
    except Exception:  # a measurement that cannot start leaves the run as it was
        started = None
    finally:
        del os.environ["COVERAGE_PROCESS_CONFIG"]
    if started is not None:
        _measuring.append(started)


def save() -> None:
    """Write what this process has measured so far (a forked process, to a file of its own)."""
    if not _measuring:
        return
    from coverage import Coverage

    # The one running now: coverage's ``patch = fork`` starts another in a forked process.
    running = Coverage.current() or _measuring[0]
    try:
        running.save()
    except Exception:  # pragma: no cover - a full disk: the run's verdicts still count
        pass
