"""The values a local Python MCP server's tool compares its input with, read from its source.

An MCP tool's code runs in its server, where the kit cannot read bytecode
(``_literals`` does that for Python targets). When the server is a Python script of
the project (``python server.py``, ``python -m server``, from its configured folder),
its source is parsed, never imported: each function registered with a decorator
named ``tool`` (``@mcp.tool``, ``@server.tool(...)``: FastMCP, the SDK's
``MCPServer``) is matched to the tool's name (its ``name=`` or the function's), and
the values it compares with are read as ``_literals`` reads them: the operands of
``==``, ``!=``, ``in``, ``not in`` and of ``case`` patterns, the arguments of
``startswith``/``endswith``, as constants or module-level names holding them, in
the tool's function and in the module's functions it calls by name. A server of
another language, an installed package's server or one its source cannot tell
offers nothing.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ._literals import MAX_MEMBERS, Literal, first_distinct, installed, kept

__all__ = ["server_literals"]

#: Sources larger than this are not parsed (a generated file is no server script).
MAX_SOURCE = 1 << 20
#: Interpreter options that take a value (``-X dev``, ``-W error``).
_VALUED = frozenset({"-X", "-W", "-Q"})
#: Parsed sources: path -> (modification time, size, tool name -> values).
_PARSED: dict[str, tuple[float, int, dict[str, tuple[Literal, ...]]]] = {}


def server_literals(tool: Any) -> tuple[Literal, ...]:
    """The values an MCP tool of a local Python server compares with; empty otherwise.

    Never raises; reads the server's source file, runs nothing.
    """
    try:
        connection = getattr(type(tool), "connection", None)
        if not isinstance(connection, property):  # not the kit's MCP tool
            return ()
        config = tool.connection.config
        name = tool.original_name
        script = _script(tuple(config.command), config.cwd)
        if script is None or not isinstance(name, str):
            return ()
        return _tools_of(script).get(name, ())
    except Exception:  # a source that cannot be read or parsed offers nothing
        return ()


def _script(command: tuple[str, ...], cwd: Path | None) -> Path | None:
    """The project's Python file a server command runs, if it runs one."""
    if len(command) < 2 or not Path(command[0]).name.startswith("python"):
        return None
    folder = Path(cwd) if cwd is not None else Path.cwd()
    args = list(command[1:])
    while args and args[0].startswith("-") and args[0] != "-m":
        option = args.pop(0)
        if option in _VALUED and args:
            args.pop(0)
    if not args:
        return None
    if args[0] == "-m":
        if len(args) < 2 or "." in args[1]:
            return None  # a submodule would need its package found: not read
        module = folder / args[1]
        for candidate in (folder / f"{args[1]}.py", module / "__main__.py", module / "server.py"):
            if candidate.is_file():
                return candidate
        return None
    path = Path(args[0])
    path = path if path.is_absolute() else folder / path
    if path.suffix != ".py" or not path.is_file() or installed(str(path.resolve())):
        return None
    return path


def _tools_of(path: Path) -> dict[str, tuple[Literal, ...]]:
    stat = path.stat()
    key = str(path.resolve())
    known = _PARSED.get(key)
    if known is not None and known[:2] == (stat.st_mtime, stat.st_size):
        return known[2]
    found: dict[str, tuple[Literal, ...]] = {}
    if stat.st_size <= MAX_SOURCE:
        tree = ast.parse(path.read_bytes(), filename=os.fspath(path))
        found = _read(tree)
    _PARSED[key] = (stat.st_mtime, stat.st_size, found)
    return found


def _read(tree: ast.Module) -> dict[str, tuple[Literal, ...]]:
    constants: dict[str, Any] = {}
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            functions[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                constants[target.id] = node.value
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.value is not None
        ):
            constants[node.target.id] = node.value
    tools: dict[str, tuple[Literal, ...]] = {}
    for function in functions.values():
        name = _tool_name(function)
        if name is not None:
            tools[name] = first_distinct(_compared(function, constants, functions))
    return tools


def _tool_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a ``tool`` decorator registers the function under, if it has one."""
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        if not (isinstance(target, ast.Attribute) and target.attr == "tool"):
            continue
        for keyword in call.keywords if call is not None else ():
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
        return function.name
    return None


def _compared(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    constants: dict[str, Any],
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> Iterator[Literal]:
    """The function's compared values in source order, then those of the module's
    functions it calls by name (one level)."""
    values, called = _read_function(function, constants, functions)
    yield from values
    for helper in called:
        if helper is not function:
            yield from _read_function(helper, constants, functions)[0]


def _read_function(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    constants: dict[str, Any],
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
) -> tuple[list[Literal], list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    found: list[tuple[int, int, Literal]] = []
    called: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in ast.walk(function):
        where = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        operands: list[ast.AST] = []
        if isinstance(node, ast.Compare):
            if all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops):
                operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Attribute) and callee.attr in ("startswith", "endswith"):
                operands = list(node.args[:1])
            elif isinstance(callee, ast.Name) and callee.id in functions:
                called.setdefault(callee.id, functions[callee.id])
        elif isinstance(node, ast.MatchValue):
            operands = [node.value]
        for operand in operands:
            found += [(*where, value) for value in _values(operand, constants)]
    ordered = [value for _, _, value in sorted(found, key=lambda item: item[:2])]
    return ordered, list(called.values())


def _values(node: ast.AST, constants: dict[str, Any], *, named: bool = True) -> Iterator[Literal]:
    if isinstance(node, ast.Name) and named and node.id in constants:
        held = constants[node.id]
        if not isinstance(held, ast.List):  # a module's list is data, not branches
            yield from _values(held, constants, named=False)
    elif isinstance(node, ast.Constant):
        yield from kept(node.value)
    elif isinstance(node, ast.Tuple | ast.Set | ast.List):
        for element in node.elts[:MAX_MEMBERS]:
            if isinstance(element, ast.Constant):
                yield from kept(element.value)
    elif isinstance(node, ast.Dict):
        for key in node.keys[:MAX_MEMBERS]:
            if isinstance(key, ast.Constant):
                yield from kept(key.value)
