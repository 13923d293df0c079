"""``assert_conforms``: the suites inside an ordinary test, as one readable assertion."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._explain import explain
from ._model import Verdict
from ._options import RunOptions
from ._runner import check_tools

__all__ = ["assert_conforms", "failures"]


def failures(verdicts: Sequence[Verdict], *, strict: bool = False) -> list[Verdict]:
    """Verdicts that fail the run: errors always, warnings under ``strict``."""
    return [v for v in verdicts if v.fails_run(strict=strict)]


def assert_conforms(
    tools: Any,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    strict: bool = False,
    options: RunOptions | None = None,
) -> list[Verdict]:
    """Run the suites on a tool, a list or a toolkit; raise one ``AssertionError`` listing every failure.

    Returns all verdicts when nothing fails, so a test can look further.
    """
    if options is None:
        options = RunOptions(strict=strict)
    verdicts = check_tools(tools, select=select, ignore=ignore, options=options)
    failed = failures(verdicts, strict=strict or options.strict)
    if failed:
        shown = "\n\n".join(explain(v) for v in failed)
        raise AssertionError(f"{len(failed)} conformance check(s) failed:\n\n{shown}")
    return verdicts
