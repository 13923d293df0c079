"""A target's declarations as plain data: read in the worker, judged in the session.

The static checks judge what a tool declares, not what it does; but reading a
declaration runs the target's code (a property, a ``conformance_extra()``, the
import itself). So the worker, which has imported the target, reads every tool's
declaration in its usual bounded pass (``read_subjects``) and sends the values as
builtins only: strings, numbers, lists, dicts. Anything else (a schema object, a
hostile ``str`` subclass) crosses as an ``Opaque`` stand-in that carries its type's
name and a bounded ``repr``. The session unpickles with every class lookup refused,
so nothing of the target can run there, and builds ``ToolSubject`` objects whose
``tool`` is a ``DeclaredTool``: the attributes checks read, and no code.
"""

from __future__ import annotations

import inspect
import io
import pickle
import sys
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path, PurePath
from typing import Any

from toolnexus_ref import ToolAnnotations

from .._reading import Hung, NotRead, Raised, read_bounded
from .._subject import MISSING, AttributeProblem, ToolSubject, read_subjects

__all__ = ["DeclaredTool", "Opaque", "declare", "dumps", "loads", "subjects_from"]

#: The longest ``repr`` of an opaque value kept.
_REPR_MAX = 300
#: Attributes some checks read off the tool itself when ``extra`` does not carry them.
TOOL_ATTRIBUTES = ("original_name", "server_name", "output_schema", "method")
#: How long encoding every declaration may go without returning (a hostile ``repr``).
_ENCODE_LIMIT = 60.0


class Opaque:
    """A value of the target's that is not plain data: its type's name and its ``repr``."""

    __slots__ = ("module", "text", "type_name")

    def __init__(self, type_name: str, module: str, text: str) -> None:
        self.type_name, self.module, self.text = type_name, module, text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


_OPAQUE_TYPES: dict[str, type[Opaque]] = {}


def _opaque(type_name: str, module: str, text: str) -> Opaque:
    """An ``Opaque`` whose class bears the original type's name (checks quote ``type(x).__name__``)."""
    cls = _OPAQUE_TYPES.get(type_name)
    if cls is None:
        cls = type(type_name, (Opaque,), {"__slots__": ()})
        _OPAQUE_TYPES[type_name] = cls
    return cls(type_name, module, text)


class DeclaredTool:
    """What stands for a tool in the session: the attributes checks read, no code."""

    def __init__(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        return f"<declared tool {getattr(self, 'name', '?')!r}>"


# -- the worker's half: encode -------------------------------------------------------
def _safe_repr(value: Any) -> str:
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError
        text = str.__str__(text)  # a str subclass of the target's: its characters only
    except BaseException:
        text = f"<{type(value).__qualname__} object>"
    return text if len(text) <= _REPR_MAX else text[: _REPR_MAX - 1] + "…"


def _leaf(value: Any) -> tuple[Any, ...]:
    if value is MISSING:
        return ("m",)
    if isinstance(value, AttributeProblem):
        return ("p", value.attribute, value.error, value.kind)
    if isinstance(value, ToolAnnotations):
        return ("h", *(getattr(value, f.name) for f in fields(value)))
    if value is None or type(value) in _ATOMS:
        return ("a", value)
    if isinstance(value, PurePath) and type(value).__module__ == "pathlib":
        return ("f", str(value))
    kind = type(value)
    return ("o", kind.__name__, str(getattr(kind, "__module__", "")), _safe_repr(value))


_ATOMS = (bool, int, float, str, bytes)
_CONTAINERS = (dict, list, tuple)


def _skill_type() -> Any:
    """The reference's ``Skill`` (a skills tool's extra), if it is loaded at all."""
    module = sys.modules.get("toolnexus_ref.skills._discover")
    return getattr(module, "Skill", None)


def _encode(value: Any) -> tuple[list[tuple[Any, ...]], int]:
    """``value`` as a flat list of nodes (children by index) and the root's index.

    Flat, and built with a stack of our own: a schema nested five thousand levels
    deep, or one that contains itself, crosses whole, as the checks would have seen it.
    """
    nodes: list[tuple[Any, ...]] = []
    seen: dict[int, int] = {}
    todo: list[tuple[int, Any]] = []
    skill = _skill_type()

    def ref(item: Any) -> int:
        if type(item) in _CONTAINERS or (skill is not None and type(item) is skill):
            found = seen.get(id(item))
            if found is not None:
                return found
            seen[id(item)] = len(nodes)
            todo.append((len(nodes), item))
            nodes.append(())
        else:
            nodes.append(_leaf(item))
        return len(nodes) - 1

    root = ref(value)
    while todo:
        index, item = todo.pop()
        if type(item) is dict:
            nodes[index] = ("d", [(ref(k), ref(v)) for k, v in dict.items(item)])
        elif type(item) is list:
            nodes[index] = ("l", [ref(v) for v in list.__iter__(item)])
        elif type(item) is skill:
            nodes[index] = ("s", [ref(getattr(item, f.name)) for f in fields(skill)])
        else:
            nodes[index] = ("t", [ref(v) for v in tuple.__iter__(item)])
    return nodes, root


def _candidates(tool: Any) -> list[Any]:
    """What may tell where ``tool`` is declared: its function, then its class."""
    candidates: list[Any] = []
    for key in ("fn", "func", "function", "_fn", "_func", "callback", "coroutine"):
        found = getattr(tool, "__dict__", {}).get(key)
        if callable(found):
            candidates.append(found)
    candidates.append(type(tool))
    return candidates


def _source_line(candidate: Any) -> tuple[str, int] | None:
    """The file and first line of a function or class; ``None`` when it tells nothing.

    A class's are found once: finding them parses its whole file
    (``inspect.findsource``), and ten thousand tools of one class would parse it ten
    thousand times.
    """
    if not isinstance(candidate, type):
        return _read_source_line(candidate)
    known = _CLASS_LINES.get(id(candidate))
    if known is not None and known[0]() is candidate:
        return known[1]
    found = _read_source_line(candidate)
    _CLASS_LINES[id(candidate)] = (weakref.ref(candidate), found)
    return found


#: Per class (by ``id``, with a weak reference to tell a new class of the same id):
#: ``_source_line``'s answer.
_CLASS_LINES: dict[int, tuple[weakref.ref[type], tuple[str, int] | None]] = {}


def _read_source_line(candidate: Any) -> tuple[str, int] | None:
    try:
        unwrapped = inspect.unwrap(candidate)
        path = inspect.getsourcefile(unwrapped)
        if path is None:
            return None
        if isinstance(unwrapped, type) and "toolnexus_ref" in (unwrapped.__module__ or ""):
            return None  # the reference's own tool classes say nothing of where a tool is
        return path, int(inspect.getsourcelines(unwrapped)[1])
    except (OSError, TypeError):
        return None


def _position(tool: Any, values: dict[str, Any]) -> tuple[str, int] | None:
    """Where the tool is declared: its function's (or class's) file and first line."""
    for candidate in _candidates(tool):
        found = _source_line(candidate)
        if found is not None:
            return found
    return None


def _tool_attribute(name: str) -> Any:
    def read(tool: Any, values: dict[str, Any]) -> Any:
        return getattr(tool, name, MISSING)

    return read


def declare(
    tools: Sequence[Any],
    label: str,
    extras: Sequence[Mapping[str, Any] | None] | None,
    *,
    limit: float | None = None,
    subjects: Sequence[ToolSubject] | None = None,
) -> list[dict[str, Any]]:
    """Every tool's declaration as plain data, read in bounded time (in the worker);
    ``subjects``: the tools' ``read_subjects`` when the caller has read them already."""
    if subjects is None:
        subjects = read_subjects(tools, label, extras, limit=limit)
    steps = [(f"tool.{name}", _tool_attribute(name)) for name in TOOL_ATTRIBUTES]
    steps.append(("position", _position))
    rows = read_bounded(tools, steps, limit=limit)
    declared = []
    for subject, row in zip(subjects, rows, strict=True):
        attributes: dict[str, Any] = {}
        for name in TOOL_ATTRIBUTES:
            value = row[f"tool.{name}"]
            if isinstance(value, Raised | Hung | NotRead):
                continue  # a check reading it finds nothing, as a getattr default would
            if value is not MISSING:
                attributes[name] = value
        position = row["position"]
        data = {
            "name": subject.name,
            "description": subject.description,
            "input_schema": subject.input_schema,
            "source": subject.source,
            "display_name": subject.display_name,
            "extra": dict(subject.extra),
            "hints": subject.hints,
            "execute_async": subject.execute_async,
            "on_loop": subject.on_loop,
            "http_method": subject.http_method,
            "tool": attributes,
            "position": position if isinstance(position, tuple) else None,
        }
        declared.append(data)
    return declared


def dumps(declared: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> bytes:
    """The declarations and the target's info, encoded (bounded: a hostile ``repr`` is cut off)."""
    encoded = read_bounded(
        [(list(declared), dict(info))],
        [("encoded", lambda pair, values: _pickled(pair))],
        limit=_ENCODE_LIMIT,
    )[0]["encoded"]
    if isinstance(encoded, Raised | Hung | NotRead):
        raise RuntimeError(f"the declarations could not be encoded: {encoded}")
    return bytes(encoded)


#: The two forms of the pickle: the value itself, and the flat graph of ``_encode``.
_PLAIN, _FLAT = "plain", "flat"
_PLAIN_TYPES = frozenset({type(None), *_ATOMS, *_CONTAINERS})


class _PlainPickler(pickle.Pickler):
    """Builtins as pickle writes them; anything else as a persistent id (``_leaf``'s tuple).

    Every object the pickle holds passes ``persistent_id`` first, so no ``__reduce__``
    of the target's runs and none of its classes is named in the pickle.
    """

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.skill = _skill_type()

    def persistent_id(self, obj: Any) -> Any:
        kind = type(obj)
        if kind in _PLAIN_TYPES:
            return None
        if kind is self.skill:
            return ("s", [getattr(obj, f.name) for f in fields(kind)])
        return _leaf(obj)


def _pickled(pair: tuple[list[Any], dict[str, Any]]) -> bytes:
    """``pair`` pickled as it is, as pickle's own C code does it fast; a value nested
    deeper than pickle recurses crosses as ``_encode``'s flat graph instead."""
    out = io.BytesIO()
    try:
        _PlainPickler(out).dump((_PLAIN, pair))
    except RecursionError:
        return pickle.dumps((_FLAT, _encode(pair)), protocol=pickle.HIGHEST_PROTOCOL)
    return out.getvalue()


# -- the session's half: decode ------------------------------------------------------
class _PlainUnpickler(pickle.Unpickler):
    """Builtins only: any class or function a pickle names is refused, never imported.

    The values ``_PlainPickler`` wrote as persistent ids are built here, as
    ``_decode`` builds them: stand-ins and the kit's own types, from plain data.
    """

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"the declarations name {module}.{name}: refused")

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is not tuple or not pid:
            raise pickle.UnpicklingError(f"an unknown persistent id: {pid!r}")
        if pid[0] == "s":
            return _skill(list(pid[1]))
        return _leaf_value(pid)


def _leaf_value(node: tuple[Any, ...]) -> Any:
    """The value of one of ``_leaf``'s tuples."""
    kind = node[0]
    if kind == "a":
        return node[1]
    if kind == "m":
        return MISSING
    if kind == "p":
        return AttributeProblem(str(node[1]), str(node[2]), node[3])
    if kind == "h":
        return ToolAnnotations(*node[1:])
    if kind == "o":
        return _opaque(str(node[1]), str(node[2]), str(node[3]))
    if kind == "f":
        return Path(str(node[1]))
    raise ValueError(f"unknown node {kind!r}")


def _decode(nodes: list[tuple[Any, ...]], root: int) -> Any:
    """The value ``_encode`` flattened; lists and dicts first, tuples once their items exist."""
    built: list[Any] = [None] * len(nodes)
    tuples: list[int] = []
    for index, node in enumerate(nodes):
        kind = node[0]
        if kind == "d":
            built[index] = {}
        elif kind == "l":
            built[index] = []
        elif kind in ("t", "s"):
            tuples.append(index)
        else:
            built[index] = _leaf_value(node)
    pending = set(tuples)
    for start in tuples:  # each after the tuples (skills) inside it, with a stack of our own
        stack = [start]
        while stack:
            index = stack[-1]
            if index not in pending:
                stack.pop()
                continue
            inner = [i for i in nodes[index][1] if i in pending and i not in stack]
            if inner:
                stack.extend(inner)
                continue
            if any(i in pending and i != index for i in nodes[index][1]):
                raise ValueError("a tuple that contains itself")
            pending.discard(index)
            stack.pop()
            items = [built[i] for i in nodes[index][1]]
            built[index] = tuple(items) if nodes[index][0] == "t" else _skill(items)
    for index, node in enumerate(nodes):
        if node[0] == "d":
            built[index].update((built[k], built[v]) for k, v in node[1])
        elif node[0] == "l":
            built[index].extend(built[i] for i in node[1])
    return built[root]


def _skill(items: list[Any]) -> Any:
    from toolnexus_ref.skills._discover import Skill

    return Skill(*items)


def loads(data: bytes) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The declarations and the target's info, from ``dumps``; no code of the target runs."""
    form, value = _PlainUnpickler(io.BytesIO(data)).load()
    if form == _FLAT:
        value = _decode(*value)
    elif form != _PLAIN:
        raise ValueError(f"declarations of an unknown form {form!r}")
    declared, info = value
    return list(declared), dict(info)


def subjects_from(declared: Sequence[Mapping[str, Any]], target: str) -> list[ToolSubject]:
    """``ToolSubject`` objects as ``read_subjects`` built them in the worker, for ``target``."""
    names = [entry["name"] for entry in declared]
    subjects = []
    for entry in declared:
        attributes = {
            "name": entry["name"],
            "description": entry["description"],
            "input_schema": entry["input_schema"],
            "source": entry["source"],
            **entry["tool"],
        }
        hints = entry["hints"]
        subjects.append(
            ToolSubject(
                tool=DeclaredTool(attributes),
                target=target,
                name=entry["name"],
                description=entry["description"],
                input_schema=entry["input_schema"],
                source=entry["source"],
                display_name=str(entry["display_name"]),
                sibling_names=names,
                extra=dict(entry["extra"]),
                hints=hints if isinstance(hints, ToolAnnotations) else None,
                execute_async=entry["execute_async"],
                on_loop=entry["on_loop"],
                http_method=entry["http_method"],
                position=entry.get("position"),
            )
        )
    return subjects
