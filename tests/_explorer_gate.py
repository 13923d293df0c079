"""Whether the live explorer calls users' arguments (``RunOptions.arguments_for``).

The end-to-end tests of users' arguments (a tool that succeeds only with a real id)
need the explorer to call them; until it reads them they skip, saying so. Once it
does, they run, and a regression there fails them.
"""

from __future__ import annotations

import re
from pathlib import Path

import toolnexus_conformance.live as _live

_READS = re.compile(r"\barguments_for\(|\boptions\.arguments\b")
EXPLORER_READS_ARGUMENTS = any(
    _READS.search(path.read_text(encoding="utf-8"))
    for path in Path(_live.__file__).parent.glob("*.py")
)
