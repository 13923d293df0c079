"""Settings per tool, read from ``[tool.toolnexus]`` in pyproject.toml or a file the ini names.

pytest's own configuration is flat: an ini value is a string, a list of strings or
a bool, and ``[tool.pytest.ini_options]`` holds only such values. Settings per tool
are tables (a tool's key, then what is set for it), so they live in a table of
their own, as every tool that reads pyproject.toml keeps them (``[tool.ruff]``,
``[tool.mypy]``): ``[tool.toolnexus.tools."<key>"]``. Projects configured through
pytest.ini, tox.ini or setup.cfg name a TOML, YAML or JSON file of the same shape
with the ini key ``toolnexus_settings`` (or ``--toolnexus-settings``); that file is
read instead of pyproject.toml.

A key is a tool's name or ``target::name``, either of which may be a glob, as in
the arguments file (``_arguments``), whose ``examples`` and ``values`` a tool's
table may hold too. The tables are read at configure time, so a table that is not
right stops the run before anything starts; keys that match no tool and ignores that
name no check are known only once every target has loaded (``problems``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance._options import ToolArguments, ToolSettings

from ._arguments import ArgumentsError, expand, load_data, tool_arguments, unmatched_keys

__all__ = [
    "ENTRY_KEYS",
    "PYPROJECT_TABLE",
    "SettingsError",
    "ToolTables",
    "ignores",
    "parse_tables",
    "read_tables",
]

#: Where pyproject.toml keeps them.
PYPROJECT_TABLE = "[tool.toolnexus]"
#: What a tool's table may set.
ENTRY_KEYS = ("call", "call_timeout", "ignore", "examples", "values")
_ARGUMENT_KEYS = ("examples", "values")
#: How many tool names an error about keys that match no tool lists.
LISTED_TOOLS = 100


class SettingsError(ValueError):
    """Settings that cannot be used; the message says where and why."""


@dataclass(frozen=True)
class ToolTables:
    """The tables read: each key's settings and arguments, and where they came from."""

    #: Where they came from, as messages name it ("pyproject.toml [tool.toolnexus]").
    source: str = ""
    tools: dict[str, ToolSettings] = field(default_factory=dict)
    arguments: dict[str, ToolArguments] = field(default_factory=dict)

    def problems(
        self, collected: Sequence[tuple[str, str]], unloaded: Iterable[str] = ()
    ) -> list[str]:
        """Keys that match no tool, and ignores that name no check, each listing what there is.

        A key that could name a tool of a target that did not load is given the
        benefit of the doubt, as in the arguments file: that target's TN001 says why.
        """
        found: list[str] = []
        keys = list(dict.fromkeys([*self.tools, *self.arguments]))
        lost = unmatched_keys(keys, collected, unloaded)
        if lost:
            found.append(
                f"{self.source}: {len(lost)} key(s) match no tool of any target:"
                f" {', '.join(map(repr, lost))}. A key is a tool name or target::name, either"
                " may be a glob; the tools are:\n  " + "\n  ".join(_tool_list(collected))
            )
        unknown = {
            f"tools.{key}.ignore: {token!r}"
            for key, settings in self.tools.items()
            for token in settings.ignore
            if not _names_a_check(token)
        }
        if unknown:
            found.append(
                f"{self.source}: {len(unknown)} ignore(s) name no check: "
                + "; ".join(sorted(unknown))
                + ". A check is named by its code or a code prefix (TN3), its category or its"
                " slug; the checks are:\n  " + "\n  ".join(_check_list())
            )
        return found


def read_tables(config: pytest.Config, named: Path | None) -> ToolTables:
    """The file ``named`` (``toolnexus_settings``), else pyproject.toml's ``[tool.toolnexus]``.

    Anything not exactly right is a usage error: the run stops before it starts.
    """
    rootdir = Path(str(config.rootpath))
    try:
        if named is not None:
            return parse_tables(load_data(named), str(named), rootdir=rootdir)
        pyproject = _pyproject(config)
        if pyproject is None:
            return ToolTables()
        source = f"{pyproject.name} {PYPROJECT_TABLE}"
        try:
            with pyproject.open("rb") as handle:
                data = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{pyproject}: cannot be read: {exc}") from None
        table = data.get("tool", {}).get("toolnexus")
        if table is None:
            return ToolTables()
        return parse_tables(table, source, rootdir=rootdir)
    except (SettingsError, ArgumentsError) as exc:
        raise pytest.UsageError(f"toolnexus settings: {exc}") from None


def _pyproject(config: pytest.Config) -> Path | None:
    """pytest's own pyproject.toml when that is its ini file, else the rootdir's."""
    inipath = config.inipath
    if inipath is not None and inipath.name == "pyproject.toml":
        return Path(inipath)
    candidate = Path(str(config.rootpath)) / "pyproject.toml"
    return candidate if candidate.is_file() else None


def parse_tables(
    data: Any, source: str, *, rootdir: Path, environ: Mapping[str, str] | None = None
) -> ToolTables:
    """Checked settings and arguments per key; ``SettingsError`` says what is not right."""
    if not isinstance(data, Mapping):
        raise SettingsError(f"{source}: the top level must be a table with the key 'tools'")
    unknown = sorted(str(k) for k in data if k != "tools")
    if unknown:
        raise SettingsError(
            f"{source}: unknown key(s) {', '.join(map(repr, unknown))}; the only key is 'tools'"
        )
    tools = data.get("tools", {})
    if not isinstance(tools, Mapping):
        raise SettingsError(f"{source}: 'tools' must be a table of tool keys")
    settings: dict[str, ToolSettings] = {}
    arguments: dict[str, ToolArguments] = {}
    for key, entry in tools.items():
        where = f"{source}: tools.{key}"
        if not isinstance(entry, Mapping):
            raise SettingsError(f"{where}: expected a table, got {type(entry).__name__}")
        wrong = sorted(str(k) for k in entry if k not in ENTRY_KEYS)
        if wrong:
            raise SettingsError(
                f"{where}: unknown key(s) {', '.join(map(repr, wrong))}; the keys are"
                f" {', '.join(map(repr, ENTRY_KEYS))}"
            )
        settings[str(key)] = _settings(entry, where)
        given = {k: v for k, v in entry.items() if k in _ARGUMENT_KEYS}
        if given:
            expanded = expand(given, where, rootdir=rootdir, environ=environ)
            arguments[str(key)] = tool_arguments(expanded, where)
    return ToolTables(source, settings, arguments)


def _settings(entry: Mapping[str, Any], where: str) -> ToolSettings:
    call = entry.get("call")
    if call is not None and not isinstance(call, bool):
        raise SettingsError(f"{where}: 'call' must be true or false, got {call!r}")
    timeout = entry.get("call_timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise SettingsError(
            f"{where}: 'call_timeout' must be a positive number of seconds, got {timeout!r}"
        )
    ignore = entry.get("ignore", [])
    if isinstance(ignore, str):
        ignore = ignore.split(",")
    if not isinstance(ignore, list | tuple) or not all(isinstance(t, str) for t in ignore):
        raise SettingsError(f"{where}: 'ignore' must be a list of check codes or names")
    return ToolSettings(
        call=call,
        call_timeout=None if timeout is None else float(timeout),
        ignore=tuple(t.strip() for t in ignore if t.strip()),
    )


def ignores(settings: ToolSettings, info: Any) -> bool:
    """Whether the tool's ``ignore`` names the check (``info``: its ``CheckInfo``)."""
    if not settings.ignore:  # asked for every check of every tool: most tools ignore none
        return False
    from toolnexus_conformance._registry import matches

    return any(matches(info, token) for token in settings.ignore)


def _names_a_check(token: str) -> bool:
    from toolnexus_conformance._registry import load_catalog, matches

    return any(matches(info, token) for info in load_catalog().infos())


def _check_list() -> list[str]:
    from toolnexus_conformance._model import Category
    from toolnexus_conformance._registry import load_catalog

    lines = [f"categories: {', '.join(c.value for c in Category)}"]
    line = "codes:"
    for info in sorted(load_catalog().infos(), key=lambda i: i.code):
        piece = f" {info.code} {info.slug},"
        if len(line) + len(piece) > 96:
            lines.append(line)
            line = "      "
        line += piece
    return [*lines, line.rstrip(",")]


def _tool_list(collected: Sequence[tuple[str, str]]) -> list[str]:
    names = sorted({f"{target}::{name}" for target, name in collected})
    if len(names) > LISTED_TOOLS:
        names[LISTED_TOOLS:] = [f"... and {len(names) - LISTED_TOOLS} more"]
    return names or ["(none)"]
