"""Run the ```python blocks of one docs page, as a reader would type them.

``python _docs_page.py PAGE``, in a fresh interpreter whose working directory is the
page's own scratch folder: the blocks run in order, in one namespace, and a page's
scratch folders (``tempfile``) are made in that folder. It exits 0 when every block
ran; otherwise it prints which block failed, with its traceback, and exits 1. An
exception Python could not raise (in a ``__del__``, a callback: ``sys.unraisablehook``)
while the blocks ran fails the page too, as it fails a test of our suite.

In a fresh interpreter, as a reader starts one, a page cannot lean on what an earlier
page or test imported, set or left running, and what it sets (``os.environ``) reaches
nothing after it. ``run_page`` is also what a test calls in its own process.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import inspect
import linecache
import re
import sys
import tempfile
import traceback
from pathlib import Path

BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: A block whose first line names a file (``# conftest.py``, ``# test_x.py``) shows a file
#: the user writes for pytest to load; pytester tests cover those.
SHOWS_A_FILE = re.compile(r"^\s*# (conftest|test_\w+)\.py\n")


def blocks(page: Path) -> list[str]:
    """The page's ```python blocks, in order."""
    return BLOCK.findall(page.read_text(encoding="utf-8"))


def run_page(page: Path) -> None:
    """Run the page's blocks, except those showing a file, in one namespace.

    Raises what a block raised, noting the block on it (``BlockFailed``).
    """
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for index, block in enumerate(blocks(page)):
        if SHOWS_A_FILE.match(block):
            continue
        name = f"{page.name}#{index}"
        # Registered so that a traceback shows the block's failing line itself.
        linecache.cache[name] = (len(block), None, block.splitlines(keepends=True), name)
        try:
            # Top-level ``await`` is allowed, as in ``python -m asyncio``.
            code = compile(block, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if inspect.iscoroutine(result):
                asyncio.run(result)
        except BaseException as exc:
            raise BlockFailed(page, index) from exc


class BlockFailed(Exception):
    """A block of a page raised (its exception is the ``__cause__``)."""

    def __init__(self, page: Path, index: int) -> None:
        super().__init__(f"{page.name}: block {index} (counting the page's python blocks from 0)")
        self.page = page
        self.index = index


def main(argv: list[str]) -> int:
    (page,) = (Path(arg).resolve() for arg in argv)
    tempfile.tempdir = str(Path.cwd())
    unraisable: list[sys.UnraisableHookArgs] = []
    sys.unraisablehook = unraisable.append
    try:
        run_page(page)
    except BlockFailed as failed:
        cause = failed.__cause__
        assert cause is not None
        print(f"{failed} failed:", file=sys.stderr)
        traceback.print_exception(cause, file=sys.stderr)
        return 1
    finally:
        gc.collect()  # what the blocks dropped, finalized while they are still watched
        sys.unraisablehook = sys.__unraisablehook__
    for each in unraisable:
        print(f"{page.name}: an exception was ignored:", file=sys.stderr)
        sys.__unraisablehook__(each)
    return 1 if unraisable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
