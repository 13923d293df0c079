"""Targets: a string that names where tools come from, parsed and loaded into tools.

``package.module:attr`` (a Tool, an iterable of tools, a toolkit, or a zero-argument
factory, sync or async, returning one of those), ``path/to/mcp.json``,
``stdio:<command line>``, ``http(s)://...`` (a streamable-HTTP MCP server) and
``skills:<folder>``. Loading never raises anything but ``TargetError``, whose
message is what the user reads.
"""

from __future__ import annotations

import importlib
import inspect
import re
import shlex
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ._subject import extra_of

__all__ = ["LoadedTarget", "TargetError", "TargetKind", "TargetSpec", "load_target", "parse_target"]


class TargetError(Exception):
    """A target that cannot be parsed or loaded; the message says what to do."""


class TargetKind(StrEnum):
    PYTHON = "python"
    MCP_JSON = "mcp.json"
    STDIO = "stdio"
    HTTP = "http"
    SKILLS = "skills"
    OBJECT = "object"


_PYTHON_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

SPEC_FORMS = (
    "package.module:attr  (a Tool, a list of tools, a Toolkit, or a factory returning one)",
    "path/to/mcp.json     (every enabled server in the file)",
    "stdio:<command line> (an MCP server started as a subprocess)",
    "http(s)://host/path  (a streamable-HTTP MCP server)",
    "skills:<folder>      (a folder of SKILL.md skills)",
)


@dataclass(frozen=True, slots=True)
class TargetSpec:
    kind: TargetKind
    value: str
    #: How the target is named in node ids and reports.
    label: str
    obj: Any = None


def parse_target(spec: str | object, *, base_dir: Path | None = None) -> TargetSpec:
    """Recognise a target's form; objects (from the conftest hook) pass through."""
    if not isinstance(spec, str):
        label = getattr(spec, "name", None)
        if not isinstance(label, str):
            label = type(spec).__name__
        return TargetSpec(TargetKind.OBJECT, "", label, spec)
    text = spec.strip()
    if not text:
        raise TargetError("an empty target was given")
    if text.startswith("stdio:"):
        command = text[len("stdio:") :].strip()
        if not command:
            raise TargetError("'stdio:' needs a command line, e.g. stdio:python -m my_server")
        return TargetSpec(TargetKind.STDIO, command, text)
    if text.startswith(("http://", "https://")):
        return TargetSpec(TargetKind.HTTP, text, text)
    if text.startswith("skills:"):
        return TargetSpec(TargetKind.SKILLS, text[len("skills:") :].strip(), text)
    if text.endswith(".json") or (base_dir is not None and (base_dir / text).is_file()):
        return TargetSpec(TargetKind.MCP_JSON, text, text)
    if _PYTHON_SPEC.match(text):
        return TargetSpec(TargetKind.PYTHON, text, text)
    forms = "\n  ".join(SPEC_FORMS)
    raise TargetError(f"cannot understand target {text!r}; a target is one of:\n  {forms}")


@dataclass
class LoadedTarget:
    """The tools of one target, with what the checks may need to know about their origin."""

    label: str
    tools: list[Any]
    #: Per-tool facts for the checks (an MCP tool's original name, its server...).
    extras: list[Mapping[str, Any]] = field(default_factory=list)
    #: Facts about the whole target (an MCP source's server statuses...).
    info: dict[str, Any] = field(default_factory=dict)
    close: Callable[[], Awaitable[None]] | None = None


async def load_target(spec: TargetSpec, *, base_dir: Path | None = None) -> LoadedTarget:
    """Turn a parsed spec into tools; raises ``TargetError`` only."""
    try:
        if spec.kind is TargetKind.OBJECT:
            return _loaded(spec.label, await _materialise(spec.obj, spec.label))
        if spec.kind is TargetKind.PYTHON:
            return _loaded(
                spec.label, await _materialise(_import(spec.value, base_dir), spec.label)
            )
        if spec.kind in (TargetKind.MCP_JSON, TargetKind.STDIO, TargetKind.HTTP):
            return await _load_mcp(spec, base_dir)
        if spec.kind is TargetKind.SKILLS:
            return await _load_skills(spec, base_dir)
    except TargetError:
        raise
    except Exception as exc:
        raise TargetError(f"loading {spec.label!r} raised {type(exc).__name__}: {exc}") from exc
    raise TargetError(f"unknown target kind {spec.kind}")  # pragma: no cover


def _loaded(label: str, tools: list[Any]) -> LoadedTarget:
    extras = [extra_of(tool) for tool in tools]
    return LoadedTarget(label, tools, extras)


def _import(spec: str, base_dir: Path | None) -> Any:
    module_name, _, attr_path = spec.partition(":")
    if base_dir is not None and str(base_dir) not in sys.path:
        sys.path.append(str(base_dir))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise TargetError(
            f"cannot import {module_name!r} for target {spec!r}: {type(exc).__name__}: {exc}"
        ) from exc
    value: Any = module
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise TargetError(f"module {module_name!r} has no attribute {attr_path!r}") from None
    return value


def _is_tool(value: Any) -> bool:
    return hasattr(value, "execute") and hasattr(value, "input_schema")


async def _materialise(value: Any, label: str) -> list[Any]:
    """A tool, a toolkit, an iterable, or a factory of one of those, as a list of tools."""
    if not _is_tool(value) and not hasattr(value, "tools") and callable(value):
        try:
            value = value()
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            raise TargetError(
                f"the factory behind {label!r} raised {type(exc).__name__}: {exc}"
            ) from exc
    if _is_tool(value):
        return [value]
    inner = getattr(value, "tools", None)
    if inner is not None and not callable(inner):
        value = inner
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        raise TargetError(
            f"{label!r} is a {type(value).__name__}, not a tool, a list of tools, a toolkit,"
            " or a factory returning one"
        )
    tools = list(value)
    if not tools:
        raise TargetError(f"{label!r} has no tools")
    return tools


async def _load_mcp(spec: TargetSpec, base_dir: Path | None) -> LoadedTarget:
    try:
        from toolnexus_ref import mcp as mcp_source
    except ImportError as exc:
        raise TargetError(
            f"target {spec.label!r} needs the MCP extra: pip install 'pytest-toolnexus[mcp]' ({exc})"
        ) from exc
    if spec.kind is TargetKind.MCP_JSON:
        path = Path(spec.value)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            raise TargetError(f"mcp.json target {spec.value!r}: no such file ({path})")
        source = await mcp_source.open_mcp_json(path, base_dir=path.parent)
    elif spec.kind is TargetKind.STDIO:
        try:
            command = shlex.split(spec.value)
        except ValueError as exc:
            raise TargetError(f"cannot split the command line of {spec.label!r}: {exc}") from exc
        source = await mcp_source.open_stdio(command, cwd=base_dir)
    else:
        source = await mcp_source.open_http(spec.value)
    loaded = _loaded(spec.label, list(source.tools))
    loaded.info["statuses"] = getattr(source, "statuses", {})
    loaded.info["sources"] = ("mcp",)
    loaded.info["mcp_source"] = source
    loaded.close = source.close
    return loaded


async def _load_skills(spec: TargetSpec, base_dir: Path | None) -> LoadedTarget:
    try:
        from toolnexus_ref import skills  # type: ignore[attr-defined]
    except ImportError as exc:
        raise TargetError(
            f"target {spec.label!r}: skills sources are not available in this version ({exc})"
        ) from exc
    folder = Path(spec.value)
    if base_dir is not None and not folder.is_absolute():
        folder = base_dir / folder
    return _loaded(spec.label, list(skills.load_skills(folder)))
