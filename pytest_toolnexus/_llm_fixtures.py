"""Fixtures for fake LLMs, loopback servers, respx mounts, contexts and snapshots."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

MARKER = "toolnexus_llm"
_OPTIONS = ("strict",)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(strict=True): options for the fake_llm fixture; strict=False lets scripted "
        "replies go unused and requests outrun the script without failing the test.",
    )


def _options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return {}
    if marker.args:
        raise TypeError(f"@pytest.mark.{MARKER} takes keyword arguments only: {_OPTIONS}")
    unknown = sorted(set(marker.kwargs) - set(_OPTIONS))
    if unknown:
        raise TypeError(
            f"@pytest.mark.{MARKER} got unknown options {unknown}; known: {list(_OPTIONS)}"
        )
    return dict(marker.kwargs)


@pytest.fixture
def fake_llm(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A strict, empty-script ``FakeLLM``: give it replies with ``fake_llm.script(...)``
    or replace its behaviour; at teardown an unused reply or an unplanned request fails
    the test. Relax with ``@pytest.mark.toolnexus_llm(strict=False)``."""
    from pytest_toolnexus.fakes import FakeLLM

    fake = FakeLLM(**_options(request))
    yield fake
    if request.node.stash.get(_FAILED, False):
        return  # the test already failed; do not bury its error under ours
    __tracebackhide__ = True
    fake.verify()


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_FAILED] = True
    return report


@pytest.fixture
def fake_llm_server(fake_llm: Any) -> Iterator[Any]:
    """A loopback HTTP server serving ``fake_llm`` (``.openai_base_url`` and friends)."""
    with fake_llm.serve() as server:
        yield server


@pytest.fixture
def fake_llm_respx(fake_llm: Any) -> Iterator[Any]:
    """``fake_llm`` at the providers' real hosts, for httpx and httpx2 clients (the
    openai and anthropic SDKs); any other request fails. Yields the respx router."""
    with fake_llm.respx() as router:
        yield router


@pytest.fixture
def tool_context() -> Iterator[Any]:
    """A fresh ``ToolContext``, cancelled at teardown so no tool outlives the test."""
    from toolnexus_ref import ToolContext

    ctx = ToolContext()
    yield ctx
    ctx.cancel("test finished")


@pytest.fixture
def toolnexus_snapshot(snapshot: Any) -> Any:
    """syrupy's ``snapshot`` with tool declarations and transcripts stored as stable JSON."""
    from pytest_toolnexus.snapshots import ToolnexusSnapshotExtension

    return snapshot.use_extension(ToolnexusSnapshotExtension)
