"""TN853: a local HTTP server that serves a foreign Host and Origin is a DNS-rebinding target."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator

import pytest
from _mcp_testing import PYTHON, SERVERS, START
from toolnexus_conformance._model import Outcome, Verdict
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import read_subjects
from toolnexus_conformance.live._loop import BackgroundLoop

from toolnexus_ref.mcp import open_http, open_stdio


def _serve(*args: str) -> Iterator[str]:
    process = subprocess.Popen(
        [PYTHON, str(SERVERS / "http_origin.py"), *args],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stderr is not None
        line = ""
        deadline = time.monotonic() + START
        while time.monotonic() < deadline and "listening on" not in line:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
        assert "listening on" in line, f"server did not start: {line!r}"
        yield line.split("listening on", 1)[1].strip()
    finally:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        if process.stderr is not None:
            process.stderr.close()


@pytest.fixture
def open_server() -> Iterator[str]:
    yield from _serve("--open")


@pytest.fixture
def guarded_server() -> Iterator[str]:
    yield from _serve()


def _tn853(loop: BackgroundLoop, url: str) -> Verdict:
    source = loop.run(open_http(url, timeout=START), timeout=60)
    try:
        assert source.tools, source.statuses
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        verdicts = check_subjects(
            subjects, "t", select=["TN853"], loop=loop, target_extra=source.conformance_extra()
        )
    finally:
        loop.run(source.close(), timeout=30)
    [verdict] = verdicts
    return verdict


def test_a_server_that_answers_a_foreign_origin_is_reported(
    loop: BackgroundLoop, open_server: str
) -> None:
    verdict = _tn853(loop, open_server)
    assert verdict.outcome is Outcome.FAILED
    assert "Host 'rebind.invalid:" in verdict.message
    assert verdict.check.severity.value == "warning"


def test_a_server_that_validates_host_and_origin_passes(
    loop: BackgroundLoop, guarded_server: str
) -> None:
    assert _tn853(loop, guarded_server).outcome is Outcome.PASSED


def test_a_stdio_server_is_not_judged(loop: BackgroundLoop) -> None:
    source = loop.run(open_stdio([PYTHON, str(SERVERS / "ts_style.py")], timeout=START), timeout=60)
    try:
        subjects = read_subjects(source.tools, "t", [source.tool_extra(t) for t in source.tools])
        [verdict] = check_subjects(
            subjects, "t", select=["TN853"], loop=loop, target_extra=source.conformance_extra()
        )
    finally:
        loop.run(source.close(), timeout=30)
    assert verdict.outcome is Outcome.SKIPPED
