"""Command-line options and ini keys, all prefixed ``toolnexus``; names are constants tests reuse."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from toolnexus_conformance import PROVIDERS as PROVIDER_NAMES
from toolnexus_conformance import RunOptions
from toolnexus_conformance.process._pool import default_workers

__all__ = [
    "ALLOW",
    "ARGUMENTS",
    "ALLOW_NETWORK",
    "BASELINE",
    "ENV",
    "LIMITS",
    "WRITABLE_COPY",
    "SANDBOX",
    "CONCURRENCY",
    "CONFORMANCE",
    "DEPTH",
    "EXAMPLES",
    "EXECUTE",
    "GRANULARITY",
    "GRACE",
    "IGNORE",
    "ONLY",
    "PROVIDERS",
    "REPORT",
    "SEED",
    "SELECT",
    "SETTINGS",
    "STRICT",
    "TARGET",
    "UPDATE_BASELINE",
    "Settings",
    "add_options",
    "providers_from",
    "read_settings",
]

CONFORMANCE = "--toolnexus-conformance"
TARGET = "--toolnexus-target"
SELECT = "--toolnexus-select"
IGNORE = "--toolnexus-ignore"
STRICT = "--toolnexus-strict"
EXECUTE = "--toolnexus-execute"
ALLOW = "--toolnexus-allow"
EXAMPLES = "--toolnexus-examples"
DEPTH = "--toolnexus-depth"
GRACE = "--toolnexus-grace"
CALL_TIMEOUT = "--toolnexus-call-timeout"
REPORT = "--toolnexus-report"
GRANULARITY = "--toolnexus-granularity"
ONLY = "--toolnexus-only"
CONCURRENCY = "--toolnexus-concurrency"
SEED = "--toolnexus-seed"
PROVIDERS = "--toolnexus-providers"
ISOLATION = "--toolnexus-isolation"
LOAD_TIMEOUT = "--toolnexus-load-timeout"
ARGUMENTS = "--toolnexus-arguments"
WORKERS = "--toolnexus-workers"
SANDBOX = "--toolnexus-sandbox"
ALLOW_NETWORK = "--toolnexus-allow-network"
ENV = "--toolnexus-env"
LIMITS = "--toolnexus-limits"
WRITABLE_COPY = "--toolnexus-writable-copy"
BASELINE = "--toolnexus-baseline"
UPDATE_BASELINE = "--toolnexus-update-baseline"
SETTINGS = "--toolnexus-settings"
SANDBOX_MODES = ("auto", "required", "off")

EXECUTE_MODES = ("auto", "all", "none")
ISOLATION_MODES = ("process", "none")
#: How long loading one target (an import, a factory, starting MCP servers) may take.
DEFAULT_LOAD_TIMEOUT = 60.0
#: The suites' own defaults, shown in the help and used when nothing is set.
_DEFAULTS = RunOptions.__dataclass_fields__
DEFAULT_EXAMPLES: int = _DEFAULTS["examples"].default  # type: ignore[assignment]
DEFAULT_DEPTH: int = _DEFAULTS["depth"].default  # type: ignore[assignment]
DEFAULT_GRACE: float = _DEFAULTS["grace"].default  # type: ignore[assignment]
DEFAULT_CALL_TIMEOUT: float = _DEFAULTS["call_timeout"].default  # type: ignore[assignment]
DEFAULT_CONCURRENCY: int = _DEFAULTS["concurrency"].default  # type: ignore[assignment]


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolnexus", "conformance suites for LLM tools (pytest-toolnexus)")
    group.addoption(
        CONFORMANCE,
        action="store_true",
        dest="toolnexus_conformance",
        help="run the conformance suites against the declared targets.",
    )
    group.addoption(
        ONLY,
        action="store_true",
        dest="toolnexus_only",
        help="collect no test files: run the conformance suites alone.",
    )
    group.addoption(
        TARGET,
        action="append",
        default=[],
        dest="toolnexus_targets",
        metavar="SPEC",
        help="where tools come from (repeatable): package.module:attr, path/to/mcp.json,"
        " 'stdio:<command line>', http(s)://url, skills:<folder>.",
    )
    group.addoption(
        SELECT,
        action="append",
        default=[],
        dest="toolnexus_select",
        metavar="CODES",
        help="only these checks: codes or code prefixes (TN3), categories (schema) or slugs;"
        " comma-separated, repeatable.",
    )
    group.addoption(
        IGNORE,
        action="append",
        default=[],
        dest="toolnexus_ignore",
        metavar="CODES",
        help="skip these checks (same forms as --toolnexus-select).",
    )
    group.addoption(
        PROVIDERS,
        action="append",
        default=[],
        dest="toolnexus_providers",
        metavar="NAMES",
        help="the providers the tools ship to, comma-separated, repeatable: "
        + ", ".join(PROVIDER_NAMES)
        + ". Their profiles' refusals are errors; the other profiles do not run."
        " Default: every profile, as warnings.",
    )
    group.addoption(
        STRICT,
        action="store_true",
        default=None,
        dest="toolnexus_strict",
        help="warnings fail the run, and a tool accepting invalid arguments is an error.",
    )
    group.addoption(
        EXECUTE,
        choices=EXECUTE_MODES,
        default=None,
        dest="toolnexus_execute",
        help="which tools the live checks may call: auto (only those safe to call, default),"
        " all, or none (static checks only).",
    )
    group.addoption(
        ALLOW,
        action="append",
        default=[],
        dest="toolnexus_allow",
        metavar="TOOL",
        help="a tool that --toolnexus-execute=auto may call anyway (name or target::name).",
    )
    group.addoption(
        EXAMPLES,
        type=int,
        default=None,
        dest="toolnexus_examples",
        metavar="N",
        help=f"hypothesis examples per live property (default {DEFAULT_EXAMPLES}).",
    )
    group.addoption(
        DEPTH,
        type=int,
        default=None,
        dest="toolnexus_depth",
        metavar="N",
        help="more examples past --toolnexus-examples for a tool that answers fast, within"
        f" 1.5 s a stream (default {DEFAULT_DEPTH}; 0: a quick run, edge values still called).",
    )
    group.addoption(
        GRACE,
        type=float,
        default=None,
        dest="toolnexus_grace",
        metavar="SECONDS",
        help=f"how long past a cancel or deadline a tool may take (default {DEFAULT_GRACE:g}).",
    )
    group.addoption(
        CALL_TIMEOUT,
        type=float,
        default=None,
        dest="toolnexus_call_timeout",
        metavar="SECONDS",
        help=f"bound on any single call during live checks (default {DEFAULT_CALL_TIMEOUT:g}).",
    )
    group.addoption(
        CONCURRENCY,
        type=int,
        default=None,
        dest="toolnexus_concurrency",
        metavar="N",
        help="tools explored at once by the live checks, across a target and one MCP"
        f" session (default {DEFAULT_CONCURRENCY}); 1 explores one tool after another.",
    )
    group.addoption(
        WORKERS,
        type=int,
        default=None,
        dest="toolnexus_workers",
        metavar="N",
        help="worker processes alive at once, one per Python target being loaded or"
        " explored (default: twice the CPU cores, at least 4, at most the concurrency).",
    )
    group.addoption(
        SEED,
        type=int,
        default=None,
        dest="toolnexus_seed",
        metavar="N",
        help="seed for the generated arguments, so two runs send the same calls"
        " (default: --hypothesis-seed, else random).",
    )
    group.addoption(
        GRANULARITY,
        choices=("check", "tool"),
        default=None,
        dest="toolnexus_granularity",
        help="one item per tool and check (default), or one item per tool running all"
        " its checks: pytest's per-item cost, not the checks, dominates targets of"
        " hundreds of tools.",
    )
    group.addoption(
        ISOLATION,
        choices=ISOLATION_MODES,
        default=None,
        dest="toolnexus_isolation",
        help="where the tools of package.module:attr targets are imported and called: process"
        " (default: a worker process per target, a process per tool, so a tool that exits,"
        " crashes or freezes is a finding, not the end of the run, and no code of the target"
        " runs in pytest's process), or none (imported and called in pytest's own process:"
        " what the target does at import, such as patching pytest, holds for the whole run).",
    )
    group.addoption(
        LOAD_TIMEOUT,
        type=float,
        default=None,
        dest="toolnexus_load_timeout",
        metavar="SECONDS",
        help=f"bound on loading one target: an import, a factory, starting an MCP server"
        f" (default {DEFAULT_LOAD_TIMEOUT:g}).",
    )
    group.addoption(
        ARGUMENTS,
        default=None,
        dest="toolnexus_arguments",
        metavar="PATH",
        help="a TOML, YAML or JSON file of arguments per tool, called before the generated"
        " ones, so tools that need a real path or id reach their success path.",
    )
    group.addoption(
        SETTINGS,
        default=None,
        dest="toolnexus_settings",
        metavar="PATH",
        help="a TOML, YAML or JSON file of settings per tool (ignored checks, call or not,"
        " a call timeout, arguments), read instead of pyproject.toml's [tool.toolnexus].",
    )
    group.addoption(
        BASELINE,
        default=None,
        dest="toolnexus_baseline",
        metavar="PATH",
        help="a TOML file of accepted findings (target, tool, check code): they are reported"
        " as xfail; one that no longer fails fails the run.",
    )
    group.addoption(
        UPDATE_BASELINE,
        action="store_true",
        default=False,
        dest="toolnexus_update_baseline",
        help=f"write the {BASELINE} file from this run: its findings added, the checks that"
        " passed removed, entries the run did not judge kept.",
    )
    group.addoption(
        SANDBOX,
        choices=SANDBOX_MODES,
        default=None,
        dest="toolnexus_sandbox",
        help="contain the processes the kit starts (Python targets' workers, MCP stdio servers)"
        " with bubblewrap: auto (default: where it works, else run uncontained and say so),"
        " required (a usage error where it cannot), off.",
    )
    group.addoption(
        ALLOW_NETWORK,
        action="store_true",
        default=None,
        dest="toolnexus_allow_network",
        help="let sandboxed tools and servers use the network (default: none, loopback of"
        " their own only).",
    )
    group.addoption(
        ENV,
        action="append",
        default=[],
        dest="toolnexus_env",
        metavar="NAME",
        help="an environment variable passed to the processes the kit starts (repeatable);"
        " others are removed but for a short allowlist (PATH, LANG, LC_*, TZ, PYTHON*...).",
    )
    group.addoption(
        LIMITS,
        default=None,
        dest="toolnexus_limits",
        metavar="SPEC",
        help="resource limits of the processes the kit starts, e.g. as=8G,fsize=1G,cpu=600,"
        "nproc=none (default as=16G, fsize=1G, cpu=900, nproc=4096).",
    )
    group.addoption(
        WRITABLE_COPY,
        action="append",
        default=[],
        dest="toolnexus_writable_copy",
        metavar="PATH",
        help="a folder (or a file's folder) sandboxed processes may change, each sandbox in a"
        " copy of its own whose writes end with it: PATH itself is never changed"
        " (repeatable; needs the sandbox).",
    )
    group.addoption(
        REPORT,
        default=None,
        dest="toolnexus_report",
        metavar="PATH",
        help="write a JSON report with one record per target, tool and check.",
    )
    group.addoption(
        "--toolnexus-record",
        default="none",
        choices=("none", "once", "new_episodes", "all"),
        dest="toolnexus_record",
        help="cassettes of the fake_llm fixture (toolnexus_llm(cassette=...)): none replays"
        " only (default), once records the missing ones against the real API, new_episodes"
        " replays what matches and records the new turns into the cassette, all records"
        " every one again.",
    )
    parser.addini("toolnexus_targets", "conformance targets, one per line", type="linelist")
    parser.addini("toolnexus_select", "checks to run (codes, prefixes, categories)", type="args")
    parser.addini("toolnexus_ignore", "checks to skip (codes, prefixes, categories)", type="args")
    parser.addini(
        "toolnexus_providers",
        "providers the tools ship to: " + ", ".join(PROVIDER_NAMES),
        type="args",
    )
    parser.addini("toolnexus_strict", "warnings fail the run", type="bool", default=False)
    parser.addini("toolnexus_execute", "auto | all | none", default="auto")
    parser.addini("toolnexus_allow", "tools auto may call anyway, one per line", type="linelist")
    parser.addini("toolnexus_examples", "hypothesis examples per live property", default="")
    parser.addini("toolnexus_depth", "examples past toolnexus_examples for a fast tool", default="")
    parser.addini("toolnexus_grace", "seconds allowed past a cancel or deadline", default="")
    parser.addini("toolnexus_call_timeout", "bound on any single live call", default="")
    parser.addini("toolnexus_report", "path of the JSON report", default="")
    parser.addini("toolnexus_concurrency", "tools explored at once by live checks", default="")
    parser.addini("toolnexus_workers", "worker processes alive at once", default="")
    parser.addini("toolnexus_seed", "seed for the generated arguments", default="")
    parser.addini(
        "toolnexus_granularity", "check | tool: what one test item covers", default="check"
    )
    parser.addini(
        "toolnexus_isolation", "process | none: where Python targets are called", default=""
    )
    parser.addini("toolnexus_load_timeout", "bound on loading one target", default="")
    parser.addini(
        "toolnexus_arguments", "file of arguments per tool (relative to rootdir)", default=""
    )
    parser.addini(
        "toolnexus_settings", "file of settings per tool (relative to rootdir)", default=""
    )
    parser.addini(
        "toolnexus_baseline", "file of accepted findings (relative to rootdir)", default=""
    )
    parser.addini(
        "toolnexus_sandbox", "auto | required | off: contain started processes", default=""
    )
    parser.addini(
        "toolnexus_allow_network",
        "sandboxed processes may use the network",
        type="bool",
        default=False,
    )
    parser.addini("toolnexus_env", "variables passed to started processes", type="args")
    parser.addini("toolnexus_limits", "resource limits of started processes", default="")
    parser.addini(
        "toolnexus_writable_copy",
        "folders sandboxed processes may change in a copy of their own",
        type="linelist",
    )


@dataclass(frozen=True)
class Settings:
    targets: tuple[str, ...]
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    strict: bool
    execute: str
    allow: frozenset[str]
    examples: int
    grace: float
    call_timeout: float
    report: str | None
    granularity: str = "check"
    concurrency: int = DEFAULT_CONCURRENCY
    seed: int | None = None
    #: The providers declared (names from ``PROVIDER_NAMES``); ``None`` when none were.
    providers: tuple[str, ...] | None = None
    #: ``process``: Python targets are imported and called in a worker process.
    isolation: str = "process"
    load_timeout: float = DEFAULT_LOAD_TIMEOUT
    #: The file of the user's arguments per tool, resolved; ``None`` when none is named.
    arguments: Path | None = None
    #: Worker processes of Python targets alive at once (``process/_pool``).
    workers: int = 4
    #: ``auto``, ``required`` or ``off``: the sandbox of the processes the kit starts.
    sandbox: str = "auto"
    allow_network: bool = False
    #: Variables the user passes to started processes.
    env: tuple[str, ...] = ()
    #: The limits' text (``_sandbox.parse_limits``); empty for the defaults.
    limits: str = ""
    #: The file of settings per tool, resolved; ``None``: pyproject.toml's ``[tool.toolnexus]``.
    tool_settings: Path | None = None
    #: Examples past ``examples`` for a tool that answers fast (``RunOptions.depth``).
    depth: int = DEFAULT_DEPTH
    #: The baseline of accepted findings, resolved; ``None`` when none is named.
    baseline: Path | None = None
    #: Rewrite ``baseline`` from this run.
    update_baseline: bool = False
    #: Files and folders sandboxed processes may change in a copy of their own, resolved.
    writable_copies: tuple[Path, ...] = ()


def _codes(values: list[str]) -> tuple[str, ...]:
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


def _number(
    config: pytest.Config, dest: str, cast: type[float] | type[int], default: float
) -> float:
    value = config.getoption(dest)
    if value is not None:
        return cast(value)
    raw = str(config.getini(dest) or "").strip()
    if not raw:
        return default
    try:
        return cast(raw)
    except ValueError:
        raise pytest.UsageError(f"ini key {dest} must be a number, got {raw!r}") from None


def _providers(config: pytest.Config) -> tuple[str, ...] | None:
    names = _codes(config.getoption("toolnexus_providers")) or _codes(
        config.getini("toolnexus_providers")
    )
    if not names:
        return None
    unknown = [name for name in names if name.lower() not in PROVIDER_NAMES]
    if unknown:
        raise pytest.UsageError(
            f"{PROVIDERS} (ini toolnexus_providers) names unknown providers:"
            f" {', '.join(unknown)}; known providers: {', '.join(PROVIDER_NAMES)}"
        )
    return tuple(dict.fromkeys(name.lower() for name in names))


def providers_from(settings: Settings) -> dict[str, frozenset[str]]:
    """The ``RunOptions`` keyword for the declared providers: ``RunOptions(**providers_from(s))``.

    Empty when nothing was declared, so ``RunOptions`` keeps its default (every
    profile, as warnings).
    """
    if settings.providers is None:
        return {}
    return {"providers": frozenset(settings.providers)}


def read_settings(config: pytest.Config) -> Settings:
    """Command line first, then ini, then defaults; bad values are usage errors."""
    strict = config.getoption("toolnexus_strict")
    execute = (
        config.getoption("toolnexus_execute") or str(config.getini("toolnexus_execute")).strip()
    )
    if execute not in EXECUTE_MODES:
        raise pytest.UsageError(
            f"toolnexus_execute must be one of {', '.join(EXECUTE_MODES)}, got {execute!r}"
        )
    examples = int(_number(config, "toolnexus_examples", int, DEFAULT_EXAMPLES))
    if examples < 1:
        raise pytest.UsageError(f"{EXAMPLES} must be at least 1, got {examples}")
    depth = int(_number(config, "toolnexus_depth", int, DEFAULT_DEPTH))
    if depth < 0:
        raise pytest.UsageError(f"{DEPTH} must be 0 or more, got {depth}")
    grace = _number(config, "toolnexus_grace", float, DEFAULT_GRACE)
    call_timeout = _number(config, "toolnexus_call_timeout", float, DEFAULT_CALL_TIMEOUT)
    if grace <= 0 or call_timeout <= 0:
        raise pytest.UsageError(f"{GRACE} and {CALL_TIMEOUT} must be positive")
    concurrency = int(_number(config, "toolnexus_concurrency", int, DEFAULT_CONCURRENCY))
    if concurrency < 1:
        raise pytest.UsageError(f"{CONCURRENCY} must be at least 1, got {concurrency}")
    seed_value = _number(config, "toolnexus_seed", int, -1)
    report = config.getoption("toolnexus_report") or str(config.getini("toolnexus_report")).strip()
    granularity = (
        config.getoption("toolnexus_granularity")
        or str(config.getini("toolnexus_granularity")).strip()
    )
    if granularity not in ("check", "tool"):
        raise pytest.UsageError(f"toolnexus_granularity must be check or tool, got {granularity!r}")
    isolation = (
        config.getoption("toolnexus_isolation")
        or str(config.getini("toolnexus_isolation")).strip()
        or "process"
    )
    if isolation not in ISOLATION_MODES:
        raise pytest.UsageError(f"toolnexus_isolation must be process or none, got {isolation!r}")
    load_timeout = _number(config, "toolnexus_load_timeout", float, DEFAULT_LOAD_TIMEOUT)
    if load_timeout <= 0:
        raise pytest.UsageError(f"{LOAD_TIMEOUT} must be positive")
    workers = int(_number(config, "toolnexus_workers", int, default_workers(concurrency)))
    if workers < 1:
        raise pytest.UsageError(f"{WORKERS} must be at least 1, got {workers}")
    sandbox = (
        config.getoption("toolnexus_sandbox")
        or str(config.getini("toolnexus_sandbox")).strip()
        or "auto"
    )
    if sandbox not in SANDBOX_MODES:
        raise pytest.UsageError(
            f"toolnexus_sandbox must be one of {', '.join(SANDBOX_MODES)}, got {sandbox!r}"
        )
    baseline = _path(config, "toolnexus_baseline")
    update_baseline = bool(config.getoption("toolnexus_update_baseline"))
    if update_baseline and baseline is None:
        raise pytest.UsageError(
            f"{UPDATE_BASELINE} writes the file {BASELINE} PATH (or the ini key"
            " toolnexus_baseline) names: name one, e.g. toolnexus-baseline.toml"
        )
    network = config.getoption("toolnexus_allow_network")
    limits = config.getoption("toolnexus_limits") or str(config.getini("toolnexus_limits")).strip()
    if limits:
        from toolnexus_conformance.process._sandbox import parse_limits

        try:
            parse_limits(limits)
        except ValueError as exc:
            raise pytest.UsageError(f"{LIMITS} (ini toolnexus_limits): {exc}") from None
    return Settings(
        targets=tuple(config.getoption("toolnexus_targets"))
        + tuple(t for t in config.getini("toolnexus_targets") if t.strip()),
        select=_codes(config.getoption("toolnexus_select"))
        or _codes(config.getini("toolnexus_select")),
        ignore=_codes(config.getoption("toolnexus_ignore"))
        + _codes(config.getini("toolnexus_ignore")),
        strict=bool(strict) if strict is not None else bool(config.getini("toolnexus_strict")),
        execute=execute,
        allow=frozenset(config.getoption("toolnexus_allow"))
        | frozenset(a.strip() for a in config.getini("toolnexus_allow") if a.strip()),
        examples=examples,
        depth=depth,
        grace=grace,
        call_timeout=call_timeout,
        report=report or None,
        granularity=granularity,
        concurrency=concurrency,
        seed=None if seed_value == -1 else int(seed_value),
        providers=_providers(config),
        isolation=isolation,
        load_timeout=load_timeout,
        arguments=_arguments_file(config),
        workers=workers,
        sandbox=sandbox,
        allow_network=bool(network)
        if network is not None
        else bool(config.getini("toolnexus_allow_network")),
        env=tuple(
            dict.fromkeys(
                [
                    *_codes(config.getoption("toolnexus_env")),
                    *_codes(config.getini("toolnexus_env")),
                ]
            )
        ),
        limits=limits,
        tool_settings=_path(config, "toolnexus_settings"),
        baseline=baseline,
        update_baseline=update_baseline,
        writable_copies=_writable_copies(config),
    )


def _writable_copies(config: pytest.Config) -> tuple[Path, ...]:
    """The paths to copy, resolved: the command line's from where pytest was run, the
    ini key's from rootdir (as ``_path``); links followed, since the copy is mounted
    where the path really lies."""
    here, root = str(config.invocation_params.dir), str(config.rootpath)
    given = [(here, p) for p in config.getoption("toolnexus_writable_copy")]
    given += [(root, p) for p in config.getini("toolnexus_writable_copy")]
    found = [
        (Path(base) / os.path.expanduser(p.strip())).resolve() for base, p in given if p.strip()
    ]
    return tuple(dict.fromkeys(found))


def _arguments_file(config: pytest.Config) -> Path | None:
    return _path(config, "toolnexus_arguments")


def _path(config: pytest.Config, dest: str) -> Path | None:
    """The command line's path is relative to where pytest was run; the ini key's to rootdir."""
    given = str(config.getoption(dest) or "")
    if given:
        return Path(str(config.invocation_params.dir)) / given
    raw = str(config.getini(dest) or "").strip()
    return Path(str(config.rootpath)) / raw if raw else None
