"""Shared tool modules for pytester runs of the plugin."""

from __future__ import annotations

import pytest
from _plugin_tools import TOOLS_MODULE


@pytest.fixture
def tools_module(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester whose sys.path holds ``mytools`` with good, mixed and factory targets."""
    pytester.makepyfile(mytools=TOOLS_MODULE)
    pytester.syspathinsert()
    return pytester
