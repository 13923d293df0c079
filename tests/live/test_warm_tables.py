"""What a machine with an empty cache pays before its first search: the tables hypothesis builds.

Every CI job starts with one. hypothesis builds a codec's table by encoding every
code point (1.3 s of CPU, 200 MiB at its peak); the argument generator's alphabet is
set by category, whose table costs a tenth of that.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

WARM = (
    "from toolnexus_conformance import RunOptions\n"
    "from toolnexus_conformance.live._search import warm_generation\n"
    "warm_generation(RunOptions())\n"
)


def test_warming_the_generator_builds_no_codec_table(tmp_path: Path) -> None:
    env = {**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", WARM], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    tables = sorted(p.name for p in tmp_path.rglob("*.json.gz"))
    assert tables == ["charmap.json.gz"], tables
