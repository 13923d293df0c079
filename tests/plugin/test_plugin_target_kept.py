"""TN001 and a Python target the run itself keeps from loading in its worker process.

A module that builds its API client as it is imported (``openai.OpenAI()`` raising
"Missing credentials. ... or set the `OPENAI_API_KEY` ... environment variable") loads in
pytest's process, where the user's shell set the key, but not in its worker, whose
environment the kit cuts to an allowlist. That is the run's doing: the target is not
judged on it, and the reason says how to pass the key. A target that fails for any
other reason, or once it was given what it lacked, still fails TN001.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from toolnexus_conformance._model import Skip
from toolnexus_conformance._options import RunOptions
from toolnexus_conformance.checks.target import target_loads
from toolnexus_conformance.process._sandbox import probe

from pytest_toolnexus._options import CONFORMANCE, ONLY, TARGET

NEEDS_KEY = """
import os

from toolnexus_ref import BaseTool

KEY = os.environ["TARGET_KEPT_API_KEY"]  # as a client built at import reads it


class Echo(BaseTool):
    name = "echo"
    description = "Returns the text it is given."
    input_schema = {"type": "object", "properties": {"text": {"type": "string"}}}

    def run(self, args, ctx):
        return args.get("text", "")


tools = [Echo()]
"""

LABEL = "needs_key:tools"


def _verdict(error: str, options: RunOptions, *, in_worker: bool = True) -> list[str]:
    subject = SimpleNamespace(
        target=LABEL, extra={"load_error": error, "loaded_in_worker": in_worker}
    )
    return [f.message for f in target_loads(subject, options)]


def test_a_variable_set_here_but_cut_from_the_worker_is_not_the_targets_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    error = f"cannot import 'needs_key' for {LABEL!r}: KeyError: 'TARGET_KEPT_API_KEY'"
    monkeypatch.setenv("TARGET_KEPT_API_KEY", "k-1")
    with pytest.raises(Skip) as skipped:
        _verdict(error, RunOptions())
    said = str(skipped.value)
    assert "it names TARGET_KEPT_API_KEY, which is set here but not passed" in said
    assert "--toolnexus-env TARGET_KEPT_API_KEY" in said
    assert said.endswith(f"({error})")
    # Imported in pytest's own process it had the variable; passed, the worker had it.
    assert _verdict(error, RunOptions(), in_worker=False) == [error]
    assert _verdict(error, RunOptions(passed_variables=("TARGET_KEPT_API_KEY",))) == [error]
    # Set nowhere, and named on no line about the environment: the module's own failure.
    monkeypatch.delenv("TARGET_KEPT_API_KEY")
    assert _verdict(error, RunOptions()) == [error]


@pytest.mark.parametrize(
    ("error", "said"),
    [
        ("ConnectionRefusedError: [Errno 111] Connection refused", "reaches the network"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory:"
            " '/tmp/toolnexus-worker-ab12/.home/.config/app.toml'",
            "looks for ~/.config/app.toml in its home folder",
        ),
        (
            "OSError: [Errno 30] Read-only file system: '/srv/app/app.log'",
            "--toolnexus-writable-copy /srv/app,",
        ),
    ],
)
def test_what_the_sandbox_kept_from_an_import_is_not_the_targets_failure(
    error: str, said: str
) -> None:
    with pytest.raises(Skip, match="the target did not load in its worker process: ") as skipped:
        _verdict(error, RunOptions(contained=frozenset({LABEL})))
    assert said in str(skipped.value)
    # Outside a sandbox that holds, the machine itself refused it.
    assert _verdict(error, RunOptions()) == [error]


@pytest.mark.skipif(not probe().available, reason=probe().why or "no sandbox here")
def test_a_target_that_reads_a_key_at_import_is_told_how_to_pass_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(needs_key=NEEDS_KEY)
    pytester.syspathinsert()
    monkeypatch.setenv("TARGET_KEPT_API_KEY", "k-1")
    run = (CONFORMANCE, ONLY, TARGET, LABEL, "-p", "no:cacheprovider", "-rs")
    cut = pytester.runpytest_subprocess(*run)
    cut.assert_outcomes(skipped=1)
    cut.stdout.fnmatch_lines(["SKIPPED * it names TARGET_KEPT_API_KEY, * --toolnexus-env *"])
    given = pytester.runpytest_subprocess(
        *run, "--toolnexus-env", "TARGET_KEPT_API_KEY", "--toolnexus-select", "TN001,TN601"
    )
    given.assert_outcomes(passed=2)
