"""Schema inference against the pinned vectors in conformance/vectors/schema_inference.json."""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolnexus_ref.native import infer_schema, tool

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "vectors"
MODULE_NAME = "toolnexus_vectors_inference_signatures"


def _load_signatures() -> ModuleType:
    if MODULE_NAME in sys.modules:
        return sys.modules[MODULE_NAME]
    spec = importlib.util.spec_from_file_location(MODULE_NAME, VECTORS / "inference_signatures.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE_NAME] = module  # get_type_hints resolves classes through sys.modules
    spec.loader.exec_module(module)
    return module


SIGNATURES = _load_signatures()
DATA: dict[str, Any] = json.loads((VECTORS / "schema_inference.json").read_text(encoding="utf-8"))
ACCEPTED: dict[str, Any] = DATA["accepted"]
REFUSED: dict[str, str] = DATA["refused"]


def test_the_vectors_are_many_and_cover_every_signature() -> None:
    functions = {
        name
        for name, value in vars(SIGNATURES).items()
        if inspect.isfunction(value) and value.__module__ == MODULE_NAME
    }
    assert len(ACCEPTED) >= 30
    assert not set(ACCEPTED) & set(REFUSED)
    assert functions == set(ACCEPTED) | set(REFUSED)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_inferred_schema_matches_the_vector(name: str) -> None:
    fn = getattr(SIGNATURES, name)
    expected = ACCEPTED[name]
    description, schema = infer_schema(fn)
    Draft202012Validator.check_schema(schema)
    # compare as JSON text too: a tuple or a non-str key would compare equal but not serialise
    assert json.loads(json.dumps(schema)) == schema
    assert {"description": description, "input_schema": schema} == expected
    made = tool(fn)
    assert (made.name, made.description, made.input_schema) == (
        name,
        expected["description"],
        expected["input_schema"],
    )


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_uninferable_signature_is_refused_at_decoration_time(name: str) -> None:
    fn = getattr(SIGNATURES, name)
    with pytest.raises((TypeError, ValueError)) as info:
        tool(fn)
    assert REFUSED[name] in str(info.value)
    assert name in str(info.value)  # the message names the function (or the tool)
