"""Live-check tests: helpers in this folder (``_corpus``) import as top-level modules."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
