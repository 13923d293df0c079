"""Every ```python block in the user docs runs, so the docs cannot rot.

The blocks of a page run in order in one namespace, as a reader would type them
(``_docs_page.py``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from _docs_page import BLOCK, blocks, run_page
from _sessions import RunningSession, SessionsByKey, early

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Runs one page's blocks in an interpreter of its own (see its docstring).
PAGE_RUNNER = Path(__file__).with_name("_docs_page.py")
#: Pages whose examples need pytest fixtures, run by their own tests instead.
RUN_ELSEWHERE = {"fake-llms.md": "tests/fakes/test_fake_llm_docs.py"}
#: Pages run in a fresh interpreter, started early: most of their time goes to importing
#: five LLM SDKs (litellm alone takes seconds) or to waiting for the server they start.
#: The other pages import little that the tests do not, and a fresh interpreter would
#: import it all again for each of them.
RUN_IN_AN_INTERPRETER_OF_THEIR_OWN = {"fake-llms-endpoints.md", "mcp.md"}
#: The longest a page run in an interpreter of its own may take, imports included.
PAGE_TIMEOUT = 180


def _pages() -> list[Path]:
    return [p for p in sorted(DOCS.glob("*.md")) if blocks(p)]


def _run_page(folder: Path, name: str) -> RunningSession:
    """The page's blocks, run in ``folder``: its working directory and the folder its
    scratch folders are made in (the user's ``HOME`` is kept: no page writes there)."""
    return RunningSession(
        [sys.executable, str(PAGE_RUNNER), str(DOCS / name)], folder, PAGE_TIMEOUT
    )


@early
def pages_run(folder: Path) -> SessionsByKey[str]:
    """The pages run in interpreters of their own, by name, each in a folder of its own."""
    return SessionsByKey(folder, _run_page, ahead=sorted(RUN_IN_AN_INTERPRETER_OF_THEIR_OWN))


@pytest.mark.parametrize(
    "page",
    [p for p in _pages() if p.name not in RUN_IN_AN_INTERPRETER_OF_THEIR_OWN],
    ids=lambda p: p.name,
)
def test_docs_examples_run(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if page.name in RUN_ELSEWHERE:
        assert (DOCS.parent / RUN_ELSEWHERE[page.name]).is_file()
        return
    # A page makes its scratch folders with ``tempfile``, as a reader would, and leaves
    # them for the system to clear: under the test, they are made in its own folder.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # What a page sets in the environment (a token its example reads) ends with it.
    with mock.patch.dict(os.environ):
        run_page(page)


@pytest.mark.parametrize("name", sorted(RUN_IN_AN_INTERPRETER_OF_THEIR_OWN))
def test_docs_examples_run_in_an_interpreter_of_their_own(
    name: str, pages_run: SessionsByKey[str]
) -> None:
    ran = pages_run.start(name).result()
    assert ran.ret == 0, f"{name}'s examples failed (exit {ran.ret}):\n{ran.text()}"


def test_readme_fixture_example_passes_in_a_real_session(pytester: pytest.Pytester) -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = next(b for b in BLOCK.findall(readme) if b.startswith("# test_agent.py"))
    pytester.makepyfile(test_agent=block)
    pytester.makeconftest(
        "import pytest\n\n@pytest.fixture\ndef anyio_backend():\n    return 'asyncio'\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
