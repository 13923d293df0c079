"""MCP targets where mcp 1.x is installed (as upstream toolnexus requires): a message that helps.

The kit's MCP client needs mcp 2. Where 1.x is installed, the target's one verdict
says what is installed, what needs it, and how to run the kit from an environment
of its own against the same server, instead of advice that would break the user's.
"""

from __future__ import annotations

from importlib import metadata

import pytest
from _kit import run_kit
from toolnexus_conformance.targets import TargetError, TargetKind, TargetSpec, _mcp_missing


def _installed_mcp() -> str | None:
    try:
        return metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return None


def test_the_message_names_the_version_and_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(metadata, "version", lambda name: "1.30.0")
    spec = TargetSpec(TargetKind.STDIO, "python -m my_server", "stdio:python -m my_server")
    error = _mcp_missing(spec, ImportError("No module named 'mcp_types'"))
    assert isinstance(error, TargetError)
    message = str(error)
    assert "needs mcp>=2.3" in message
    assert "has mcp 1.30.0" in message
    assert "Do not upgrade mcp here" in message
    assert "--toolnexus-target 'stdio:python -m my_server'" in message
    assert "pip install 'pytest-toolnexus[mcp]'" in message  # in the new environment only


def test_without_mcp_at_all_the_extra_is_the_advice(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    spec = TargetSpec(TargetKind.HTTP, "http://127.0.0.1:9/mcp", "http://127.0.0.1:9/mcp")
    message = str(_mcp_missing(spec, ImportError("No module named 'mcp'")))
    assert "needs the MCP extra: pip install 'pytest-toolnexus[mcp]'" in message


@pytest.mark.skipif(
    not (_installed_mcp() or "").startswith("1."), reason="needs an environment with mcp 1.x"
)
def test_in_an_mcp1_environment_the_target_fails_tn001_with_that_message(
    pytester: pytest.Pytester,
) -> None:
    run = run_kit(pytester, "stdio:python -m some_server")
    (record,) = run.records
    assert (record["check"], record["outcome"]) == ("TN001", "failed")
    assert f"has mcp {_installed_mcp()}" in record["message"]
    assert "toolnexus 0.21.0" in record["message"]  # what needs the 1.x
    assert "run the kit from an environment of its own" in record["message"]
