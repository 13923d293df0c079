"""Every python example in docs/fake-llms.md runs, in order, in one namespace; the
blocks that show a test file run in a real pytest session."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).parents[2] / "docs" / "fake-llms.md"
_BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
_FILE = re.compile(r"^# (test_\w+)\.py\n")


def test_doc_examples_run() -> None:
    blocks = [b for b in _BLOCKS if not _FILE.match(b)]
    assert len(blocks) >= 6
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)


def test_doc_test_files_pass(pytester: pytest.Pytester) -> None:
    files = {m[1]: b for b in _BLOCKS if (m := _FILE.match(b))}
    assert files
    pytester.makepyfile(**files)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=sum(b.count("\ndef test_") for b in files.values()))
