"""Conformance suites for the Tool contract: checks, argument generation and the runner.

Knows nothing of pytest: checks return plain verdicts that the pytest plugin turns
into items, and that ``check_tools`` / ``assert_conforms`` give to any script.

Every name below is imported on first use (PEP 562), so ``import
toolnexus_conformance`` costs nothing heavy: hypothesis loads with the argument
generators, jsonschema with the checks that validate schemas, and the pytest
plugin can read the suites' defaults without paying for either.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._assertions import assert_conforms, failures
    from ._explain import explain
    from ._model import Category, CheckInfo, Fail, Finding, Outcome, Scope, Severity, Skip, Verdict
    from ._options import (
        PROVIDERS,
        ExecuteMode,
        Provider,
        RunOptions,
        ToolArguments,
        ToolSettings,
    )
    from ._registry import CATALOG, check, load_catalog
    from ._report import build_report, render_table
    from ._runner import check_tools
    from .arguments import InvalidArgs, UnsupportedSchema, args_for, invalid_args_for, values_for
    from .process._target import check_target
    from .targets import TargetError, load_target, parse_target

__all__ = [
    "CATALOG",
    "PROVIDERS",
    "Category",
    "CheckInfo",
    "ExecuteMode",
    "Fail",
    "InvalidArgs",
    "Finding",
    "Outcome",
    "Provider",
    "RunOptions",
    "ToolArguments",
    "ToolSettings",
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
    "check_target",
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

#: Where each public name lives, relative to this package.
_HOMES: dict[str, str] = {
    "assert_conforms": "._assertions",
    "failures": "._assertions",
    "explain": "._explain",
    **dict.fromkeys(
        ("Category", "CheckInfo", "Fail", "Finding", "Outcome", "Scope", "Severity", "Skip"),
        "._model",
    ),
    "Verdict": "._model",
    **dict.fromkeys(
        ("PROVIDERS", "ExecuteMode", "Provider", "RunOptions", "ToolArguments", "ToolSettings"),
        "._options",
    ),
    **dict.fromkeys(("CATALOG", "check", "load_catalog"), "._registry"),
    **dict.fromkeys(("build_report", "render_table"), "._report"),
    "check_target": ".process._target",
    "check_tools": "._runner",
    **dict.fromkeys(
        ("InvalidArgs", "UnsupportedSchema", "args_for", "invalid_args_for", "values_for"),
        ".arguments",
    ),
    **dict.fromkeys(("TargetError", "load_target", "parse_target"), ".targets"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
