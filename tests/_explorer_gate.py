"""Whether the live explorer calls users' arguments (``RunOptions.arguments_for``).

The end-to-end tests of users' arguments (a tool that succeeds only with a real id)
need the explorer to call them; until it reads them they skip, saying so. Once it
does, they run, and a regression there fails them.
"""

from __future__ import annotations

from pathlib import Path

import toolnexus_conformance.live as _live

EXPLORER_READS_ARGUMENTS = any(
    "arguments_for(" in path.read_text(encoding="utf-8")
    for path in Path(_live.__file__).parent.glob("*.py")
)
