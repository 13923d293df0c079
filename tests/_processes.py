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


def processes_marked(marker: str) -> list[str]:
    """Command lines of the processes whose environment carries
    ``TOOLNEXUS_TEST_RUN=marker`` (Linux /proc), once none is left or 5 s on: a killed
    process may take a moment to be reaped."""
    needle = f"TOOLNEXUS_TEST_RUN={marker}".encode()
    deadline = time.monotonic() + 5.0
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or entry.name == str(os.getpid()):
                continue
            try:
                if needle in (entry / "environ").read_bytes():
                    if "\nState:\tZ" in (entry / "status").read_text():
                        continue  # a zombie is gone already; its parent reaps it
                    found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)
