"""The reference implementation and the suites are never assertion-rewritten by pytest.

pytest marks every package of a plugin's distribution for rewriting; installed from
the wheel, that is ours too. Marked here the way pytest marks them (``mark_rewrite``,
through the public ``register_assert_rewrite``), so the test holds in an editable
install too, where pytest's own marking finds no packages to mark.
"""

from __future__ import annotations

import pytest

CONFTEST = """
import sys

import pytest

# A library module the plugin has not imported yet: imported below, after the marks.
LATE = "toolnexus_ref.wire.anthropic"
NOT_YET = LATE not in sys.modules
pytest.register_assert_rewrite("toolnexus_ref", "toolnexus_conformance", "helper")
"""

TEST = """
import importlib
import sys

import conftest


def loader_of(name):
    return type(importlib.import_module(name).__spec__.loader).__name__


def test_loaders():
    assert conftest.NOT_YET, f"{conftest.LATE} was imported before the test could mark it"
    print("LIBRARY", loader_of(conftest.LATE))
    print("HELPER", loader_of("helper"))
"""


@pytest.mark.fresh_interpreter  # about what the session's own start-up imports
def test_the_kits_libraries_import_unrewritten_where_pytest_marks_them(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_late=TEST, helper="def same(a, b):\n    assert a == b\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-s", "-W", "ignore::pytest.PytestAssertRewriteWarning"
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    # The helper shows the marks hold in this session; the library is imported as
    # Python imports it, from its own compiled bytecode.
    result.stdout.fnmatch_lines(["*LIBRARY SourceFileLoader", "HELPER AssertionRewritingHook"])
