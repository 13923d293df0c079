"""The loaded modules' constants are scanned before a worker forks, not in each tool's process.

Hypothesis scans every loaded module for constants at the first draw that wants
one, lazily; the worker's warm-up search may never want one, and every tool's
process then made the whole scan itself (0.13-0.26 s of CPU per tool).
"""

from __future__ import annotations

import sys

from hypothesis.internal.conjecture import providers
from toolnexus_conformance.live import _search


def test_after_the_scan_a_first_draw_finds_nothing_new_to_scan() -> None:
    _search.scan_constants()
    # What hypothesis compares at each draw: unchanged, so a forked process scans nothing.
    assert providers._sys_modules_len == len(sys.modules)
