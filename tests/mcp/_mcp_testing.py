"""Where the test servers live and how to start them (imported by the MCP test modules)."""

from __future__ import annotations

import sys
from pathlib import Path

SERVERS = Path(__file__).parent / "servers"
PYTHON = sys.executable
#: Generous: each SDK server imports the mcp package (~1 s) and tests may run in parallel.
START = 20.0


def server_command(script: str, *args: str) -> list[str]:
    return [PYTHON, str(SERVERS / script), *args]
