"""Fixtures for fake LLMs, loopback servers, respx mounts, contexts and snapshots."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from respx import MockRouter

    from toolnexus_ref import ToolContext

    from .fakes import FakeLLM, FakeLLMServer, MountedFake

MARKER = "toolnexus_llm"
_OPTIONS = ("strict", "provider_checks", "cassette", "upstream")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(strict=True, provider_checks=True, cassette=None, upstream=None): "
        "options for the "
        "fake_llm fixture; strict=False lets scripted replies go unused and requests "
        "outrun the script without failing the test; provider_checks=False lets through "
        "requests the provider would refuse with a 400; cassette='name.yaml' replays a "
        "recorded session (a path relative to the test file); with --toolnexus-record "
        "once|new_episodes|all it is recorded against the real API (upstream='https://...' "
        "or the provider's default host).",
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
def fake_llm(request: pytest.FixtureRequest) -> Iterator[FakeLLM]:
    """A strict, empty-script ``FakeLLM``: give it replies with ``fake_llm.script(...)``
    or replace its behaviour; at teardown an unused reply, an unplanned request or a
    request the provider would refuse fails the test. Relax with
    ``@pytest.mark.toolnexus_llm(strict=False)`` or ``(provider_checks=False)``;
    replay a recorded session with ``(cassette="session.yaml")``, recorded against
    the real API under ``--toolnexus-record once|new_episodes|all``."""
    from pytest_toolnexus.fakes import FakeLLM

    options = _options(request)
    cassette = options.pop("cassette", None)
    upstream = options.pop("upstream", None)
    recording = None
    if cassette is None:
        fake = FakeLLM(**options)
    else:
        path = request.path.parent / str(cassette)
        mode = request.config.getoption("toolnexus_record", "none")
        if mode == "all" or (mode in ("once", "new_episodes") and not path.exists()):
            from pytest_toolnexus.fakes import Recording

            recording = Recording(path, upstream=upstream)
            fake = FakeLLM(recording, **options)
        elif mode == "new_episodes":
            from pytest_toolnexus.fakes import NewEpisodes

            recording = NewEpisodes(path, upstream=upstream)
            fake = FakeLLM(recording, **options)
        else:
            fake = FakeLLM.replay(path, **options)
    request.node.stash[_FAKE] = fake
    yield fake
    if request.node.stash.get(_SETTLED, False):
        return  # the test already failed or xfailed; do not bury its outcome under ours
    __tracebackhide__ = True
    fake.verify()
    if recording is not None:
        recording.save()  # only a passing recording replaces the cassette


_SETTLED = pytest.StashKey[bool]()
_FAKE = pytest.StashKey[Any]()
_TRANSPORTS = ("fake_llm_respx", "fake_llm_server")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.when == "call" and (report.failed or hasattr(report, "wasxfail")):
        item.stash[_SETTLED] = True
        hint = _unreached_hint(item)
        if hint and report.failed:
            report.sections.append(("fake_llm", hint))
    return report


def _unreached_hint(item: pytest.Item) -> str | None:
    """A test that failed without its fake ever being asked, and without a fixture that
    serves the fake to a client, most likely sent its requests elsewhere (the client's
    only word then is "Connection error.")."""
    fake = item.stash.get(_FAKE, None)
    names = getattr(item, "fixturenames", ())
    if fake is None or fake.requests or any(n in names for n in _TRANSPORTS):
        return None
    return (
        "fake_llm received no request, and this test uses neither fixture that serves it "
        "to a client: a client's 'Connection error.' means its requests went elsewhere. "
        "Add fake_llm_respx (clients at the providers' default hosts) or fake_llm_server "
        "(give the client base_url=fake_llm_server.openai_base_url, .anthropic_base_url, "
        ".gemini_base_url or .ollama_base_url)."
    )


@pytest.fixture(scope="session")
def fake_llm_loopback() -> Iterator[FakeLLMServer]:
    """One loopback HTTP server for the whole session (per xdist worker); each test's
    ``fake_llm_server`` mounts its fake on it under a prefix of its own."""
    from pytest_toolnexus.fakes import FakeLLMServer

    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake_llm_server(fake_llm: FakeLLM, fake_llm_loopback: FakeLLMServer) -> Iterator[MountedFake]:
    """``fake_llm`` on the session's loopback server: ``.openai_base_url``,
    ``.anthropic_base_url``, ``.gemini_base_url``, ``.ollama_base_url``, ``.url``."""
    mounted = fake_llm_loopback.mount(fake_llm)
    yield mounted
    mounted.unmount()


@pytest.fixture
def fake_llm_respx(fake_llm: FakeLLM) -> Iterator[MockRouter]:
    """``fake_llm`` at the providers' real hosts, for httpx and httpx2 clients (the
    openai, anthropic and google-genai SDKs); any other request fails. Yields the
    respx router."""
    with fake_llm.respx() as router:
        yield router


@pytest.fixture
def tool_context() -> Iterator[ToolContext]:
    """A fresh ``ToolContext``, cancelled at teardown so no tool outlives the test."""
    from toolnexus_ref import ToolContext

    ctx = ToolContext()
    yield ctx
    ctx.cancel("test finished")


@pytest.fixture
def toolnexus_snapshot(snapshot: Any) -> Any:
    """syrupy's ``snapshot`` with tool declarations, transcripts and fakes' requests
    (``fake.to_data()``) stored as stable JSON."""
    from pytest_toolnexus.snapshots import ToolnexusSnapshotExtension

    return snapshot.use_extension(ToolnexusSnapshotExtension)
