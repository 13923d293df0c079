"""``import toolnexus_conformance`` is cheap: names load on first use, a static run needs no hypothesis."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import toolnexus_conformance

_STATIC_RUN = textwrap.dedent(
    """
    import json, sys

    import toolnexus_conformance

    after_import = sorted(m for m in ("hypothesis", "jsonschema") if m in sys.modules)
    from toolnexus_ref import tool


    @tool
    def add(a: int, b: int) -> int:
        '''Add two integers.'''
        return a + b


    @tool
    def shout(text: str, times: int = 1) -> str:
        '''Repeat a text in capitals.'''
        return text.upper() * times


    verdicts = toolnexus_conformance.check_tools(
        [add, shout], select=["TN1", "TN2", "TN3", "TN4"]
    )
    print(json.dumps({
        "after_import": after_import,
        "after_static_run": "hypothesis" in sys.modules,
        "codes": sorted({v.check.code for v in verdicts}),
    }))
    """
)


def _run(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_static_run_leaves_hypothesis_unloaded() -> None:
    """Importing loads neither hypothesis nor jsonschema; static checks need no hypothesis."""
    result = _run(_STATIC_RUN)
    assert result["after_import"] == []
    assert result["after_static_run"] is False
    codes = result["codes"]
    assert isinstance(codes, list)
    assert {"TN101", "TN201", "TN301", "TN401"} <= set(codes), codes  # the checks did run


def test_argument_generation_still_brings_hypothesis() -> None:
    result = _run(
        "import json, sys; import toolnexus_conformance as t;"
        " t.args_for({'type': 'object'});"
        " print(json.dumps({'loaded': 'hypothesis' in sys.modules}))"
    )
    assert result == {"loaded": True}


@pytest.mark.parametrize("name", toolnexus_conformance.__all__)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(toolnexus_conformance, name) is not None
    assert name in dir(toolnexus_conformance)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        _ = toolnexus_conformance.nothing_here  # type: ignore[attr-defined]


def test_subpackages_still_import_by_name() -> None:
    from toolnexus_conformance import arguments

    assert arguments.args_for is toolnexus_conformance.args_for
