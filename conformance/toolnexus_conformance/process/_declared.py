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
from collections.abc import Mapping, Sequence
from dataclasses import fields
from typing import Any

from toolnexus_ref import ToolAnnotations

from .._reading import Hung, NotRead, Raised, read_bounded
from .._subject import MISSING, AttributeProblem, ToolSubject, read_subjects

__all__ = ["DeclaredTool", "Opaque", "declare", "dumps", "loads", "subjects_from"]

#: Marks an encoded value that is not plain data (a tuple whose first item is this).
_TAG = "\x00toolnexus-declared\x00"
#: How deep a declared value is copied; deeper parts become ``Opaque``.
_DEPTH = 64
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
    except BaseException:
        text = f"<{type(value).__qualname__} object>"
    return text if len(text) <= _REPR_MAX else text[: _REPR_MAX - 1] + "…"


def _encode(value: Any, depth: int = 0) -> Any:
    """``value`` as builtins, with tagged tuples for what is not plain data."""
    if value is None or type(value) in (bool, int, float, str, bytes):
        return value
    if value is MISSING:
        return (_TAG, "missing")
    if isinstance(value, AttributeProblem):
        return (_TAG, "problem", value.attribute, value.error, value.kind)
    if isinstance(value, ToolAnnotations):
        return (_TAG, "hints", *(getattr(value, f.name) for f in fields(value)))
    if depth < _DEPTH:
        if type(value) is dict:
            return {_encode(k, depth + 1): _encode(v, depth + 1) for k, v in dict.items(value)}
        if type(value) is list:
            return [_encode(v, depth + 1) for v in list.__iter__(value)]
        if type(value) is tuple:
            return tuple(_encode(v, depth + 1) for v in tuple.__iter__(value))
    kind = type(value)
    return (_TAG, "opaque", kind.__name__, str(getattr(kind, "__module__", "")), _safe_repr(value))


def _position(tool: Any, values: dict[str, Any]) -> tuple[str, int] | None:
    """Where the tool is declared: its function's (or class's) file and first line."""
    candidates: list[Any] = []
    for key in ("fn", "func", "function", "_fn", "_func", "callback", "coroutine"):
        found = getattr(tool, "__dict__", {}).get(key)
        if callable(found):
            candidates.append(found)
    candidates.append(type(tool))
    for candidate in candidates:
        try:
            unwrapped = inspect.unwrap(candidate)
            path = inspect.getsourcefile(unwrapped)
            if path is None:
                continue
            if isinstance(unwrapped, type) and "toolnexus_ref" in (unwrapped.__module__ or ""):
                continue  # the reference's own tool classes say nothing of where a tool is
            return path, int(inspect.getsourcelines(unwrapped)[1])
        except (OSError, TypeError):
            continue
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
) -> list[dict[str, Any]]:
    """Every tool's declaration as plain data, read in bounded time (in the worker)."""
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
        [("encoded", lambda pair, values: _encode(pair))],
        limit=_ENCODE_LIMIT,
    )[0]["encoded"]
    if isinstance(encoded, Raised | Hung | NotRead):
        raise RuntimeError(f"the declarations could not be encoded: {encoded}")
    return pickle.dumps(encoded, protocol=pickle.HIGHEST_PROTOCOL)


# -- the session's half: decode ------------------------------------------------------
class _PlainUnpickler(pickle.Unpickler):
    """Builtins only: any class or function a pickle names is refused, never imported."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"the declarations name {module}.{name}: refused")


def _decode(value: Any) -> Any:
    if type(value) is tuple:
        if value and value[0] == _TAG:
            kind = value[1]
            if kind == "missing":
                return MISSING
            if kind == "problem":
                return AttributeProblem(str(value[2]), str(value[3]), value[4])
            if kind == "hints":
                return ToolAnnotations(*value[2:])
            return _opaque(str(value[2]), str(value[3]), str(value[4]))
        return tuple(_decode(v) for v in value)
    if type(value) is list:
        return [_decode(v) for v in value]
    if type(value) is dict:
        return {_decode(k): _decode(v) for k, v in value.items()}
    return value


def loads(data: bytes) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The declarations and the target's info, from ``dumps``; no code of the target runs."""
    declared, info = _decode(_PlainUnpickler(io.BytesIO(data)).load())
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
