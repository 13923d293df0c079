"""Start-up does only the work the run needs: what is warmed, and where."""

from __future__ import annotations

import pytest
from toolnexus_conformance.targets import TargetKind

from pytest_toolnexus._session import explored_here

PY, STDIO = TargetKind.PYTHON, TargetKind.STDIO


@pytest.mark.parametrize(
    ("kinds", "isolated", "hooked", "expected"),
    [
        ([STDIO], True, False, True),  # an MCP server's tools are called from pytest's process
        ([PY, PY], True, False, False),  # each worker process warms itself
        ([PY, STDIO], True, False, True),
        ([PY], False, False, True),  # --toolnexus-isolation none: called here
        ([PY], True, True, True),  # a conftest hook may add any target
        ([], True, False, True),  # targets given only at collection
    ],
)
def test_the_generator_is_warmed_where_tools_are_explored(
    kinds: list[TargetKind], isolated: bool, hooked: bool, expected: bool
) -> None:
    assert explored_here(kinds, isolated=isolated, hooked=hooked) is expected
