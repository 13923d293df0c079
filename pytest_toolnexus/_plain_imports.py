"""The kit's two libraries import under pytest as they do everywhere else: unrewritten.

pytest rewrites the asserts of every package of a distribution that declares a
``pytest11`` entry point, and ours ships the reference implementation
(``toolnexus_ref``) and the suites (``toolnexus_conformance``) beside the plugin.
Neither is plugin code and none of their asserts speaks to a user, yet rewritten,
their modules cannot use the bytecode pip compiled at install: pytest reads, parses,
rewrites and compiles each one again, and caches the result only where it may write
(never under ``PYTHONDONTWRITEBYTECODE``, never in a read-only environment), so a
fresh CI machine pays it in its first pytest process, and in every one where
bytecode is not written. ``PYTEST_DONT_REWRITE`` opts a module out only after pytest
has read and parsed it; this finder, ahead of pytest's hook, hands the two packages
the spec Python's own path finder gives them, as it would without pytest.

The plugin itself (``pytest_toolnexus``) stays pytest's: its fixture modules are
rewritten as any plugin's are.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

#: Top-level packages imported as Python imports them, never rewritten.
LIBRARIES = frozenset({"toolnexus_ref", "toolnexus_conformance"})


class LibraryFinder:
    """Finds the libraries' modules where ``PathFinder`` does; anything else, not at all.

    Where the path finder does not find one (the top-level package of an editable
    install, found by the install's own finder), the import goes on down
    ``sys.meta_path`` as before.
    """

    @classmethod
    def find_spec(
        cls,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] not in LIBRARIES:
            return None
        return PathFinder.find_spec(fullname, path, target)


def import_libraries_plainly() -> None:
    """Put ``LibraryFinder`` first on ``sys.meta_path``, once."""
    if LibraryFinder not in sys.meta_path:
        sys.meta_path.insert(0, LibraryFinder)
