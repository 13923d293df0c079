"""Coverage of the tools' processes: pytest's measurement carried into them and combined back.

Under process isolation (the default) a Python target is imported, and its tools
called, in sandboxed processes the kit starts, which ``pytest --cov`` (pytest-cov)
and ``coverage run -m pytest`` never start. So the session hands its measurement on
(``ToolCoverage``): coverage's configuration, serialized as coverage serializes it
for its own subprocesses, with the data file moved into a folder of the session's
that is bound writable into every sandbox. A Python target's worker starts measuring
before it imports the target, and it and each tool's process save there
(``toolnexus_conformance.process._coverage``); a Python MCP stdio server measures
itself through coverage's own start-up hook and saves as it exits, so under coverage
the servers are closed before the combining. At the end of the test loop, before
pytest-cov combines and reports, the files are combined into the measurement
running in pytest's process, whose report then shows the tools' lines.

A coverage that cannot serialize its configuration (before 7.10) cannot be carried:
the summary then says what it did not see (``unmeasured_line``).

Imports only the standard library: it asks coverage nothing unless coverage is
already imported.
"""

from __future__ import annotations

import copy
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["SERVER_VARIABLE", "ToolCoverage", "carried", "measuring", "unmeasured_line"]

#: Coverage's own variable for a process to measure itself from its start.
SERVER_VARIABLE = "COVERAGE_PROCESS_CONFIG"


def measuring(config: Any) -> bool:
    """Whether coverage measures this pytest process: pytest-cov given ``--cov`` (it
    registers its plugin as ``_cov`` only then) and not ``--no-cov``, or a coverage
    started before pytest (``coverage run -m pytest``)."""
    if config.pluginmanager.hasplugin("_cov") and not config.getoption("no_cov", False):
        return True
    return _running() is not None


def carried(config: Any) -> bool:
    """Whether this run's measurement reaches the tools' processes (``ToolCoverage``).

    The same answer in every process of the run: xdist's controller, which writes
    the summary, and its workers, which start the tools' processes.
    """
    if not measuring(config):
        return False
    coverage = sys.modules.get("coverage")
    config_class = getattr(getattr(coverage, "config", None), "CoverageConfig", None)
    return callable(getattr(config_class, "serialize", None))


def _running() -> Any | None:
    """The measurement running in this process, if coverage is imported and started."""
    coverage = sys.modules.get("coverage")
    current = getattr(getattr(coverage, "Coverage", None), "current", None)
    return current() if callable(current) else None


class ToolCoverage:
    """The folder the tools' processes save their coverage data in, and what they are told.

    ``variables`` go to Python targets' workers (``Sandbox.passed``) and
    ``server_variables`` to MCP stdio servers (``Sandbox.passed_to_servers``); ``folder``
    is bound writable into every sandbox. ``combine`` adds what was saved to the
    measurement running in pytest's process.
    """

    def __init__(self, workers: str, servers: str, folder: Path) -> None:
        self.folder = folder
        from toolnexus_conformance.process._coverage import VARIABLE

        #: For a Python target's worker, which starts measuring before its import.
        self.variables = {VARIABLE: workers}
        #: For MCP stdio servers: coverage's own start-up hook (``a1_coverage.pth``, in an
        #: environment with coverage installed) measures a Python server given it.
        self.server_variables = {SERVER_VARIABLE: servers}
        #: Why the saved data could not be combined (``None``: it was, or there was none).
        self.problem: str | None = None

    @classmethod
    def start(cls, config: Any) -> ToolCoverage | None:
        """The carried measurement, its folder made; ``None`` if nothing can be carried."""
        running = _running()
        if running is None or not carried(config):
            return None
        settings = copy.copy(running.config)
        folder = Path(tempfile.mkdtemp(prefix="toolnexus-coverage-"))
        # The file's own name, as pytest-cov combines files of its name: into the folder.
        settings.data_file = str(folder / Path(settings.data_file).name)
        settings.parallel = True  # a file per process, each named by its process
        try:
            workers = settings.serialize()
            # A server that outstays its stdin's end is sent SIGTERM: saved then too.
            settings.sigterm = True
            return cls(workers, settings.serialize(), folder)
        except Exception:  # a setting coverage cannot serialize: nothing is carried
            shutil.rmtree(folder, ignore_errors=True)
            return None

    def apply(self, sandbox: Any) -> None:
        """Give the sandbox's processes the settings, and the folder to save in."""
        sandbox.writable = (*sandbox.writable, self.folder)
        sandbox.passed = {**sandbox.passed, **self.variables}
        sandbox.passed_to_servers = {**sandbox.passed_to_servers, **self.server_variables}

    def combine(self) -> int:
        """Add every file the tools' processes saved to the running measurement, and
        remove them; how many there were."""
        running = _running()
        saved = [str(p) for p in self.folder.iterdir() if p.is_file()]
        if running is None or not saved:
            return 0
        try:
            running.combine(saved, strict=False, keep=False)
        except Exception as exc:  # coverage's own refusal, said in the summary
            self.problem = (
                "coverage: what the tools' processes measured could not be combined:"
                f" {type(exc).__name__}: {exc}"
            )
            return 0
        return len(saved)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


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
