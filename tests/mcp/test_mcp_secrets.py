"""No secret leaves: a value expanded from ``${SECRET}`` is masked in every output of a run.

The server is given ``SECRET=hunter2`` through its mcp.json ``env`` and echoes it
back in a tool result that TN552 quotes in its failure; the terminal, the JUnit
XML and the JSON report must still never show it. The same run without the masking
plugin shows the value, so the test can fail.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from _mcp_testing import PYTHON, SERVERS
from _sessions import RunningSession, Session, SessionsByKey, early, start_session

from toolnexus_ref import secrets

SECRET = "hunter2"


def test_register_mask_and_find() -> None:
    secrets.clear()
    try:
        assert not secrets.find("token hunter2")
        secrets.register(SECRET)
        secrets.register("hunter2-long")
        secrets.register("abc")  # too short to be worth masking
        assert secrets.find("token hunter2!")
        assert not secrets.find("token hunter")
        assert secrets.mask("a hunter2 b hunter2-long abc") == "a *** b *** abc"
    finally:
        secrets.clear()


def test_expanded_config_values_are_registered() -> None:
    from toolnexus_ref.mcp import parse_mcp_config

    secrets.clear()
    try:
        env = {"A": "${TOKEN}", "B": "literal-value", "H": "${HOME}"}
        text = json.dumps({"s": {"command": "x", "env": env}})
        parse_mcp_config(text, environ={"TOKEN": "tok-12345", "HOME": "/home/ada"})
        assert secrets.find("tok-12345")
        assert not secrets.find("literal-value")
        assert not secrets.find("/home/ada/project")  # every server gets HOME anyway
    finally:
        secrets.clear()


#: The runs compared: the plugin's, serial and under xdist, and one without its masking.
RUNS = {
    "serial": (),
    "xdist": ("-p", "xdist", "-n", "2"),
    "unmasked": ("-p", "no:pytest_toolnexus._masking"),
}


def _start(path: Path, *extra: str) -> RunningSession:
    config = path / "mcp.json"
    server = {
        "command": PYTHON,
        "args": [str(SERVERS / "hostile.py"), "echo-secret"],
        "env": {"SECRET": "${SECRET}"},
    }
    config.write_text(json.dumps({"mcpServers": {"leaky": server}}), encoding="utf-8")
    return start_session(
        path,
        "-p",
        "no:cacheprovider",
        "-rA",
        "-v",
        "--toolnexus-conformance",
        "--toolnexus-target",
        str(config),
        "--toolnexus-select",
        "TN552,TN561,TN851,TN852",
        "--junitxml",
        "junit.xml",
        "--toolnexus-report",
        "report.json",
        *extra,
        env={"SECRET": SECRET},
    )


@early
def leaky_runs(folder: Path) -> SessionsByKey[str]:
    """The runs, all started early (the xdist one only where xdist is installed)."""
    return SessionsByKey(
        folder,
        lambda folder, name: _start(folder, *RUNS[name]),
        ahead=[
            name
            for name in RUNS
            if name != "xdist" or importlib.util.find_spec("xdist") is not None
        ],
    )


def _outputs(session: Session) -> list[str]:
    return [
        "\n".join(session.stdout.lines),
        session.stderr,
        (session.path / "junit.xml").read_text(encoding="utf-8"),
        (session.path / "report.json").read_text(encoding="utf-8"),
    ]


@pytest.mark.parametrize("workers", ["serial", "xdist"])
def test_an_echoed_secret_is_in_no_output(leaky_runs: SessionsByKey[str], workers: str) -> None:
    if workers == "xdist":
        pytest.importorskip("xdist")
    result = leaky_runs.start(workers).result()
    outputs = _outputs(result)
    records = json.loads(outputs[3])["results"]
    [echoed] = [r for r in records if r["tool"] == "leaky_whoami" and r["check"] == "TN552"]
    assert echoed["outcome"] == "failed"
    assert "refused the token ***" in echoed["message"]
    result.stdout.fnmatch_lines(["*refused the token ***"])
    # The echo is itself a finding, at error severity, that names no secret.
    [leak] = [r for r in records if r["tool"] == "leaky_whoami" and r["check"] == "TN561"]
    assert (leak["outcome"], leak["severity"]) == ("failed", "error")
    assert "credential" in leak["message"]
    for name, text in zip(("stdout", "stderr", "junit", "report"), outputs, strict=True):
        assert SECRET not in text, f"{name} shows the secret"


def test_without_the_masking_the_secret_would_show(leaky_runs: SessionsByKey[str]) -> None:
    """The control: the run above is masked by the plugin, not by luck."""
    outputs = _outputs(leaky_runs.start("unmasked").result())
    # The failure explanations (what came back) show it; verdict messages, and so the
    # JSON report, are masked where they are made, with or without the plugin.
    assert all(SECRET in text for text in (outputs[0], outputs[2]))
    assert SECRET not in outputs[3]
