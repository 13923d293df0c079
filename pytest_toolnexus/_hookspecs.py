"""Hooks a project's conftest.py may implement."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_toolnexus_targets(config: pytest.Config) -> list[Any] | None:
    """Return conformance targets: spec strings or tool objects (a tool, a list, a toolkit).

    Every implementation's targets are used, after those from the command line and ini.
    """
