"""Conformance suites for the Tool contract: checks, argument generation and the runner.

Knows nothing of pytest: checks return plain verdicts that the pytest plugin turns
into items, and that ``check_tools`` / ``assert_conforms`` give to any script.
"""

from __future__ import annotations

from ._assertions import assert_conforms, failures
from ._explain import explain
from ._model import Category, CheckInfo, Fail, Finding, Outcome, Scope, Severity, Skip, Verdict
from ._options import ExecuteMode, RunOptions
from ._registry import CATALOG, check, load_catalog
from ._report import build_report, render_table
from ._runner import check_tools
from .arguments import InvalidArgs, UnsupportedSchema, args_for, invalid_args_for, values_for
from .targets import TargetError, load_target, parse_target

__all__ = [
    "CATALOG",
    "Category",
    "CheckInfo",
    "ExecuteMode",
    "Fail",
    "InvalidArgs",
    "Finding",
    "Outcome",
    "RunOptions",
    "Scope",
    "Severity",
    "Skip",
    "TargetError",
    "UnsupportedSchema",
    "Verdict",
    "args_for",
    "assert_conforms",
    "build_report",
    "check",
    "check_tools",
    "explain",
    "failures",
    "invalid_args_for",
    "load_catalog",
    "load_target",
    "parse_target",
    "render_table",
    "values_for",
]
