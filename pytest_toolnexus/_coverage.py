"""What coverage cannot see in a run: the processes the tools of Python targets run in.

Under process isolation (the default) a Python target is imported, and its tools
called, in sandboxed processes the kit starts. They get none of coverage's
variables and cannot write its data files, so ``pytest --cov`` (pytest-cov) and
``coverage run -m pytest`` measure none of the tools' lines, and coverage says only
"No data was collected" or "Module ... was never imported". The run's summary says
why, and what measures them.

Imports only the standard library: it asks coverage nothing unless coverage is
already imported.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["measuring", "unmeasured_line"]


def measuring(config: Any) -> bool:
    """Whether coverage measures this pytest process: pytest-cov given ``--cov`` (it
    registers its plugin as ``_cov`` only then) and not ``--no-cov``, or a coverage
    started before pytest (``coverage run -m pytest``)."""
    if config.pluginmanager.hasplugin("_cov") and not config.getoption("no_cov", False):
        return True
    coverage = sys.modules.get("coverage")
    current = getattr(getattr(coverage, "Coverage", None), "current", None)
    return callable(current) and current() is not None


def unmeasured_line(targets: Iterable[str]) -> str | None:
    """The summary's line for the Python targets whose tools coverage did not see."""
    names = list(dict.fromkeys(targets))
    if not names:
        return None
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (
        f"coverage: the tools of {shown} ran in sandboxed processes, which coverage does"
        " not measure; --toolnexus-isolation none calls them in pytest's process, where it"
        " does (uncontained)"
    )
