"""Targets: a string that names where tools come from, parsed and loaded into tools.

``package.module:attr`` (a Tool, an iterable of tools, a toolkit, or a zero-argument
factory, sync or async, returning one of those), ``path/to/mcp.json``,
``stdio:<command line>``, ``http(s)://...`` (a streamable-HTTP MCP server),
``a2a:http(s)://...`` (an A2A agent, by its card) and ``skills:<folder>``. Loading never raises anything but ``TargetError``, whose
message is what the user reads.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePath
from typing import Any

from ._subject import extras_of

__all__ = ["LoadedTarget", "TargetError", "TargetKind", "TargetSpec", "load_target", "parse_target"]


class TargetError(Exception):
    """A target that cannot be parsed or loaded; the message says what to do."""


class TargetKind(StrEnum):
    PYTHON = "python"
    MCP_JSON = "mcp.json"
    STDIO = "stdio"
    HTTP = "http"
    SKILLS = "skills"
    A2A = "a2a"
    OBJECT = "object"


_PYTHON_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")

SPEC_FORMS = (
    "package.module:attr  (a Tool, a list of tools, a Toolkit, a factory returning one, or a"
    " LangChain, upstream toolnexus, OpenAI Agents or pydantic-ai tool)",
    "path/to/mcp.json     (every enabled server in the file)",
    "stdio:<command line> (an MCP server started as a subprocess)",
    "http(s)://host/path  (a streamable-HTTP MCP server)",
    "skills:<folder>      (a folder of SKILL.md skills)",
    "a2a:http(s)://host/  (an A2A agent: its card at /.well-known/agent-card.json, or a card URL)",
)


#: A Python file's path, with or without an attribute: ``tools.py``, ``src/pkg/mod.py:tools``.
_PYTHON_FILE = re.compile(r"^(?P<path>[^:]+)\.py(?::(?P<attr>[A-Za-z_][\w.]*))?$")


def _python_file_message(text: str, base_dir: Path | None) -> str:
    """What to write instead of a file's path, the first form a new user tries.

    Read as a path, any existing file is an mcp.json and its Python is "not valid
    JSON", which sends the user to the wrong place; a target names what Python
    imports, so the message spells out the module the path most likely is: its
    path from the project's directory (past a ``src`` folder), or its name alone.
    """
    found = _PYTHON_FILE.match(text)
    assert found is not None
    path = PurePath(found["path"].replace("\\", "/"))
    if path.is_absolute():
        if base_dir is not None and path.is_relative_to(base_dir):
            path = path.relative_to(base_dir)
        else:
            path = PurePath(path.name)
    parts = [part for part in path.parts if part not in (".", "..")]
    if "src" in parts:
        parts = parts[parts.index("src") + 1 :]
    module = ".".join(parts) or path.name
    attr = found["attr"] or "tools"
    return (
        f"target {text!r} names a Python file; a Python target names the module to import"
        f" and the attribute that holds the tools, as in {module}:{attr}"
        + ("" if found["attr"] else f" (where {attr} is what holds them)")
        + "; the module must be importable from the directory pytest runs in"
    )


@dataclass(frozen=True, slots=True)
class TargetSpec:
    kind: TargetKind
    value: str
    #: How the target is named in node ids and reports.
    label: str
    obj: Any = None
    #: An mcp.json's servers to load, by name (a CI shard's share); ``None``: all.
    only: tuple[str, ...] | None = None


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
    if text.startswith("a2a:"):
        url = text[len("a2a:") :].strip()
        if not url.startswith(("http://", "https://")):
            raise TargetError(
                f"'a2a:' needs the agent's http(s) URL, e.g. a2a:https://agent.example/ (got {url!r})"
            )
        return TargetSpec(TargetKind.A2A, url, text)
    if text.startswith("skills:"):
        return TargetSpec(TargetKind.SKILLS, text[len("skills:") :].strip(), text)
    if _PYTHON_FILE.match(text):
        raise TargetError(_python_file_message(text, base_dir))
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


async def load_target(
    spec: TargetSpec, *, base_dir: Path | None = None, launcher: Any = None
) -> LoadedTarget:
    """Turn a parsed spec into tools; raises ``TargetError`` only.

    ``launcher`` starts MCP stdio servers (``toolnexus_ref.mcp.Launcher``: the sandbox).

    A target that loads but holds no tools is an error too: a model given no tools
    can do nothing with it, and no check would have anything to judge.
    """
    try:
        if spec.kind is TargetKind.OBJECT:
            return _loaded(spec.label, await _materialise(spec.obj, spec.label))
        if spec.kind is TargetKind.PYTHON:
            return await _load_python(spec, base_dir)
        if spec.kind in (TargetKind.MCP_JSON, TargetKind.STDIO, TargetKind.HTTP):
            return await _load_mcp(spec, base_dir, launcher)
        if spec.kind is TargetKind.SKILLS:
            return _load_skills(spec, base_dir)
        if spec.kind is TargetKind.A2A:
            return await _load_a2a(spec)
    except TargetError:
        raise
    except Exception as exc:
        raise TargetError(f"loading {spec.label!r} raised {type(exc).__name__}: {exc}") from exc
    raise TargetError(f"unknown target kind {spec.kind}")  # pragma: no cover


async def _load_python(spec: TargetSpec, base_dir: Path | None) -> LoadedTarget:
    """Import and materialise, with the kit's own code as it was before, or an error.

    An import or a factory that replaces the kit's functions would decide every
    verdict of the run: the code is put back and the target is not judged.
    """
    from ._integrity import KitSnapshot

    before = KitSnapshot.take()
    try:
        tools = await _materialise(_import(spec.value, base_dir), spec.label)
    finally:
        changed = before.restore()
    if changed:
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        raise TargetError(
            f"loading {spec.label!r} replaced the kit's own code ({shown}): verdicts made with"
            " it could not be trusted, so the code was put back and the target is not judged"
        )
    return _loaded(spec.label, tools)


def _loaded(label: str, tools: list[Any]) -> LoadedTarget:
    return LoadedTarget(label, tools, extras_of(tools))


def _import(spec: str, base_dir: Path | None) -> Any:
    from toolnexus_ref import ImportSpecError, import_object

    try:
        return import_object(spec, base_dir=base_dir)
    except ImportSpecError as exc:
        raise TargetError(f"target {spec!r}: {exc}") from exc


async def _materialise(value: Any, label: str) -> list[Any]:
    """The tools a value holds, by the reference's one rule (``toolnexus_ref.as_tools``)."""
    from toolnexus_ref import NotToolsError, as_tools_async

    try:
        tools = await as_tools_async(value, label=repr(label))
    except NotToolsError as exc:
        raise TargetError(str(exc)) from exc
    if not tools:
        raise TargetError(
            f"{label!r} yields no tools: it is an empty {type(value).__name__} (or a factory"
            " returning one); a target must hold at least one tool"
        )
    return tools


def _mcp_missing(spec: TargetSpec, exc: ImportError) -> TargetError:
    """Why MCP targets cannot load here, and how to run the kit anyway.

    The kit's MCP client needs mcp 2; an environment that holds mcp 1.x (the
    upstream ``toolnexus`` package pins ``mcp<2``) must not be upgraded for it. The
    server is a subprocess (or a URL) either way, so the kit can run from an
    environment of its own against it.
    """
    from importlib import metadata

    try:
        installed: str | None = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        installed = None
    if installed is None or not installed.startswith("1."):
        return TargetError(
            f"target {spec.label!r} needs the MCP extra: pip install 'pytest-toolnexus[mcp]' ({exc})"
        )
    pinned_by = _requirers_of_mcp1()
    who = f" (required by {', '.join(pinned_by)})" if pinned_by else ""
    command = _own_environment_command(spec)
    return TargetError(
        f"target {spec.label!r} needs mcp>=2.3 for the kit's MCP client, and this environment"
        f" has mcp {installed}{who}. Do not upgrade mcp here: that would break what needs 1.x."
        " The MCP server is a separate process, so run the kit from an environment of its own"
        f" against it:\n  {command}"
    )


def _requirers_of_mcp1() -> list[str]:
    """Installed distributions that require mcp below 2, as ``name version``."""
    from importlib import metadata

    names = []
    for dist in metadata.distributions():
        for requirement in dist.requires or ():
            head = requirement.split(";")[0].replace(" ", "")
            project = re.match(r"[A-Za-z0-9._-]+", head)
            if project is not None and project.group().lower() == "mcp" and "<2" in head:
                names.append(f"{dist.metadata['Name']} {dist.version}")
                break
    return sorted(set(names))


def _own_environment_command(spec: TargetSpec) -> str:
    target = spec.label if spec.kind is not TargetKind.MCP_JSON else spec.value
    return (
        "python -m venv .toolnexus-kit && .toolnexus-kit/bin/pip install"
        " 'pytest-toolnexus[mcp]' && .toolnexus-kit/bin/pytest -p no:cacheprovider"
        f" --toolnexus-conformance --toolnexus-only --toolnexus-target {shlex.quote(target)}"
    )


async def _load_mcp(spec: TargetSpec, base_dir: Path | None, launcher: Any = None) -> LoadedTarget:
    try:
        from toolnexus_ref import mcp as mcp_source
    except ImportError as exc:
        raise _mcp_missing(spec, exc) from exc
    if spec.kind is TargetKind.MCP_JSON:
        path = Path(spec.value)
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            raise TargetError(f"mcp.json target {spec.value!r}: no such file ({path})")
        source = await mcp_source.open_mcp_json(
            path, base_dir=path.parent, launcher=launcher, only=spec.only
        )
    elif spec.kind is TargetKind.STDIO:
        try:
            command = shlex.split(spec.value)
        except ValueError as exc:
            raise TargetError(f"cannot split the command line of {spec.label!r}: {exc}") from exc
        source = await mcp_source.open_stdio(command, cwd=base_dir, launcher=launcher)
    else:
        source = await mcp_source.open_http(spec.value)
    tools = list(source.tools)
    statuses = getattr(source, "statuses", {})
    # A failed server is TN851's to report; a target whose servers all came up
    # (or are disabled) and list nothing has no tools to judge. A shard's share of a
    # file (``only``) may list none while the file's other servers list some.
    failed = any(status.state == "failed" for status in statuses.values())
    if not tools and not failed and spec.only is None:
        await source.close()
        listed = ", ".join(f"{n} ({s.state})" for n, s in statuses.items()) or "none"
        raise TargetError(
            f"{spec.label!r} yields no tools: its servers list none (servers: {listed})"
        )
    loaded = _loaded(spec.label, tools)
    loaded.info["statuses"] = statuses
    loaded.info["sources"] = ("mcp",)
    loaded.info["mcp_source"] = source
    loaded.close = source.close
    return loaded


def _load_skills(spec: TargetSpec, base_dir: Path | None) -> LoadedTarget:
    from toolnexus_ref.skills import SkillsError, load_skills

    folder = Path(spec.value)
    if base_dir is not None and not folder.is_absolute():
        folder = base_dir / folder
    try:
        tool = load_skills(folder)
    except SkillsError as exc:
        raise TargetError(f"target {spec.label!r}: {exc}") from exc
    loaded = _loaded(spec.label, [tool])
    loaded.info["sources"] = ("skill",)
    return loaded


async def _load_a2a(spec: TargetSpec) -> LoadedTarget:
    """The agent's card resolved into one tool per skill; the card's problems go to TN871."""
    try:
        from toolnexus_ref import a2a as a2a_source
    except ImportError as exc:
        raise TargetError(
            f"target {spec.label!r} needs the A2A extra: pip install 'pytest-toolnexus[a2a]' ({exc})"
        ) from exc
    try:
        source = await a2a_source.open_agent(spec.value)
    except a2a_source.CardError as exc:
        raise TargetError(f"target {spec.label!r}: {exc}") from exc
    loaded = _loaded(spec.label, list(source.tools))
    loaded.info.update(source.conformance_extra())
    loaded.info["sources"] = ("a2a",)
    return loaded
