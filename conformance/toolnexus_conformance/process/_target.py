"""``check_target``: every check on a Python target, its import and calls made in a worker process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .._model import Scope, Verdict
from .._options import RunOptions
from .._runner import applicable_checks, calls_tools, check_subjects, run_check
from .._subject import TargetSubject

__all__ = ["check_target"]


def check_target(
    spec: str,
    *,
    base_dir: Path | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    options: RunOptions | None = None,
    load_timeout: float = 60.0,
) -> list[Verdict]:
    """Every selected check on a ``package.module:attr`` target, its tools called apart.

    The target is imported in a worker process first, and its live checks run
    there, one process per tool, as under the pytest plugin: a tool that ends,
    crashes or freezes its process is a TN606 finding, and a target whose import
    does is a TN001 one. The declarations are read there too, and cross as plain data
    (``_declared``): none of the target's code runs in the caller's process.

    When a selected check calls tools, the worker is forked from a warm template,
    as the plugin's are: a tool that kills it has its running neighbours replayed
    each on a worker of its own, and those are forks too, not a warm-up each. When
    none does, nothing is warmed: the worker only imports the target.
    """
    from .._registry import CATALOG
    from ..targets import TargetKind, parse_target
    from ._forkserver import ForkServer
    from ._isolation import IsolatedExplorations, TargetWorker, WorkerError
    from ._sandbox import Sandbox

    options = options or RunOptions()
    target = parse_target(spec, base_dir=base_dir)
    if target.kind is not TargetKind.PYTHON:
        raise ValueError(f"check_target takes package.module:attr targets, not {spec!r}")
    modules = sorted({c.run.__module__ for c in CATALOG if c.info.live})
    sandbox = Sandbox()
    explores = calls_tools(select, ignore, options)
    template = ForkServer(sandbox, options, modules) if explores else None
    if template is not None:
        template.start()
    worker = TargetWorker(
        target.value,
        target.label,
        base_dir=base_dir,
        options=options,
        modules=modules,
        sandbox=sandbox,
        forkserver=template,
    )
    worker.prepare = explores
    try:
        try:
            worker.load(load_timeout)
        except WorkerError as exc:
            return _load_failed(target.label, str(exc), select, ignore, options)
        subjects = worker.subjects()
        isolated = IsolatedExplorations(options)
        isolated.add(target.label, worker, subjects)
        return check_subjects(
            subjects,
            target.label,
            select=select,
            ignore=ignore,
            options=options,
            target_extra=dict(worker.info),
            explorations=isolated,
        )
    finally:
        worker.close()
        if template is not None:
            template.close()


def _load_failed(
    label: str, error: str, select: Sequence[str], ignore: Sequence[str], options: RunOptions
) -> list[Verdict]:
    subject = TargetSubject(label, [], {"load_error": error})
    return [
        run_check(check, subject, options)
        for check in applicable_checks(scope=Scope.TARGET)
        if check.code == "TN001"
    ]
