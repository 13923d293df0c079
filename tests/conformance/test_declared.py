"""Declarations as plain data: the static checks judge them exactly as they judge the tools.

The worker reads a target's declarations and sends them as builtins
(``process._declared``); the session builds subjects from them without running
any of the target's code. Every corpus entry is judged both ways here, and the
verdicts must be the same, message for message.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance._registry import load_catalog
from toolnexus_conformance._runner import check_subjects
from toolnexus_conformance._subject import MISSING, AttributeProblem, read_subjects
from toolnexus_conformance.corpus import load_corpus
from toolnexus_conformance.live._loop import BackgroundLoop
from toolnexus_conformance.process._declared import (
    DeclaredTool,
    declare,
    dumps,
    loads,
    subjects_from,
)

CORPUS = Path(__file__).resolve().parents[2] / "conformance" / "corpus"
READ_LIMIT = 0.5
STATIC = [info.code for info in load_catalog().infos() if not info.live]


def _verdicts(subjects: list[Any], target: str, loop: BackgroundLoop) -> list[tuple[str, ...]]:
    verdicts = check_subjects(subjects, target, select=STATIC, loop=loop)
    return [(v.tool, v.check.code, v.outcome.value, v.message) for v in verdicts]


@pytest.mark.parametrize("folder", ["bad", "good", "unsafe"])
def test_static_verdicts_on_declared_subjects_are_the_same(folder: str) -> None:
    loop = BackgroundLoop()
    compared = 0
    try:
        for module, entry in load_corpus(CORPUS / folder):
            tools = [entry.tool, *entry.siblings]
            target = f"{folder}/{module}"
            try:
                direct = _verdicts(read_subjects(tools, target, limit=READ_LIMIT), target, loop)
                declared, info = loads(dumps(declare(tools, target, None, limit=READ_LIMIT), {}))
                via_data = _verdicts(subjects_from(declared, target), target, loop)
            finally:
                if entry.release is not None:
                    entry.release()
            assert via_data == direct, f"{target}: {entry.note}"
            assert info == {}
            compared += 1
    finally:
        loop.close()
    assert compared > 3


def test_declared_subjects_carry_no_code_of_the_target() -> None:
    class Schema:
        def __repr__(self) -> str:
            return "<a schema object>"

    class Tool:
        name = "odd"
        description = "A tool whose schema is an object of its own."
        source = "custom"
        input_schema = Schema()
        original_name = "odd-original"

        @property
        def annotations(self) -> Any:
            raise RuntimeError("no hints here")

        async def execute(self, args: Any, ctx: Any = None) -> Any:
            return None

    (subject,) = subjects_from(loads(dumps(declare([Tool()], "t", None), {}))[0], "t")
    assert isinstance(subject.tool, DeclaredTool)
    assert subject.tool.original_name == "odd-original"
    schema = subject.input_schema
    assert type(schema).__name__ == "Schema"
    assert repr(schema) == "<a schema object>"
    assert not hasattr(schema, "__dict__") or not vars(schema)
    assert subject.hints is not None
    assert not subject.hints.readable
    assert subject.execute_async is True
    position = subject.position
    assert position is not None
    assert position[0] == __file__
    assert position[1] > 60


def test_problems_and_missing_cross_as_themselves() -> None:
    class Broken:
        description = "x"
        source = "custom"

        @property
        def name(self) -> str:
            raise ValueError("boom")

    (subject,) = subjects_from(loads(dumps(declare([Broken()], "t", None), {}))[0], "t")
    assert isinstance(subject.name, AttributeProblem)
    assert "boom" in subject.name.error
    assert subject.input_schema is MISSING


def test_a_pickle_naming_any_class_is_refused() -> None:
    class Evil:
        def __reduce__(self) -> Any:
            return (print, ("ran",))

    with pytest.raises(pickle.UnpicklingError):
        loads(pickle.dumps(([{"name": Evil()}], {})))
