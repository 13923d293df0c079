"""Whether a target loads at all: the one verdict a target gets when it yields no tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._model import Category, Finding, Scope, Severity
from .._registry import check


@check(
    "TN001",
    "target-loads",
    title="The target loads and yields tools",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="A target that cannot be imported, started or listed gives the model no tools at all;"
    " every other check of it is moot.",
    fix="Read the error: fix the import path or the factory, install the missing extra, or make"
    " the server start within its timeout.",
    scope=Scope.TARGET,
)
def target_loads(subject: Any, options: Any) -> Iterable[Finding]:
    error = subject.extra.get("load_error")
    return [Finding(str(error))] if error else []
