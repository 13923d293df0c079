"""One import of a heavy package at a time among the kit's own threads.

A live session imports on several threads at once: the target loads import the
MCP SDK (pydantic, httpx, anyio) or a Python target run in pytest's process, while
the warm-up imports hypothesis and jsonschema, and a new search thread reaches into
hypothesis. Python's per-module
import locks do not make that safe on the Pythons the kit supports: when two
threads' imports meet (a module each needs, or a package and its submodule taken in
opposite orders), its deadlock detection hands one of them the other's module half
made (python/cpython#83065, mended only in 3.15). Traced on xdist workers under
load: hypothesis's import failed on "partially initialized module
'annotated_types' has no attribute 'Timezone'" while a load imported pydantic, and
the modules it left behind broke every search of that process ("module
'hypothesis' has no attribute 'core'").

Those imports are CPU work under the GIL, so taking them one at a time costs
little. pytest's own thread takes the turn to collect (the project's conftests and
test modules: ``pytest_toolnexus._session``); what stays outside it is an import
made by a test while it runs. The modules hypothesis and pydantic share are
imported before any of these threads start
(``pytest_toolnexus._session._import_shared_modules``).
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

__all__ = ["IMPORTS", "import_whole"]

#: Held by the kit's threads while they import a heavy package, and by the warm-up
#: for all of its work (whose first search imports more of hypothesis lazily).
#: Re-entrant: the warm-up imports through ``import_whole`` while holding it.
IMPORTS = threading.RLock()


def import_whole(name: str) -> ModuleType:
    """``name``, imported under ``IMPORTS`` unless it already is, whole.

    A module found in ``sys.modules`` may still be executing on another thread (it
    is put there first); only one that has finished skips the lock, so a thread
    never waits for work already done, nor goes on with a module half made.
    """
    module = sys.modules.get(name)
    if module is not None and not _initializing(module):
        return module
    with IMPORTS:
        return importlib.import_module(name)


def _initializing(module: ModuleType) -> bool:
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))
