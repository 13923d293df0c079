"""Arguments users give for their tools, so that tools needing a real path or id reach success.

Two sources fill ``RunOptions.arguments``: a data file (``--toolnexus-arguments``,
read at configure, so a bad file is a usage error before anything starts) and the
conftest hook ``pytest_toolnexus_arguments`` (asked at collection, once every
target's tools are known). Hypothesis strategies a hook returns are drawn here, in
pytest's process, into plain values: a strategy does not cross into the process
that calls a Python target's tools.
"""

from __future__ import annotations

import json
import os
import pickle
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from toolnexus_conformance._options import ToolArguments

__all__ = [
    "FILE_FORMATS",
    "ArgumentsError",
    "ArgumentsItem",
    "escape_key",
    "expand",
    "from_hook",
    "load_data",
    "merge",
    "read_file",
    "tool_arguments",
    "unmatched_keys",
]

#: The data file's formats, by suffix: TOML first, as ``pyproject.toml`` is.
FILE_FORMATS = (".toml", ".yaml", ".yml", ".json")
_ENTRY_KEYS = ("examples", "values")
_VARIABLE = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ROOTDIR = "{rootdir}"


class ArgumentsError(ValueError):
    """Arguments that cannot be used; the message says where and why."""


# -- the data file -----------------------------------------------------------------
def read_file(
    path: Path, *, rootdir: Path, environ: Mapping[str, str] | None = None
) -> dict[str, ToolArguments]:
    """The file's arguments per key; ``ArgumentsError`` for any file that is not exactly right.

    Strings may hold ``${NAME}`` (an environment variable, which must be set), ``$$``
    (a dollar sign) and ``{rootdir}`` (pytest's rootdir).
    """
    data = load_data(path)
    if not isinstance(data, Mapping):
        raise ArgumentsError(f"{path}: the top level must be a table with the key 'tools'")
    unknown = sorted(str(k) for k in data if k != "tools")
    if unknown:
        raise ArgumentsError(
            f"{path}: unknown top-level key(s) {', '.join(map(repr, unknown))}; the only key"
            " is 'tools'"
        )
    tools = data.get("tools", {})
    if not isinstance(tools, Mapping):
        raise ArgumentsError(f"{path}: 'tools' must be a table of tool keys")
    found: dict[str, ToolArguments] = {}
    for key, entry in tools.items():
        where = f"{path}: tools.{key}"
        given = expand(entry, where, rootdir=rootdir, environ=environ)
        found[str(key)] = tool_arguments(given, where)
    return found


def load_data(path: Path) -> Any:
    """The file's data, by its suffix (``FILE_FORMATS``); an empty file is an empty table."""
    suffix = path.suffix.lower()
    if suffix not in FILE_FORMATS:
        raise ArgumentsError(
            f"{path}: unknown format {suffix or '(no suffix)'!r}; use one of"
            f" {', '.join(FILE_FORMATS)}"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ArgumentsError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = _parse(text, suffix)
    except Exception as exc:  # each parser has its own error type; all say where
        raise ArgumentsError(f"{path}: not valid {suffix[1:].upper()}: {exc}") from None
    return {} if data is None else data


def expand(
    value: Any, where: str, *, rootdir: Path, environ: Mapping[str, str] | None = None
) -> Any:
    """``value`` with ``${NAME}``, ``$$`` and ``{rootdir}`` replaced in every string in it."""
    env = os.environ if environ is None else environ
    return _expand(value, where, rootdir=str(rootdir), environ=env)


def _parse(text: str, suffix: str) -> Any:
    if suffix == ".toml":
        import tomllib

        return tomllib.loads(text)
    if suffix == ".json":
        return json.loads(text)
    import yaml

    return yaml.safe_load(text)


def _expand(value: Any, where: str, *, rootdir: str, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str):

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name is None:
                return "$"
            if name not in environ:
                raise ArgumentsError(f"{where}: environment variable {name} is not set")
            return environ[name]

        return _VARIABLE.sub(variable, value).replace(_ROOTDIR, rootdir)
    if isinstance(value, Mapping):
        return {k: _expand(v, where, rootdir=rootdir, environ=environ) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_expand(v, where, rootdir=rootdir, environ=environ) for v in value]
    return value


# -- one tool's entry ------------------------------------------------------------------
def tool_arguments(
    entry: Any, where: str, *, draw: Callable[[Any, str], tuple[Any, ...]] | None = None
) -> ToolArguments:
    """``entry`` (a ``ToolArguments``, or a mapping of ``examples`` and ``values``) checked.

    ``draw`` turns a value that is not a list (a hypothesis strategy) into values;
    without it, every value must be a list.
    """
    if isinstance(entry, ToolArguments):
        entry = {"examples": entry.examples, "values": entry.values}
    if not isinstance(entry, Mapping):
        raise ArgumentsError(
            f"{where}: expected a table with 'examples' and/or 'values', got {type(entry).__name__}"
        )
    unknown = sorted(str(k) for k in entry if k not in _ENTRY_KEYS)
    if unknown:
        raise ArgumentsError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; the keys are"
            f" {' and '.join(map(repr, _ENTRY_KEYS))}"
        )
    examples = entry.get("examples", ())
    if not isinstance(examples, list | tuple) or not all(isinstance(e, Mapping) for e in examples):
        raise ArgumentsError(f"{where}: 'examples' must be a list of argument objects (tables)")
    values = entry.get("values", {})
    if not isinstance(values, Mapping):
        raise ArgumentsError(f"{where}: 'values' must be a table of property names to lists")
    given: dict[str, tuple[Any, ...]] = {}
    for prop, more in values.items():
        if isinstance(more, list | tuple):
            given[str(prop)] = tuple(more)
        elif draw is not None:
            given[str(prop)] = draw(more, f"{where}: values.{prop}")
        else:
            raise ArgumentsError(f"{where}: values.{prop} must be a list of values")
    found = ToolArguments(tuple(dict(e) for e in examples), given)
    try:
        pickle.dumps(found)
    except Exception as exc:
        raise ArgumentsError(
            f"{where}: arguments must be plain data (they are sent to the process that"
            f" calls the tool): {type(exc).__name__}: {exc}"
        ) from None
    return found


def merge(*sources: Mapping[str, ToolArguments]) -> dict[str, ToolArguments]:
    """Every source's arguments, those of one key put together in order."""
    merged: dict[str, ToolArguments] = {}
    for source in sources:
        for key, more in source.items():
            had = merged.get(key)
            if had is None:
                merged[key] = more
                continue
            values = dict(had.values)
            for prop, extra in more.values.items():
                values[prop] = (*values.get(prop, ()), *extra)
            merged[key] = ToolArguments((*had.examples, *more.examples), values)
    return merged


def escape_key(text: str) -> str:
    """``text`` as an ``fnmatch`` pattern matching itself alone (tool names may hold ``[``)."""
    return re.sub(r"([*?\[])", r"[\1]", text)


# -- the hook --------------------------------------------------------------------------
def from_hook(
    config: pytest.Config,
    tools: Iterable[tuple[str, str]],
    *,
    count: int,
    seed: int | None,
) -> tuple[dict[str, ToolArguments], list[str]]:
    """Ask ``pytest_toolnexus_arguments`` for each ``(target, tool)``: arguments and problems.

    A hook that raises or returns something unusable is a problem for that tool
    alone; the other tools get theirs.
    """
    found: dict[str, ToolArguments] = {}
    problems: list[str] = []
    hook = config.hook.pytest_toolnexus_arguments
    if not hook.get_hookimpls():
        return found, problems

    def draw(strategy: Any, where: str) -> tuple[Any, ...]:
        return draw_values(strategy, where, count=count, seed=seed)

    for target, tool in tools:
        where = f"pytest_toolnexus_arguments(target={target!r}, tool={tool!r})"
        try:
            results = hook(config=config, target=target, tool=tool)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # pytest.skip() and sys.exit() too: a problem, not the end
            problems.append(f"{where} raised {type(exc).__name__}: {exc}")
            continue
        key = f"{escape_key(target)}::{escape_key(tool)}"
        for result in results:
            try:
                given = tool_arguments(result, where, draw=draw)
            except ArgumentsError as exc:
                problems.append(str(exc))
                continue
            found = merge(found, {key: given})
    return found, problems


def draw_values(strategy: Any, where: str, *, count: int, seed: int | None) -> tuple[Any, ...]:
    """Up to ``count`` distinct values of a hypothesis strategy, the same for the same seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded
    from hypothesis.strategies import SearchStrategy

    if not isinstance(strategy, SearchStrategy):
        raise ArgumentsError(
            f"{where} must be a list of values or a hypothesis strategy, got"
            f" {type(strategy).__name__}"
        )
    drawn: list[Any] = []

    @seeded(0 if seed is None else seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        if value not in drawn:
            drawn.append(value)

    try:
        collect()
    except Exception as exc:
        raise ArgumentsError(
            f"{where}: drawing from the strategy failed: {type(exc).__name__}: {exc}"
        ) from None
    return tuple(drawn[:count])


# -- keys that name no tool --------------------------------------------------------------
def unmatched_keys(
    keys: Iterable[str], tools: Sequence[tuple[str, str]], unloaded: Iterable[str] = ()
) -> list[str]:
    """The keys that match none of ``tools`` (``(target, name)`` pairs).

    A key that could name a tool of a target that did not load is given the benefit
    of the doubt: that target's own finding (TN001) says what went wrong.
    """
    import fnmatch

    unloaded = list(unloaded)
    lost: list[str] = []
    for key in keys:
        if any(
            fnmatch.fnmatchcase(name, key) or fnmatch.fnmatchcase(f"{target}::{name}", key)
            for target, name in tools
        ):
            continue
        prefix = key.split("::", 1)[0] if "::" in key else None
        if unloaded and (prefix is None or any(fnmatch.fnmatchcase(u, prefix) for u in unloaded)):
            continue
        lost.append(key)
    return lost


class ArgumentsItem(pytest.Item):
    """An item that fails with what is wrong in the user's arguments; the checks still run."""

    def __init__(self, *, problems: Sequence[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.problems = list(problems)

    def runtest(self) -> None:
        raise ArgumentsError("\n".join(self.problems))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ArgumentsError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return (self.name, None, "the arguments given for the tools")
