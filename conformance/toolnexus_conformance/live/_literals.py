"""The values a Python tool's own code compares its input with, called like the user's values.

A tool that branches on one exact value (``if mode == "legacy-v1":``) keeps that
branch from random draws. Hypothesis draws the constants of the modules it finds
loaded now and then: measured on three one-tool modules with such a branch, the
line behind it was reached in 15 runs of 21. Read from the tool's code, the value is
offered as a user's value for a property is (``--toolnexus-arguments``): called once
before any draw, then mixed into the draws, every run.

What is read, without running any of the tool's code: the bytecode of the user's
functions found a few steps from the tool object (a reference ``@tool``'s function,
the function of a LangChain, openai-agents or pydantic-ai tool the kit adapts, the
methods of the user's tool class), with the functions nested in them and the
functions of the same file they call by name (one level). The values kept are the
operands of ``==``, ``!=``, ``in`` and ``not in`` (a tuple, set or dict gives each
member or key) and the arguments of ``startswith``/``endswith``, each a constant, a
module-level name or a value a closure holds. Only code outside installed packages,
the standard library and this kit is read: a library compares values of its own.
Over MCP or http there is no code to read.
"""

from __future__ import annotations

import dis
import inspect
import itertools
import os
import site
import sysconfig
import types
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["MAX_LITERALS", "first_distinct", "installed", "kept", "literal_values", "literals_of"]

#: The most values taken from one tool's code, in the order the code holds them.
MAX_LITERALS = 12
#: Longer strings are messages, not values a branch waits for.
MAX_LENGTH = 200
#: The most members read of one collection a value is looked up in (a table of data
#: is not a list of branches).
MAX_MEMBERS = 64
#: How far from the tool object its functions are looked for, and how many objects.
WALK_DEPTH = 4
MAX_WALK = 64
#: Packages whose code is the kit's: it compares values of its own.
_KIT = ("toolnexus_ref", "toolnexus_conformance", "pytest_toolnexus")
_OPERATORS = ("==", "!=")
_PREFIXES = frozenset({"startswith", "endswith"})
#: Loads of a value by name: a module's, or one a closure holds.
_NAMED = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF"})
_LOADS = frozenset({"LOAD_CONST", "LOAD_SMALL_INT", *_NAMED})

Literal = str | int | float


def literals_of(tool: Any) -> tuple[Literal, ...]:
    """The values ``tool``'s own code compares with; empty when it has no code to read.

    Never raises and runs none of the tool's code: attributes are read statically.
    """
    try:
        seen: set[types.CodeType] = set()
        return first_distinct(
            value for function in _functions(tool) for value in _scan(function, seen, depth=1)
        )
    except Exception:  # a tool object nothing can be read from offers nothing
        return ()


def first_distinct(values: Iterable[Literal]) -> tuple[Literal, ...]:
    """The first ``MAX_LITERALS`` distinct values, in order (``1`` and ``1.0`` apart);
    reads no further than that."""
    found: dict[tuple[type, Literal], None] = {}
    for value in values:
        found.setdefault((type(value), value), None)
        if len(found) >= MAX_LITERALS:
            break
    return tuple(value for _, value in found)


def kept(value: Any) -> Iterator[Literal]:
    """``value`` if it is one worth calling with: a string of 1 to ``MAX_LENGTH``
    characters, or a number (a boolean is no value a branch waits for)."""
    if isinstance(value, bool):
        return
    if isinstance(value, str):
        if 0 < len(value) <= MAX_LENGTH:
            yield value
    elif isinstance(value, int | float):
        yield value


def literal_values(schema: Any, literals: tuple[Literal, ...]) -> dict[str, tuple[Any, ...]]:
    """The literals per top-level property whose type may hold them (strings to string
    properties, numbers to number ones); the caller validates each call it builds."""
    from ..arguments._edges import _types  # the generator's reading of ``type``

    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping) or not literals:
        return {}
    out: dict[str, tuple[Any, ...]] = {}
    for name, node in properties.items():
        if not isinstance(name, str) or not isinstance(node, Mapping):
            continue
        kinds = set(_types(node))
        fit = tuple(v for v in literals if _fits(v, kinds))
        if fit:
            out[name] = fit
    return out


def _fits(value: Literal, kinds: set[str]) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return "string" in kinds
    if isinstance(value, int):
        return bool(kinds & {"integer", "number"})
    return "number" in kinds


# -- the tool's own functions ------------------------------------------------------------
def _functions(tool: Any) -> Iterator[types.FunctionType]:
    """The tool's functions whose code is the user's, read without running any code.

    A short walk from the tool object: its attributes that hold functions or callable
    objects, the object an adapter of the kit's wraps (``wrapped``: a LangChain,
    openai-agents or pydantic-ai tool), and what a library's function closed over
    (openai-agents keeps the user's function three steps from its tool); at most
    ``MAX_WALK`` objects, ``WALK_DEPTH`` steps away. A user's class gives its methods.
    """
    seen: set[int] = set()
    found: list[types.FunctionType] = []
    layer: list[Any] = [tool]
    for _ in range(WALK_DEPTH + 1):
        following: list[Any] = []
        for value in layer:
            if id(value) in seen or len(seen) >= MAX_WALK:
                continue
            seen.add(id(value))
            function = _plain_function(value)
            if function is not None:
                if _local(function.__module__, function.__code__.co_filename):
                    found.append(function)
                else:  # a library's function: what it closed over
                    following += _closed_over(function)
                continue
            if isinstance(value, type):
                continue
            own = _instance_dict(value)
            following += [v for v in itertools.islice(own.values(), MAX_MEMBERS) if _callable(v)]
            if "wrapped" in own:
                following.append(own["wrapped"])
            for cls in type(value).__mro__:
                if _local(getattr(cls, "__module__", None), None):
                    following += [v for v in vars(cls).values() if _callable(v)]
        layer = following
    yield from dict.fromkeys(found)


def _closed_over(function: types.FunctionType) -> list[Any]:
    return [value for _, value in itertools.islice(_cells(function), MAX_MEMBERS)]


def _cells(function: types.FunctionType) -> Iterator[tuple[str, Any]]:
    """The names and values the function's closure holds (an empty cell holds none)."""
    for name, cell in zip(function.__code__.co_freevars, function.__closure__ or (), strict=False):
        try:
            yield name, cell.cell_contents
        except ValueError:  # an empty cell
            continue


def _callable(value: Any) -> bool:
    if isinstance(value, type):
        return False
    if isinstance(value, types.FunctionType | types.MethodType | staticmethod | classmethod):
        return True
    return callable(value) and not isinstance(value, types.BuiltinFunctionType)


def _instance_dict(value: Any) -> dict[str, Any]:
    """The object's own attributes, unless its class replaced ``__dict__`` (a property
    would run the class's code)."""
    if not isinstance(
        inspect.getattr_static(type(value), "__dict__", None), types.GetSetDescriptorType
    ):
        return {}
    try:
        found = object.__getattribute__(value, "__dict__")
    except AttributeError:
        return {}
    return found if isinstance(found, dict) else {}


def _plain_function(candidate: Any) -> types.FunctionType | None:
    if isinstance(candidate, staticmethod | classmethod):
        candidate = candidate.__func__
    if isinstance(candidate, types.MethodType):
        candidate = candidate.__func__
    seen = 0
    while not isinstance(candidate, types.FunctionType) and seen < 10:
        wrapped = inspect.getattr_static(candidate, "__wrapped__", None)
        if wrapped is None:
            return None
        candidate, seen = wrapped, seen + 1
    # ``functools.wraps`` chains: the innermost is the code written.
    while seen < 10:
        inner = candidate.__dict__.get("__wrapped__")
        if not isinstance(inner, types.FunctionType):
            break
        candidate, seen = inner, seen + 1
    return candidate if isinstance(candidate, types.FunctionType) else None


def _installed() -> tuple[str, ...]:
    """The standard library's folders and every site-packages: not an interpreter's
    whole prefix, under which a project may live (``/usr/src/app``)."""
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    try:
        roots |= {*site.getsitepackages(), site.getusersitepackages()}
    except AttributeError:  # pragma: no cover - an old virtualenv's site module
        pass
    return tuple(sorted(os.path.join(root, "") for root in roots if root))


_INSTALLED = _installed()


def installed(filename: str) -> bool:
    """A file of the standard library or of an installed package: this interpreter's, or
    any environment's ``site-packages`` (an MCP server may run in another)."""
    if filename.startswith(_INSTALLED):
        return True
    return any(part in ("site-packages", "dist-packages") for part in Path(filename).parts)


def _local(module: str | None, filename: str | None) -> bool:
    """Code the user wrote: not the kit's, not an installed package's or the standard library's."""
    if module is None or module.split(".")[0] in _KIT or module == "builtins":
        return False
    if filename is None:
        return True
    return not filename.startswith("<") and not installed(filename)


# -- the comparisons in their bytecode ---------------------------------------------------
def _scan(
    function: types.FunctionType, seen: set[types.CodeType], *, depth: int
) -> Iterator[Literal]:
    """The function's compared values, then its nested code's, then those of the
    functions of its file it calls (``depth`` calls deep)."""
    known = {**function.__globals__, **dict(_cells(function))}  # closed-over values too
    yield from _scan_code(function.__code__, known, seen, depth=depth)


def _scan_code(
    code: types.CodeType, known: Mapping[str, Any], seen: set[types.CodeType], *, depth: int
) -> Iterator[Literal]:
    if code in seen:
        return
    seen.add(code)
    instructions = list(dis.get_instructions(code))
    called: list[types.FunctionType] = []
    for index, instruction in enumerate(instructions):
        operation = instruction.opname
        if operation == "CONTAINS_OP" or (
            operation == "COMPARE_OP"
            and instruction.argrepr.removeprefix("bool(")[:2] in _OPERATORS
        ):
            # The right operand, and the left one when the right is a single load (else
            # the instruction before is the right operand's own, an f-string's part say).
            right = instructions[index - 1] if index else None
            if right is not None and _single_load(right):
                yield from _values(right, known)
                if index > 1:
                    yield from _values(instructions[index - 2], known)
        elif operation in ("LOAD_ATTR", "LOAD_METHOD") and instruction.argval in _PREFIXES:
            for operand in instructions[index + 1 : index + 2]:
                yield from _values(operand, known)
        elif operation in ("LOAD_GLOBAL", "LOAD_NAME") and depth > 0:
            target = known.get(instruction.argval)
            if (
                isinstance(target, types.FunctionType)
                and target.__code__.co_filename == code.co_filename
            ):
                called.append(target)
    for constant in code.co_consts:  # lambdas, comprehensions, nested functions
        if isinstance(constant, types.CodeType):
            yield from _scan_code(constant, known, seen, depth=depth)
    for function in called:
        yield from _scan(function, seen, depth=depth - 1)


def _single_load(instruction: dis.Instruction) -> bool:
    """A load that is a whole operand (a local, a constant, a name), not an attribute's last step."""
    name = instruction.opname
    return name.startswith("LOAD_") and "ATTR" not in name and "METHOD" not in name


def _values(instruction: dis.Instruction, known: Mapping[str, Any]) -> Iterator[Literal]:
    if instruction.opname not in _LOADS:
        return
    named = instruction.opname in _NAMED
    value = known.get(instruction.argval) if named else instruction.argval
    if isinstance(value, dict):  # ``key in HANDLERS``: each key a branch
        value = tuple(itertools.islice(value, MAX_MEMBERS))
    members = value if isinstance(value, tuple | frozenset | set) else (value,)
    for member in itertools.islice(members, MAX_MEMBERS):
        yield from kept(member)
