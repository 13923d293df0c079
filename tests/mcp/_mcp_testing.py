"""Where the test servers live and how to start them (imported by the MCP test modules)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolnexus_conformance._model import Verdict
    from toolnexus_conformance._options import RunOptions
    from toolnexus_conformance.live._loop import BackgroundLoop

    from toolnexus_ref.mcp import McpSource

SERVERS = Path(__file__).parent / "servers"
PYTHON = sys.executable
#: Generous: each SDK server imports the mcp package (~1 s) and tests may run in parallel.
START = 20.0


def server_command(script: str, *args: str) -> list[str]:
    return [PYTHON, str(SERVERS / script), *args]


def run_checks(
    loop: BackgroundLoop, source: McpSource, select: list[str], options: RunOptions | None = None
) -> list[Verdict]:
    """The selected checks on every tool of ``source``, as one target ``t``."""
    from toolnexus_conformance._runner import check_subjects
    from toolnexus_conformance._subject import read_subjects

    subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
    return check_subjects(
        subjects,
        "t",
        select=select,
        loop=loop,
        options=options,
        target_extra=source.conformance_extra(),
    )


def run_server_checks(
    loop: BackgroundLoop, command: list[str], select: list[str], options: RunOptions | None = None
) -> list[Verdict]:
    """The selected checks on every tool of the stdio server ``command`` starts, as one
    target ``t``; the server closed after."""
    from toolnexus_ref.mcp import open_stdio

    source = loop.run(open_stdio(command, timeout=START), timeout=60)
    try:
        return run_checks(loop, source, select, options)
    finally:
        loop.run(source.close(), timeout=30)
