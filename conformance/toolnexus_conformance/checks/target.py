"""Whether a target loads at all: the one verdict a target gets when it yields no tools."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._model import Category, Finding, Scope, Severity, Skip
from .._registry import check
from ._start_excuses import import_excuse


@check(
    "TN001",
    "target-loads",
    title="The target loads and yields tools",
    category=Category.ERRORS,
    severity=Severity.ERROR,
    why="A target that cannot be imported, started or listed gives the model no tools at all;"
    " every other check of it is moot.",
    fix="Read the error: fix the import path or the factory, install the missing extra, or make"
    " the server start within its timeout. A target whose import in its worker process failed"
    " for want of what the run keeps from it (a variable set in your shell that the kit did"
    " not pass, the network, a file in your home folder, a write outside its scratch) is not"
    " judged: the skip says how to give it.",
    scope=Scope.TARGET,
)
def target_loads(subject: Any, options: Any) -> Iterable[Finding]:
    error = subject.extra.get("load_error")
    if error and (why := import_excuse(subject, options)) is not None:
        raise Skip(f"{why} ({error})")
    return [Finding(str(error))] if error else []
