"""The folders a server's own command needs to start: shown back, read-only, in its sandbox.

The sandbox hides ``/tmp``, ``/var/tmp``, ``/run`` and the home folder, and shows back
the project and the kit's own Python. A server installed anywhere else under them
(``pipx`` and ``uv tool`` put scripts in ``~/.local/bin`` and environments in
``~/.local``; ``nvm`` puts node in ``~/.nvm``; a package tried out in ``/tmp``) would
be missing inside, and fail to start for a reason that is the run's, not its own.
So the sandbox shows back what the command names: its program, found on ``PATH``
as the shell would, the interpreter its ``#!`` line names, every absolute path
among its arguments, and for each the installation it belongs to (the virtual
environment holding ``pyvenv.cfg``, with the Python it was made from; the folder
holding ``node_modules``; the source checkout, marked by ``pyproject.toml``, ``.git``
and the like, of a script run from one). Everything is read-only, and a hidden folder itself (the
home folder, ``/tmp``) is never shown whole: a script lying directly in it is shown
alone.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

__all__ = ["command_roots", "program_inside", "within"]

#: What marks the top folder of a source checkout.
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "package.json", ".git")
#: The most links followed from a program to its real path (the kernel's own bound is 40).
_MAX_HOPS = 40
#: How much of a script is read to find its ``#!`` line.
_SHEBANG_BYTES = 256


def command_roots(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    *,
    private: Iterable[Path] = (),
) -> list[Path]:
    """The files and folders the command ``argv`` needs to read to start.

    No folder of ``private`` (the hidden folders), nor one above them, is among
    them: a file directly inside one is named alone.
    """
    if not argv:
        return []
    search = (env or {}).get("PATH") or os.environ.get("PATH")
    named: list[Path] = []
    program = _find(argv[0], search, cwd)
    if program is not None:
        named.append(program)
        interpreter = _interpreter(program, search)
        if interpreter is not None:
            named.append(interpreter)
    for arg in argv[1:]:
        if os.path.isabs(arg) and os.path.exists(arg):
            named.append(Path(arg))
    kept = [Path(p).resolve() for p in private]
    roots: dict[Path, None] = {}
    for path in named:
        for each in _hops(path):
            for root in _installation(each, kept):
                roots.setdefault(root)
    return list(roots)


def program_inside(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    *,
    private: Iterable[Path] = (),
    shown: Iterable[Path] | None = None,
) -> list[str]:
    """``argv`` with its program named by its real path when it lies in a private folder,
    but for a virtual environment's own programs.

    The sandbox shows back real paths only: a program reached through a link (pipx's
    ``~/.local/bin/x``, a link into its environment) is missing inside under that name,
    so links are followed. Not past a virtual environment that is shown (``shown``:
    ``command_roots`` unless given): its ``bin/python`` is a link to the Python it was
    made from, and Python finds its environment by the name it was started as. Run by
    its target, a server's Python started without its packages ("No module named ...").
    """
    if not argv:
        return list(argv)
    program = _find(argv[0], (env or {}).get("PATH") or os.environ.get("PATH"), cwd)
    if program is None:
        return list(argv)
    kept = [Path(p).resolve() for p in private]
    if not within(program, kept):
        return list(argv)
    roots = list(shown) if shown is not None else command_roots(argv, env, cwd, private=kept)
    for hop in _hops(program):
        if not hop.is_symlink():
            break
        if within(hop, roots) and any((p / "pyvenv.cfg").is_file() for p in hop.parents):
            return [str(hop), *argv[1:]]
    return [str(program.resolve()), *argv[1:]]


def _hops(path: Path) -> list[Path]:
    """``path`` and each link it leads through, in real folders, to its real path: every
    one of them may lie in an installation the program needs."""
    hops = [path.parent.resolve() / path.name]
    while hops[-1].is_symlink() and len(hops) < _MAX_HOPS:
        target = hops[-1].parent / os.readlink(hops[-1])
        hops.append(target.parent.resolve() / target.name)
    real = path.resolve()
    if real != hops[-1]:
        hops.append(real)
    return [path, *hops] if path != hops[0] else hops


def within(path: Path, folders: Iterable[Path]) -> bool:
    """Whether ``path`` is one of ``folders`` or lies inside one (no link followed)."""
    return any(path == folder or folder in path.parents for folder in folders)


def _find(program: str, search: str | None, cwd: Path | None) -> Path | None:
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) else (cwd or Path.cwd()) / program
        return path if path.exists() else None
    found = shutil.which(program, path=search)
    return Path(found) if found is not None else None


def _interpreter(program: Path, search: str | None) -> Path | None:
    """The interpreter a script's ``#!`` line names (``/usr/bin/env X``: X on the PATH)."""
    try:
        with program.open("rb") as file:
            head = file.read(_SHEBANG_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        return _find(rest[0], search, None) if rest else None
    path = Path(words[0])
    return path if path.is_absolute() and path.exists() else None


def _installation(path: Path, private: list[Path]) -> Iterable[Path]:
    """What to show for ``path``: the installation it lies in, or itself.

    A virtual environment comes with the Python it was made from (``home`` in its
    ``pyvenv.cfg``); a file in a ``node_modules`` tree with the folder holding the
    outermost one, where node looks for its dependencies.
    """
    for parent in path.parents:
        if (parent / "pyvenv.cfg").is_file():
            yield from _shown(parent, private)
            base = _venv_home(parent / "pyvenv.cfg")
            if base is not None:
                yield from _shown(base.parent if base.name == "bin" else base, private)
            return
    modules = [p for p in path.parents if p.name == "node_modules"]
    if modules:
        yield from _shown(modules[-1].parent, private)
        return
    project = _project(path)
    if project is not None and list(_shown(project, private)):
        yield project
        return
    yield from _shown(path if path.is_dir() else path.parent, private, alone=path)


def _project(path: Path) -> Path | None:
    """The source checkout ``path`` lies in: the nearest folder with a project's marker.

    A server run from its checkout (``python ~/src/server/server.py``) reads its own
    modules and data beside and above its script; its checkout is what it was
    installed as.
    """
    for parent in path.parents:
        if any((parent / marker).exists() for marker in PROJECT_MARKERS):
            return parent
    return None


def _shown(folder: Path, private: list[Path], alone: Path | None = None) -> Iterable[Path]:
    """``folder``, unless it is a private folder, one above one, or the root: then only
    ``alone`` (a file), since showing the folder would show the user's secrets too."""
    if folder == Path(folder.anchor) or any(folder == p or folder in p.parents for p in private):
        if alone is not None and alone != folder and not alone.is_dir():
            yield alone
        return
    yield folder


def _venv_home(config: Path) -> Path | None:
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return Path(value.strip())
    return None
