"""One ``ast.parse`` at a time in this process, on the Pythons that need it.

CPython before 3.13 keeps the recursion depth of its AST-to-object conversion in
state shared by all threads, so two threads parsing at once can fail with
"SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
A live run parses from several threads: hypothesis reads the loaded modules'
constants on its first search (on the warm-up thread), while target loading imports
modules that pytest's assertion rewriting, pydantic or the target itself parse.
Without this lock one of them fails now and then, and the failure lands on whatever
was loading: a false finding against a correct server. Parsing is short, so
serialising it costs nothing measurable.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from typing import Any

_lock = threading.RLock()
_NEEDED = sys.version_info < (3, 13)


def install() -> None:
    """Wrap ``ast.parse`` in one process-wide lock (once; a no-op where not needed)."""
    if not _NEEDED or getattr(ast.parse, "_toolnexus_locked", False):
        return
    original = ast.parse

    @functools.wraps(original)
    def parse(*args: Any, **kwargs: Any) -> Any:
        with _lock:
            return original(*args, **kwargs)

    parse._toolnexus_locked = True  # type: ignore[attr-defined]
    ast.parse = parse
