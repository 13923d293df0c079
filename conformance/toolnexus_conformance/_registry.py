"""The catalog: every check's entry and its implementation, registered where it is written."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._model import Category, CheckInfo, Finding, Scope, Severity

if TYPE_CHECKING:
    from ._options import RunOptions

__all__ = [
    "CATALOG",
    "Catalog",
    "Check",
    "CheckFunction",
    "check",
    "for_providers",
    "load_catalog",
    "matches",
    "selected",
    "with_providers",
]

#: A check reads (or calls) a subject and returns its findings; empty means it passed.
#: It raises ``Skip`` when it cannot judge. Live checks are ``async def``.
CheckFunction = Callable[[Any, "RunOptions"], "Iterable[Finding] | Awaitable[Iterable[Finding]]"]

#: Modules whose import registers checks, in catalog order.
CHECK_MODULES: tuple[str, ...] = (
    "toolnexus_conformance.checks.target",
    "toolnexus_conformance.checks.naming",
    "toolnexus_conformance.checks.description",
    "toolnexus_conformance.checks.schema",
    "toolnexus_conformance.checks.providers",
    "toolnexus_conformance.checks.live",
    "toolnexus_conformance.checks.timing",
    "toolnexus_conformance.checks.mcp",
    "toolnexus_conformance.checks.mcp_live",
    "toolnexus_conformance.checks.skills",
    "toolnexus_conformance.checks.a2a",
    "toolnexus_conformance.checks.a2a_live",
)


@dataclass(frozen=True, slots=True)
class Check:
    info: CheckInfo
    run: CheckFunction
    #: For live checks: the exploration phases (``_observation.Phase`` values) whose
    #: calls the check judges; the runner explores a tool only as far as its checks need.
    needs: frozenset[str] = frozenset()
    #: The provider profiles (``Provider`` names) this check belongs to; empty for a
    #: check that judges the contract itself. See ``for_providers``.
    providers: frozenset[str] = frozenset()

    @property
    def code(self) -> str:
        return self.info.code


class Catalog:
    """Checks by code, in registration order. Codes are unique; a clash is a bug."""

    def __init__(self) -> None:
        self._checks: dict[str, Check] = {}

    def register(self, entry: Check) -> None:
        existing = self._checks.get(entry.code)
        if existing is not None and existing.run is not entry.run:
            raise ValueError(f"check code {entry.code} registered twice")
        self._checks[entry.code] = entry

    def __iter__(self) -> Iterator[Check]:
        return iter(self._checks.values())

    def __len__(self) -> int:
        return len(self._checks)

    def __getitem__(self, code: str) -> Check:
        return self._checks[code]

    def __contains__(self, code: object) -> bool:
        return code in self._checks

    def infos(self) -> list[CheckInfo]:
        return [c.info for c in self._checks.values()]


CATALOG = Catalog()


def check(
    code: str,
    slug: str,
    *,
    title: str,
    category: Category,
    severity: Severity,
    why: str,
    fix: str,
    reference: str | None = None,
    live: bool = False,
    scope: Scope = Scope.TOOL,
    sources: Iterable[str] = (),
    opt_in: bool = False,
    needs: Iterable[str] = (),
    providers: Iterable[str] = (),
) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as the implementation of a catalog entry.

    A live check's function takes the tool's ``Observation`` (what its exploration
    saw) instead of the subject, and ``needs`` names the phases it reads.
    ``providers`` names the provider profiles the check belongs to (``Provider``
    values): a run that declares none of them does not run it.
    """
    info = CheckInfo(
        code=code,
        slug=slug,
        title=title,
        category=category,
        severity=severity,
        why=why,
        fix=fix,
        reference=reference,
        live=live,
        scope=scope,
        sources=frozenset(sources),
        opt_in=opt_in,
    )

    def register(fn: CheckFunction) -> CheckFunction:
        CATALOG.register(Check(info, fn, frozenset(needs), frozenset(providers)))
        return fn

    return register


_loaded = False


def load_catalog() -> Catalog:
    """Import every check module once and return the filled catalog."""
    global _loaded
    if not _loaded:
        for module in CHECK_MODULES:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:  # a real import error inside the module
                    raise
        _loaded = True
    return CATALOG


def matches(info: CheckInfo, token: str) -> bool:
    """Whether ``token`` names the check: a code prefix (``TN3``), its category or its slug."""
    return _matches(info, token)


def _matches(info: CheckInfo, token: str) -> bool:
    token = token.strip()
    return bool(token) and (
        info.code.upper().startswith(token.upper())
        or token.lower() in (info.category.value, info.slug)
    )


def selected(info: CheckInfo, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> bool:
    """Prefix match on codes (``TN3`` is every schema check), or a category or slug name.

    An opt-in check runs only when ``select`` names it.
    """
    if (select or info.opt_in) and not any(_matches(info, token) for token in select):
        return False
    return not any(_matches(info, token) for token in ignore)


def for_providers(check: Check, providers: Collection[str] | None) -> Check | None:
    """The check as a run that ships to ``providers`` sees it; ``None`` when it does not run.

    ``providers`` is ``RunOptions.providers``. ``None`` declares nothing and changes
    nothing: every profile keeps its catalog severity (a warning) and opt-in. A check
    of a declared provider becomes an error and is no longer opt-in (declaring
    ``openai-strict`` runs the strict-mode profile); a check of providers none of which
    is declared is not run. Checks of the contract itself are never touched.
    """
    if providers is None or not check.providers:
        return check
    if not check.providers & {str(p) for p in providers}:
        return None
    if check.info.severity is Severity.ERROR and not check.info.opt_in:
        return check
    info = dataclasses.replace(check.info, severity=Severity.ERROR, opt_in=False)
    return dataclasses.replace(check, info=info)


def with_providers(checks: Iterable[Check], providers: Collection[str] | None) -> list[Check]:
    """``for_providers`` over ``checks``, in order, leaving out those that do not run.

    Apply it before ``selected``: a declared profile is selected like any check, so
    ``--toolnexus-ignore`` still removes one of its checks.
    """
    out = []
    for each in checks:
        seen = for_providers(each, providers)
        if seen is not None:
            out.append(seen)
    return out
