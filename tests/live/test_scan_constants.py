"""The loaded modules' constants are scanned before a worker forks, not in each tool's process.

Hypothesis scans every loaded module for constants at the first draw that wants
one, lazily; the worker's warm-up search may never want one, and every tool's
process then made the whole scan itself (0.13-0.26 s of CPU per tool).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis.internal.conjecture import providers
from toolnexus_conformance.live import _search


def test_after_the_scan_a_first_draw_finds_nothing_new_to_scan() -> None:
    _search.scan_constants()
    # What hypothesis compares at each draw: unchanged, so a forked process scans nothing.
    assert providers._sys_modules_len == len(sys.modules)


#: Run in a fresh interpreter: what a process scanned stays scanned, so the suite's own
#: process (which ran searches before this test) cannot show what a first scan takes.
_FIRST_SCAN = """
import sys
from hypothesis.internal.conjecture import providers
from hypothesis.internal.constants_ast import constants_from_module, is_local_module_file
from toolnexus_conformance.live import _explorations, _search  # noqa: F401
import users_tool  # a module of the user's, with a literal of its own

_search.scan_constants()
local = set(providers._local_constants.strings)
kit, others = set(), set()
for name, module in list(sys.modules.items()):
    if getattr(module, "__file__", None) is None or not is_local_module_file(module.__file__):
        continue
    found = set(constants_from_module(module).strings)
    (kit if name.partition(".")[0] in _search.KIT_PACKAGES else others).update(found)
print(len(kit), len(local & (kit - others)), "own-literal-7f3a" in local)
"""


def test_the_kits_own_literals_are_never_drawn_as_a_tools_arguments(tmp_path: Path) -> None:
    """Hypothesis takes modules outside site-packages for the user's code and draws their
    literals; with the kit installed from a checkout (as here) its own strings would be
    drawn as a tool's arguments, and a seed would draw other arguments than with the
    kit installed from a wheel. The user's own modules are still scanned."""
    (tmp_path / "users_tool.py").write_text('WORD = "own-literal-7f3a"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_SCAN],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    kit, drawn, users = done.stdout.split()
    assert int(kit) > 100  # the kit's modules are local here: the test can tell
    assert drawn == "0"
    assert users == "True"
