"""What a value holds: the one rule every entry point uses to find the tools in a value.

The plugin, the runner, the MCP server, ``toolnexus-serve``, the toolkit and the
snapshots all accept "something that holds tools". They share this rule, so a value
means the same thing everywhere:

1. a foreign tool object (LangChain, upstream ``toolnexus``, OpenAI Agents,
   pydantic-ai) is adapted into one Tool (``toolnexus_ref.adapters``);
2. a Tool (anything with ``name`` and a callable ``execute``) is itself;
3. a toolkit (``tools`` as a sequence, a mapping of tools, or a method returning
   one; or LangChain's ``get_tools()``) holds what its ``tools`` holds;
4. an object whose class has ``@tool`` methods (a method group) holds those;
5. an iterable holds each of its items (toolkits among them are expanded; an item
   that is none of the above stays, so the checks can say what is wrong with it);
6. a callable with no required parameters is a factory, sync or async: it holds
   what it returns;
7. a plain function with parameters becomes a tool through ``@tool`` inference.

Anything else is a ``NotToolsError`` that names what was found and lists these
forms; nothing walks an arbitrary object's attributes. The same module holds the
one ``module:attr`` importer.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "TOOL_FORMS",
    "ImportSpecError",
    "NotToolsError",
    "as_tools",
    "as_tools_async",
    "import_object",
    "is_tool",
]

#: What a value may be, as the error messages list it.
TOOL_FORMS: tuple[str, ...] = (
    "a Tool (an object with name, description, input_schema and execute)",
    "a toolkit (an object whose `tools` is a list, a mapping, or a method returning one,"
    " or a LangChain toolkit's get_tools())",
    "a list or other iterable of tools and toolkits",
    "a factory: a function with no required parameters, sync or async, returning one of these",
    "a plain function with type hints (made a tool by @tool inference)",
    "an object whose class has @tool methods",
    "a LangChain BaseTool, an upstream toolnexus Tool, an OpenAI Agents FunctionTool"
    " or a pydantic-ai Tool",
)

#: How many factories deep the rule follows (a factory returning a factory ...).
_MAX_FACTORY_DEPTH = 3


class NotToolsError(TypeError):
    """A value that holds no tools in any accepted form; the message says what was found."""


class ImportSpecError(ImportError):
    """A ``module:attr`` spec that is malformed or cannot be imported; the message says why."""


# -- the importer --------------------------------------------------------------------


def import_object(spec: str, *, base_dir: str | Path | None = None) -> Any:
    """Import ``package.module:attr.path`` and return the attribute.

    ``base_dir`` (the project root) is added to the end of ``sys.path``, so a
    project's own modules import without installing and never shadow installed ones.
    """
    module_name, sep, attr_path = spec.strip().partition(":")
    if not sep or not module_name or not attr_path:
        raise ImportSpecError(f"expected package.module:attr, got {spec!r}")
    if base_dir is not None and str(base_dir) not in sys.path:
        sys.path.append(str(base_dir))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ImportSpecError(
            f"cannot import {module_name!r} for {spec!r}: {type(exc).__name__}: {exc}"
        ) from exc
    value: Any = module
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise ImportSpecError(
                f"module {module_name!r} has no attribute {attr_path!r}"
            ) from None
    return value


# -- the rule ------------------------------------------------------------------------


def _has(value: object, attribute: str) -> bool:
    """Whether ``value`` has the attribute; one whose reading raises counts as present."""
    try:
        getattr(value, attribute)
    except AttributeError:
        return False
    except BaseException:  # SystemExit, KeyboardInterrupt from a property: present, broken
        return True
    return True


#: What ``_declared`` returns for an attribute neither the object nor its class declares.
_ABSENT = object()


def _declared(value: object, attribute: str) -> object:
    """The attribute as the object or its class declares it, found without running any code.

    A property comes back as the property, not called: telling whether something is
    a tool must not run its properties, one of which may never return. ``_ABSENT``
    when it is declared nowhere static (an object that answers through
    ``__getattr__``, say), and then the caller has to ask the object itself.
    """
    try:
        return inspect.getattr_static(value, attribute, _ABSENT)
    except Exception:  # pragma: no cover - getattr_static runs none of the object's code
        return _ABSENT


def is_tool(value: object) -> bool:
    """A Tool by shape: a ``name`` and a callable ``execute`` (classes are not tools).

    Looser than ``isinstance(value, Tool)`` on purpose: an object that means to be a
    tool but lacks ``input_schema`` or ``source`` is still taken as one, so the
    checks say what it lacks instead of the target failing to load. Both attributes
    are looked up where they are declared, without calling a property: an ``execute``
    or ``name`` computed by one means to be a tool, and the checks read it, in
    bounded time, later.
    """
    if isinstance(value, type):
        return False
    if _declared(value, "name") is _ABSENT and not _has(value, "name"):
        return False
    execute = _declared(value, "execute")
    if execute is not _ABSENT:
        return callable(execute) or hasattr(type(execute), "__get__")
    try:
        return callable(getattr(value, "execute", None))
    except BaseException:
        return True  # a broken tool; the checks will say how


def _found(value: object) -> str:
    """What a value is, in words, for an error message."""
    if isinstance(value, type):
        meta = type(value).__name__
        return f"the class {value.__module__}.{value.__qualname__} (a {meta})"
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    try:
        shown = repr(value)
    except BaseException:
        shown = "<unreadable repr>"
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return f"a {kind}: {shown}"


def _not_tools(value: object, label: str, why: str = "") -> NotToolsError:
    forms = "\n  - ".join(TOOL_FORMS)
    extra = f" ({why})" if why else ""
    return NotToolsError(
        f"{label} holds no tools: found {_found(value)}{extra}. Accepted:\n  - {forms}"
    )


def _has_method_tools(value: object) -> bool:
    from .native import NativeTool

    return any(
        isinstance(member.__func__ if isinstance(member, staticmethod) else member, NativeTool)
        for cls in type(value).__mro__
        for member in vars(cls).values()
    )


def _required_parameters(fn: Callable[..., Any]) -> list[str] | None:
    """Names of the parameters a call must fill, or ``None`` when the signature is unknown."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    return [
        p.name
        for p in signature.parameters.values()
        if p.default is p.empty
        and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def _plain_function(value: object) -> bool:
    return inspect.isfunction(value) or inspect.ismethod(value)


def _infer_tool(fn: Callable[..., Any], label: str) -> Any:
    from .native import tool

    try:
        return tool(fn)
    except Exception as exc:
        where = getattr(fn, "__qualname__", repr(fn))
        raise NotToolsError(
            f"{label}: cannot make a tool of the function {where}(): {exc}. Give every"
            " parameter a type hint and the function a docstring, or decorate it with"
            " @tool(name=..., description=...) from toolnexus_ref"
        ) from exc


_Await = Callable[[Awaitable[Any]], Coroutine[Any, Any, Any]]


async def _await_here(value: Awaitable[Any]) -> Any:
    return await value


async def _refuse_await(value: Awaitable[Any]) -> Any:
    """The synchronous rule meets an awaitable: run it when no loop runs, else refuse."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_await_here(value))
    if inspect.iscoroutine(value):
        value.close()
    raise NotToolsError(
        "an async factory (or async `tools()`) cannot be resolved synchronously inside a"
        " running event loop; use `await as_tools_async(value)`"
    )


async def _call_factory(value: Callable[..., Any], label: str, wait: _Await) -> Any:
    try:
        made = value()
        if inspect.isawaitable(made):
            made = await wait(made)
    except NotToolsError:
        raise
    except Exception as exc:
        raise NotToolsError(
            f"the factory behind {label} raised {type(exc).__name__}: {exc}"
        ) from exc
    return made


async def _toolkit_tools(value: object, label: str, wait: _Await) -> Any | None:
    """What a toolkit's ``tools`` holds, or ``None`` when ``value`` is no toolkit."""
    attribute = "tools" if _has(value, "tools") else "get_tools"  # get_tools(): LangChain's
    try:
        inner = getattr(value, attribute, None)
    except Exception as exc:
        raise NotToolsError(
            f"reading {label}.{attribute} raised {type(exc).__name__}: {exc}"
        ) from exc
    if (
        inner is None
        or isinstance(inner, str | bytes)
        or (attribute == "get_tools" and not callable(inner))
    ):
        return None
    if callable(inner) and not is_tool(inner):
        if _required_parameters(inner):
            return None
        inner = await _call_factory(inner, f"{label}.{attribute}()", wait)
    if isinstance(inner, Mapping):
        return list(inner.values())
    if isinstance(inner, Iterable):
        return inner
    return None


async def _items(value: Iterable[Any], label: str, wait: _Await) -> list[Any]:
    """Each item of an iterable as tools: foreign ones adapted, toolkits expanded."""
    from .adapters import adapt

    out: list[Any] = []
    for index, item in enumerate(value):
        where = f"{label}[{index}]"
        adapted = adapt(item)
        if adapted is not None:
            out.append(adapted)
        elif is_tool(item):
            out.append(item)
        elif (inner := await _toolkit_tools(item, where, wait)) is not None:
            out.extend(await _items(inner, where, wait))
        elif _plain_function(item):
            out.append(_infer_tool(item, where))
        else:
            out.append(item)  # not a tool: the checks (or Toolkit.add) say what is wrong
    return out


async def _resolve(value: Any, label: str, wait: _Await, depth: int = 0) -> list[Any]:
    from .adapters import adapt

    adapted = adapt(value)
    if adapted is not None:
        return [adapted]
    if is_tool(value):
        return [value]
    inner = await _toolkit_tools(value, label, wait)
    if inner is not None:
        return await _items(inner, label, wait)
    if isinstance(value, Mapping):
        raise _not_tools(value, label, "a mapping; pass its values, or a toolkit")
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        return await _items(value, label, wait)
    if not isinstance(value, type) and _has_method_tools(value):
        from .native import tools_of

        return list(tools_of(value))
    if callable(value) and not isinstance(value, type):
        required = _required_parameters(value)
        if required == [] and depth < _MAX_FACTORY_DEPTH:
            made = await _call_factory(value, label, wait)
            return await _resolve(made, f"what {label} returned", wait, depth + 1)
        if required and _plain_function(value):
            return [_infer_tool(value, label)]
    if isinstance(value, type):
        raise _not_tools(value, label, "a class; pass an instance, or a factory function")
    raise _not_tools(value, label)


def as_tools(value: Any, *, label: str = "the value") -> list[Any]:
    """The tools ``value`` holds, as a list (see the module docstring for the rule).

    An async factory is awaited on a fresh event loop when none is running; inside
    a running loop use ``as_tools_async``. Raises ``NotToolsError``.
    """
    coroutine = _resolve(value, label, _refuse_await)
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: list[Any] = done.value
        return result
    coroutine.close()  # pragma: no cover - _refuse_await never suspends
    raise RuntimeError("the tool rule suspended without an event loop")  # pragma: no cover


async def as_tools_async(value: Any, *, label: str = "the value") -> list[Any]:
    """``as_tools`` for async code: async factories and ``tools()`` are awaited here."""
    return await _resolve(value, label, _await_here)
