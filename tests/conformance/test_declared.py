"""Declarations as plain data: the static checks judge them exactly as they judge the tools.

The worker reads a target's declarations and sends them as builtins
(``process._declared``); the session builds subjects from them without running
any of the target's code. Every corpus entry is judged both ways here, and the
verdicts must be the same, message for message.
"""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor
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
                # Both reads at once: an entry whose reads hang waits out the bound once.
                with ThreadPoolExecutor(2) as pool:
                    read = pool.submit(read_subjects, tools, target, limit=READ_LIMIT)
                    sent = pool.submit(declare, tools, target, None, limit=READ_LIMIT)
                    direct = _verdicts(read.result(), target, loop)
                    declared, info = loads(dumps(sent.result(), {}))
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


def _deep(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {"type": "object"}
    node = root
    for _ in range(levels):
        child: dict[str, Any] = {"type": "object"}
        node["properties"] = {"p": child}
        node = child
    return root


def _depth(schema: dict[str, Any]) -> int:
    levels = 0
    while "properties" in schema:
        schema = schema["properties"]["p"]
        levels += 1
    return levels


def test_a_schema_deeper_than_pickle_recurses_crosses_whole() -> None:
    class Tool:
        name = "deep"
        description = "A tool whose schema is nested five thousand levels deep."
        source = "custom"
        input_schema = _deep(5000)

    loops: list[Any] = ["x"]
    loops.append(loops)
    Tool.input_schema["examples"] = loops
    data = dumps(declare([Tool()], "t", None), {})
    (entry,), _ = loads(data)
    assert _depth(entry["input_schema"]) == 5000
    crossed = entry["input_schema"]["examples"]
    assert crossed[1] is crossed
    # Pickled as the flat graph, which pickle's recursion does not bound; a schema
    # of ordinary depth crosses as itself.
    assert _form(data) == "flat"
    Tool.input_schema = _deep(10)
    assert _form(dumps(declare([Tool()], "t", None), {})) == "plain"


def _form(data: bytes) -> str:
    import io

    from toolnexus_conformance.process._declared import _PlainUnpickler

    form: str = _PlainUnpickler(io.BytesIO(data)).load()[0]
    return form


def test_values_that_are_not_plain_data_cross_as_stand_ins() -> None:
    class Text(str):
        pass

    class Tool:
        name = "odd"
        description = "A tool whose schema holds a set and a str subclass."
        source = "custom"
        input_schema = {"type": "object", "enum": {1, 2}, "title": Text("t"), "items": (1, "a")}

    (entry,), _ = loads(dumps(declare([Tool()], "t", None), {}))
    schema = entry["input_schema"]
    assert type(schema["enum"]).__name__ == "set"
    assert type(schema["title"]).__name__ == "Text"
    assert repr(schema["title"]) == "'t'"
    assert schema["items"] == (1, "a")
    assert type(schema) is dict


def test_the_tools_of_one_class_have_its_source_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    read: list[Any] = []
    real = inspect.getsourcelines

    def counting(value: Any) -> Any:
        read.append(value)
        return real(value)

    monkeypatch.setattr(inspect, "getsourcelines", counting)

    class Tool:
        description = "One of many tools of one class."
        source = "custom"
        input_schema = {"type": "object"}

        def __init__(self, index: int) -> None:
            self.name = f"tool_{index}"

    declared = declare([Tool(i) for i in range(50)], "t", None)
    assert [entry["position"][0] for entry in declared] == [__file__] * 50
    assert len({entry["position"] for entry in declared}) == 1
    # Only this class's reads: a reader thread an earlier test abandoned may read others.
    assert [value for value in read if value is Tool] == [Tool]
