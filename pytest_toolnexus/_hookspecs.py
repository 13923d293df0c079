"""Hooks a project's conftest.py may implement."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_toolnexus_targets(config: pytest.Config) -> list[Any] | None:
    """Return conformance targets: spec strings or tool objects (a tool, a list, a toolkit).

    Every implementation's targets are used, after those from the command line and ini.
    """


@pytest.hookspec
def pytest_toolnexus_arguments(config: pytest.Config, target: str, tool: str) -> Any | None:
    """Return arguments for one tool, tried before the generated ones; or ``None``.

    Called at collection once per tool of every target that loaded, with the
    target's label and the tool's name. Return a ``ToolArguments``, or a mapping
    ``{"examples": [{...}, ...], "values": {"property": [...]}}`` where a property's
    values may also be a hypothesis strategy: it is drawn in pytest's process,
    ``--toolnexus-examples`` distinct values, the same for the same seed. Every
    implementation's result is used, after the ``--toolnexus-arguments`` file's.
    State prepared in ``pytest_configure`` (a repository, a database) is available.
    """
