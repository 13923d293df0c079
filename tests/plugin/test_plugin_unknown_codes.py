"""A name given to --toolnexus-select or --toolnexus-ignore that matches no check is an error.

Without it a typo silently changes nothing: ``--toolnexus-ignore TN2O2`` (a letter
O) leaves TN202 running, ``--toolnexus-select schmea`` runs no schema check. A
project's own check, registered in a conftest, is a name like any other.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_toolnexus._selection import unknown_tokens

TOOLS = '''
from toolnexus_ref import tool


@tool
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


tools = [echo]
'''

CUSTOM_CHECK = """
from toolnexus_conformance import check
from toolnexus_conformance._model import Category, Severity


@check(
    "TX900",
    "house-rule",
    title="A rule of the house",
    category=Category.NAMING,
    severity=Severity.WARNING,
    why="The house says so.",
    fix="Follow the house.",
)
def house_rule(subject):
    return ()
"""

NAMES = [
    SimpleNamespace(code=code, category=SimpleNamespace(value=category), slug=slug)
    for code, category, slug in [
        ("TN202", "description", "description-length"),
        ("TN301", "schema", "schema-json-data"),
    ]
]


def test_only_tokens_naming_no_check_are_unknown() -> None:
    given = ["TN2", "tn301", "schema", "description-length", "TN2O2", "schmea", "TN9"]
    assert unknown_tokens(given, NAMES) == ["TN2O2", "schmea", "TN9"]


def _project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(my_tools=TOOLS)
    pytester.syspathinsert()


def _run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--toolnexus-conformance",
        "--toolnexus-only",
        "--toolnexus-execute",
        "none",
        "--toolnexus-target",
        "my_tools:tools",
        *extra,
    )


def test_a_typo_in_either_option_stops_the_run_and_names_the_near_checks(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester)
    result = _run(pytester, "--toolnexus-ignore", "TN2O2", "--toolnexus-select", "schmea,TN1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--toolnexus-select 'schmea' names no check (did you mean schema" in err
    assert "--toolnexus-ignore 'TN2O2' names no check" in err
    assert "TN1" not in err.split("names no check")[0]  # the good token is not blamed
    assert "passed" not in result.stdout.str()


def test_a_project_check_from_a_conftest_is_a_known_name(pytester: pytest.Pytester) -> None:
    _project(pytester)
    pytester.makeconftest(CUSTOM_CHECK)
    result = _run(pytester, "--toolnexus-select", "TX900,house-rule,TN101")
    result.assert_outcomes(passed=2)
