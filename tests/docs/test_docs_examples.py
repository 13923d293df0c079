"""Every ```python block in the user docs runs, so the docs cannot rot.

The blocks of a page run in order in one namespace, as a reader would type them.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import tempfile
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: A block whose first line names a file (``# conftest.py``, ``# test_x.py``) shows a file
#: the user writes for pytest to load; pytester tests cover those.
_SHOWS_A_FILE = re.compile(r"^\s*# (conftest|test_\w+)\.py\n")
#: Pages whose examples need pytest fixtures, run by their own tests instead.
RUN_ELSEWHERE = {"fake-llms.md": "tests/fakes/test_fake_llm_docs.py"}


def _pages() -> list[Path]:
    return [p for p in sorted(DOCS.glob("*.md")) if _BLOCK.search(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_docs_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if page.name in RUN_ELSEWHERE:
        assert (DOCS.parent / RUN_ELSEWHERE[page.name]).is_file()
        return
    # A page makes its scratch folders with ``tempfile``, as a reader would, and leaves
    # them for the system to clear: under the test, they are made in its own folder.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for index, block in enumerate(_BLOCK.findall(page.read_text(encoding="utf-8"))):
        if _SHOWS_A_FILE.match(block):
            continue
        # Top-level ``await`` is allowed, as in ``python -m asyncio``.
        code = compile(block, f"{page.name}#{index}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if inspect.iscoroutine(result):
            asyncio.run(result)


def test_readme_fixture_example_passes_in_a_real_session(pytester: pytest.Pytester) -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = next(b for b in _BLOCK.findall(readme) if b.startswith("# test_agent.py"))
    pytester.makepyfile(test_agent=block)
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture\ndef anyio_backend():\n    return 'asyncio'\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
