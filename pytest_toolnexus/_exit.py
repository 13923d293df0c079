"""The interpreter's exit without a last sweep of the garbage collector over the suites.

Once the MCP SDK, pydantic's models and hypothesis are loaded, the interpreter's
finalisation (its collections over some hundred thousand objects as the modules
are torn down) takes half a second or more after the last line is printed, about
a tenth of a one-server run. Frozen objects (``gc.freeze``) are left out of every
later collection, so the process ends as soon as the ``atexit`` handlers have run.

Only under ``--toolnexus-only``, where the process runs the kit's items alone: a
project's own tests may count on finalisers Python runs at exit in practice.
Nothing is lost there that Python promises: objects still alive when the interpreter
exits are not guaranteed to be finalised (the data model's note on ``__del__``),
reference counting still frees what is not in a cycle, and what becomes garbage
after the freeze is collected as before.
"""

from __future__ import annotations

import atexit
import gc

__all__ = ["skip_exit_collection"]

_registered = False


def skip_exit_collection() -> None:
    """Freeze the objects alive at exit, once per process (``atexit`` runs it first)."""
    global _registered
    if not _registered:
        _registered = True
        atexit.register(gc.freeze)
