"""Every ```python block in the user docs runs, so the docs cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: Blocks that only show configuration a user writes (a conftest hook) are not run.
_SKIP_MARK = "# conftest.py"


def _examples() -> list[tuple[str, str]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for index, block in enumerate(_BLOCK.findall(page.read_text(encoding="utf-8"))):
            if not block.lstrip().startswith(_SKIP_MARK):
                found.append((f"{page.name}#{index}", block))
    return found


@pytest.mark.parametrize(("where", "code"), _examples(), ids=[w for w, _ in _examples()])
def test_docs_example_runs(where: str, code: str) -> None:
    exec(compile(code, where, "exec"), {"__name__": f"docs_{where}"})
