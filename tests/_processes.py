"""Whether a process the tests started (or had started) still runs."""

from __future__ import annotations

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie nobody has reaped yet does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's: it exists
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: only its signal says whether it is gone
    return state not in ("Z", "X")


def wait_ended(pid: int, within: float = 30) -> None:
    """Until process ``pid`` has ended; fails the test if it still runs ``within`` seconds on."""
    end = time.monotonic() + within
    while alive(pid):
        if time.monotonic() > end:
            raise AssertionError(f"process {pid} still runs after {within}s")
        time.sleep(0.02)
