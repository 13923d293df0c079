"""Coverage beside the suites: what it cannot see is said, and where it can see, it measures.

Real sessions with pytest-cov (a test dependency) on a one-tool module: under process
isolation coverage sees none of the module and the summary says why; under
``--toolnexus-isolation none`` it measures every line, and the summary says nothing of
coverage.
"""

from __future__ import annotations

import re

import pytest

from pytest_toolnexus._coverage import unmeasured_line
from pytest_toolnexus._options import CONFORMANCE, ONLY, TARGET

TOOLS = '''
def shout(text: str) -> str:
    """Say the text louder."""
    return text.upper()


tools = [shout]
'''

RUN = (CONFORMANCE, ONLY, TARGET, "shouting:tools", "--cov=shouting", "--cov-report=term-missing")


def _coverage_of_module(lines: list[str]) -> str | None:
    """pytest-cov's row for the module (``shouting.py  Stmts Miss Cover Missing``)."""
    return next((line for line in lines if re.match(r"shouting\.py\s", line)), None)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_under_isolation_the_summary_says_coverage_sees_no_tool(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """Under xdist the summary is the controller's, which loads no target."""
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest_subprocess(*RUN, *workers)
    assert result.ret == 0, result.stdout.str()
    # What coverage says alone: nothing measured, and not why.
    assert _coverage_of_module(result.stdout.lines) is None, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*toolnexus conformance*",
            "coverage: the tools of shouting:tools ran in sandboxed processes, which coverage"
            " does not measure; --toolnexus-isolation none calls them in pytest's process,"
            " where it does (uncontained)",
        ]
    )


def test_in_pytests_process_coverage_measures_every_line_and_nothing_is_said(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest_subprocess(*RUN, "--toolnexus-isolation", "none")
    assert result.ret == 0, result.stdout.str()
    row = _coverage_of_module(result.stdout.lines)
    assert row is not None, result.stdout.str()
    assert row.split()[1:4] == ["3", "0", "100%"], row
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)


def test_without_coverage_nothing_is_said(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest(
        CONFORMANCE, ONLY, TARGET, "shouting:tools", "-p", "no:cacheprovider"
    )
    assert result.ret == 0, result.stdout.str()
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)


def test_with_coverage_turned_off_nothing_is_said(pytester: pytest.Pytester) -> None:
    """``--no-cov`` (pytest-cov's, for a debugger) keeps its plugin but measures nothing."""
    pytester.makepyfile(shouting=TOOLS)
    result = pytester.runpytest_subprocess(*RUN, "--no-cov")
    assert result.ret == 0, result.stdout.str()
    assert not any(line.startswith("coverage:") for line in result.stdout.lines)


def test_the_line_names_a_few_targets_and_counts_the_rest() -> None:
    assert unmeasured_line([]) is None
    line = unmeasured_line(["a:t", "b:t", "a:t", "c:t", "d:t", "e:t"])
    assert line is not None
    assert line.startswith("coverage: the tools of a:t, b:t, c:t and 2 more ran in sandboxed")
