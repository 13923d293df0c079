"""Command-line options and ini keys, all prefixed ``toolnexus``; names are constants tests reuse."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from toolnexus_conformance import PROVIDERS as PROVIDER_NAMES
from toolnexus_conformance import RunOptions

__all__ = [
    "ALLOW",
    "CONCURRENCY",
    "CONFORMANCE",
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
    "STRICT",
    "TARGET",
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

EXECUTE_MODES = ("auto", "all", "none")
ISOLATION_MODES = ("process", "none")
#: How long loading one target (an import, a factory, starting MCP servers) may take.
DEFAULT_LOAD_TIMEOUT = 60.0
#: The suites' own defaults, shown in the help and used when nothing is set.
_DEFAULTS = RunOptions.__dataclass_fields__
DEFAULT_EXAMPLES: int = _DEFAULTS["examples"].default  # type: ignore[assignment]
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
        REPORT,
        default=None,
        dest="toolnexus_report",
        metavar="PATH",
        help="write a JSON report with one record per target, tool and check.",
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
    parser.addini("toolnexus_grace", "seconds allowed past a cancel or deadline", default="")
    parser.addini("toolnexus_call_timeout", "bound on any single live call", default="")
    parser.addini("toolnexus_report", "path of the JSON report", default="")
    parser.addini("toolnexus_concurrency", "tools explored at once by live checks", default="")
    parser.addini("toolnexus_seed", "seed for the generated arguments", default="")
    parser.addini(
        "toolnexus_granularity", "check | tool: what one test item covers", default="check"
    )
    parser.addini(
        "toolnexus_isolation", "process | none: where Python targets are called", default=""
    )
    parser.addini("toolnexus_load_timeout", "bound on loading one target", default="")


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
        grace=grace,
        call_timeout=call_timeout,
        report=report or None,
        granularity=granularity,
        concurrency=concurrency,
        seed=None if seed_value == -1 else int(seed_value),
        providers=_providers(config),
        isolation=isolation,
        load_timeout=load_timeout,
    )
