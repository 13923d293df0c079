"""The values a tool's own code compares its input with are called, every run (``_literals``)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from toolnexus_conformance._model import Outcome
from toolnexus_conformance._options import ExecuteMode, RunOptions, ToolArguments
from toolnexus_conformance._runner import check_tools
from toolnexus_conformance.live._given import with_literals
from toolnexus_conformance.live._literals import MAX_LITERALS, literal_values, literals_of

from pytest_toolnexus._options import CONFORMANCE, ONLY, TARGET
from toolnexus_ref import ToolResult
from toolnexus_ref.native import tool

MODE = "legacy-v1"
MODES = {"fast": 1, "careful": 2}
LIMIT = 250


def _helper(value: str) -> bool:
    return value.endswith(".bak") or _deeper(value)


def _deeper(value: str) -> bool:
    return value == "two-calls-away"  # further than one call: not read


def comparing(text: str, mode: str, count: int, ratio: float) -> str:
    if text == "boom-never" or text != "other":
        pass
    if text in ("alpha", "beta") or text in {"gamma"}:
        pass
    if text.startswith("admin:") or mode == MODE or mode in MODES:
        pass
    if count == 42 or count > LIMIT or ratio == 0.25 or count is True:
        pass
    if text == "x" * 300:  # a message, not a value: too long
        pass
    checks = [lambda t: t == "in-a-lambda"]
    return str(_helper(text) and checks)


def written_otherwise(text: str, mode: str) -> bool:
    if f"{text}-suffix" == mode or "reversed" == text:  # noqa: SIM300
        return True
    match mode:
        case "matched":
            return True
    return False


def test_the_operands_of_comparisons_are_read_from_the_code_and_what_it_calls() -> None:
    found = literals_of(comparing)
    assert found[:4] == ("boom-never", "other", "alpha", "beta")
    for expected in ("gamma", "admin:", MODE, "fast", "careful", 42, 0.25, "in-a-lambda"):
        assert expected in found, (expected, found)
    assert len(found) == MAX_LITERALS  # the first twelve, in the order the code holds them
    assert LIMIT not in found  # an order: no value
    assert True not in found  # an identity: no value
    assert "x" * 300 not in found
    # A part of what is compared is no value it is compared with; the constant may come
    # first; a ``case`` compares too.
    assert literals_of(written_otherwise) == ("reversed", "matched")


def test_nested_code_and_a_called_function_of_the_same_file_are_read_one_level_deep() -> None:
    def small(value: str) -> str:
        checks = [lambda t: t == "in-a-lambda"]
        return str(_helper(value) and checks)

    found = literals_of(small)
    assert found == ("in-a-lambda", ".bak")
    assert "two-calls-away" not in found


def test_a_reference_tool_is_read_through_its_function() -> None:
    @tool
    def shout(text: str) -> str:
        """Shout it."""
        if text == "quiet-please":
            return text
        return text.upper()

    assert literals_of(shout) == ("quiet-please",)


class Mapper:
    """A tool object of the user's class: its methods are its code."""

    name = "mapper"
    description = "Maps a key."
    source = "custom"
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "key": {"type": "string"},
            "size": {"type": "integer"},
            "flag": {"type": "boolean"},
        },
    }

    @property
    def fn(self) -> Any:  # never run: the code is read, not the object
        raise AssertionError("a property of the tool was run")

    def execute(self, args: Any, ctx: Any = None) -> Any:
        if isinstance(args, Mapping) and args.get("key") == "reset-all":
            raise RuntimeError("the branch behind the literal")
        if isinstance(args, Mapping) and args.get("size") == 7:
            return ToolResult.error("seven")
        return ToolResult.ok("ok")


TABLE = {f"key-{i}": i for i in range(100_000)}


def test_a_big_table_gives_its_first_keys_only() -> None:
    def look(key: str) -> bool:
        return key in TABLE

    assert literals_of(look) == tuple(f"key-{i}" for i in range(MAX_LITERALS))


def test_a_tool_objects_class_is_read_and_none_of_its_code_runs() -> None:
    assert literals_of(Mapper()) == ("reset-all", 7)


def _keyed(prefix: str) -> Any:
    def lookup(key: str) -> str:
        """Look a key up."""
        if key == f"{prefix}-branch":  # not a constant: nothing to read
            return "found"
        return "found" if key == prefix else key

    return lookup


def test_other_libraries_tools_are_read_through_the_kits_adapters() -> None:
    """The user's function is some steps from the adapted object: a field of a
    LangChain tool, a closure of an object of openai-agents', a pydantic-ai field."""
    from agents import function_tool
    from langchain_core.tools import StructuredTool
    from pydantic_ai import Tool

    from toolnexus_ref.adapters import adapt

    made = {
        "langchain": StructuredTool.from_function(_keyed("langchain")),
        "agents": function_tool(_keyed("agents")),
        "pydantic-ai": Tool(_keyed("pydantic-ai")),
    }
    for name, foreign in made.items():
        assert literals_of(adapt(foreign)) == (name,), name


class Shadowed:
    """A class whose ``__dict__`` is its own code: never asked."""

    @property
    def __dict__(self) -> Any:  # type: ignore[override]
        raise AssertionError("the tool's __dict__ property was run")

    def execute(self, args: Any, ctx: Any = None) -> Any:
        return "yes" if args == "own-method" else "no"


def test_a_class_that_replaced_its_dict_is_read_by_its_methods_alone() -> None:
    assert literals_of(Shadowed()) == ("own-method",)


def test_the_kits_installed_and_codeless_tools_offer_nothing() -> None:
    from toolnexus_ref.examples import toolkit

    assert all(literals_of(t) == () for t in toolkit.tools)  # the kit's own code
    assert literals_of(os.path.join) == ()  # the standard library's
    assert literals_of(pytest.approx) == ()  # an installed package's
    assert literals_of(object()) == ()
    assert literals_of(42) == ()


def test_code_under_an_interpreters_prefix_is_the_users_unless_installed() -> None:
    """A project in ``/usr/src/app`` (a common image's layout) is the user's code."""
    import sys
    import sysconfig

    from toolnexus_conformance.live._literals import _local

    assert _local("app.tools", os.path.join(sys.prefix, "src", "app", "tools.py"))
    assert _local("app.tools", os.path.join(sys.base_prefix, "src", "app", "tools.py"))
    assert not _local("json", os.path.join(sysconfig.get_paths()["stdlib"], "json", "x.py"))
    assert not _local("lib", os.path.join(sysconfig.get_paths()["purelib"], "lib", "x.py"))


def test_each_value_goes_to_the_properties_whose_type_holds_it() -> None:
    schema = Mapper.input_schema
    assert literal_values(schema, ("a", 7, 0.5, True)) == {"key": ("a",), "size": (7,)}
    assert literal_values({"type": "object"}, ("a",)) == {}
    assert literal_values(schema, ()) == {}
    user = ToolArguments(values={"key": ("mine", "reset-all")})
    merged = with_literals(user, schema, Mapper())
    assert merged.values == {"key": ("mine", "reset-all"), "size": (7,)}  # the user's first


OPTIONS = RunOptions(execute=ExecuteMode.ALL, seed=3, call_timeout=2.0, grace=0.3, depth=0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_raise_behind_a_literal_is_found_at_every_seed(seed: int) -> None:
    """At the floor of examples (depth 0) a random draw never spells the literal."""
    options = dataclasses.replace(OPTIONS, seed=seed)
    (verdict,) = check_tools(Mapper(), select=["TN601"], options=options)
    assert verdict.outcome is Outcome.FAILED, verdict.message
    assert any(f.sent == {"key": "reset-all"} for f in verdict.findings), verdict.findings


EXITS = '''
import os


def store(path: str) -> str:
    """Store a path."""
    if path == "shutdown-now":
        os._exit(3)
    return path


tools = [store]
'''


def test_a_tool_that_ends_its_process_behind_a_literal_is_found_in_its_own_process(
    pytester: pytest.Pytester,
) -> None:
    """Isolated (the default): the literal is read in the worker, where the tool is."""
    pytester.makepyfile(exits=EXITS)
    result = pytester.runpytest_subprocess(
        CONFORMANCE, ONLY, TARGET, "exits:tools", "-p", "no:cacheprovider", "-rf"
    )
    assert result.ret == 1, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*store: TN606*",
            "found:  the tool ended its process (exit status 3)",
            "  sent: {'path': 'shutdown-now'}",
        ]
    )
