"""What a machine with an empty cache pays before its first search: the tables hypothesis builds.

Every CI job starts with one. hypothesis builds a codec's table by encoding every
code point (1.3 s of CPU, 200 MiB at its peak, and again in each process that draws
before the table is written); the argument generator's alphabet is set by category,
whose table costs a tenth of that.
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

#: Draws arguments for an object with a string of every format the generator knows and
#: room for keys it invents: the strategies a regex builds.
DRAW = (
    "from hypothesis import HealthCheck, given, settings\n"
    "from toolnexus_conformance.arguments import args_for\n"
    "from toolnexus_conformance.arguments._scalars import _FORMAT_REGEXES\n"
    "schema = {'type': 'object', 'additionalProperties': True, 'minProperties': 1,\n"
    "          'properties': {n: {'type': 'string', 'format': n} for n in _FORMAT_REGEXES}}\n"
    "@settings(max_examples=60, database=None, derandomize=True, deadline=None,\n"
    "          suppress_health_check=list(HealthCheck))  # a loaded machine draws slowly\n"
    "@given(args_for(schema))\n"
    "def draw(args):\n"
    "    pass\n"
    "draw()\n"
)


def _tables_written(code: str, storage: Path) -> list[str]:
    env = {**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(storage)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return sorted(p.name for p in storage.rglob("*.json.gz"))


def test_warming_the_generator_builds_no_codec_table(tmp_path: Path) -> None:
    assert _tables_written(WARM, tmp_path) == ["charmap.json.gz"]


def test_formats_and_invented_keys_build_no_codec_table(tmp_path: Path) -> None:
    """A regex without an alphabet draws from ``codec="utf-8"``: every one the generator
    builds (formats, the names of keys it invents) takes the category alphabet."""
    assert _tables_written(DRAW, tmp_path) == ["charmap.json.gz"]
