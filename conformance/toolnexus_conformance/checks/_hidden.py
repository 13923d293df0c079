"""The paths of a server's command that the kit's sandbox hides, so that it cannot start.

The sandbox shows ``/tmp``, ``/var/tmp``, ``/run`` and the home folder empty, and binds
back only the folder pytest runs in, the Python environment and the import roots
(``process._sandbox``). A server installed under one of the hidden folders (a venv or
``node_modules`` in ``/tmp``, a script in ``~/.local/bin``) is then missing inside:
its launch fails with "No such file or directory" or "Cannot find module", which is
the run's doing, not the server's.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..process._sandbox import HIDDEN

__all__ = ["hidden_paths", "missing_file"]

#: How a launch says a file it needs is not there: the kernel's ENOENT (Python's
#: wording, Node's code), Node's module loader, Python's "can't open file".
_MISSING = re.compile(
    r"No such file or directory|\bENOENT\b|Cannot find module|can't open file", re.IGNORECASE
)


def missing_file(text: str) -> bool:
    """Whether a server's failure (its reason and stderr tail) says a file was missing."""
    return _MISSING.search(text) is not None


def _under(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _hidden_folders() -> list[Path]:
    folders = [Path(h) for h in HIDDEN if os.path.isdir(h) and not os.path.islink(h)]
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    if home != Path("/") and home.is_dir():
        folders.append(home.resolve())
    return folders


def _shown(cwd: Path | None) -> list[Path]:
    """What the sandbox binds back, as ``Sandbox._readable`` lists it, and the server's cwd."""
    paths = [Path(p) for p in sys.path if p]
    paths += [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    paths += [Path(sys.executable).resolve().parent, Path.cwd()]
    if cwd is not None:
        paths.append(cwd)
    return [p.resolve() for p in paths if p.exists()]


def _named(command: Sequence[str]) -> list[Path]:
    """The existing files and folders a command names: its program (found on PATH when
    given bare) and every absolute path among its arguments."""
    named: list[Path] = []
    if command and os.sep not in command[0]:
        found = shutil.which(command[0])
        if found is not None:
            named.append(Path(found))
    named += [Path(a) for a in command if os.path.isabs(a)]
    return [p.resolve() for p in named if p.exists()]


def hidden_paths(command: Sequence[str], cwd: Path | None = None) -> list[Path]:
    """The paths ``command`` names that the sandbox shows empty or not at all."""
    hidden = _hidden_folders()
    shown = _shown(cwd)
    return [p for p in _named(command) if _under(p, hidden) and not _under(p, shown)]
