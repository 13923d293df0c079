"""The pytest11 entry point. Imports only the standard library and pytest.

The suites, hypothesis, jsonschema, httpx and mcp load only when asked for: the
conformance run when ``--toolnexus-conformance`` is given, the fixtures when a test
requests one.
"""

from __future__ import annotations

import pytest

from ._distribution import (
    ShardPlugin,
    ToolDistribution,
    add_scaling_options,
    is_xdist_controller,
    read_shard,
    read_shard_costs,
)
from ._options import add_options, read_settings
from ._output_options import add_output_options, read_outputs

#: Fixture modules, and the report masking; each imports only stdlib and pytest until used.
pytest_plugins = [
    "pytest_toolnexus._llm_fixtures",
    "pytest_toolnexus._mcp_fixtures",
    "pytest_toolnexus._masking",
]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import _hookspecs

    pluginmanager.add_hookspecs(_hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)
    add_output_options(parser)
    add_scaling_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "toolnexus: a conformance check item (added by --toolnexus-conformance)"
    )
    if not config.getoption("toolnexus_conformance"):
        return
    settings = read_settings(config)
    outputs = read_outputs(config)
    shard = read_shard(config)
    read_shard_costs(config)  # read once, here: given without a shard, a usage error
    if shard is not None:
        config.pluginmanager.register(ShardPlugin(*shard), "toolnexus-shard")
    if is_xdist_controller(config):
        distribution = ToolDistribution(config, settings.concurrency)
        config.pluginmanager.register(distribution, "toolnexus-distribution")
    from ._prestart import prestart

    # The stdio servers start before the session's modules are imported (``_prestart``).
    serial = not hasattr(config, "workerinput") and not is_xdist_controller(config)
    started = prestart(config, settings, serial=serial)
    from ._outputs import ReportOutputs
    from ._session import ConformanceSession

    try:
        session = ConformanceSession(config, settings, started)
    except BaseException:  # a usage error (a bad arguments file...): nothing will load
        started.close()
        raise
    config.pluginmanager.register(session, "toolnexus-conformance")
    config.pluginmanager.register(ReportOutputs(session, outputs), "toolnexus-outputs")
    if not is_xdist_controller(config):  # its workers collect, and judge the names
        from ._selection import SelectionCheck

        selection = SelectionCheck(settings.select, settings.ignore)
        config.pluginmanager.register(selection, "toolnexus-selection")


def pytest_ignore_collect(collection_path: object, config: pytest.Config) -> bool | None:
    if config.getoption("toolnexus_only") and config.getoption("toolnexus_conformance"):
        return True
    return None
