"""``--toolnexus-select`` and ``--toolnexus-ignore`` refuse a name that matches no check.

A typo in either does nothing silently: ``--toolnexus-ignore TN2O2`` (a letter O)
would leave the check it meant to silence running, and ``--toolnexus-select schmea``
would run nothing of what was asked. So every token must name at least one check of
the catalog, by code prefix, category or slug, and the error lists the nearest names.

Judged at collection, not at configure: a project's own checks are registered by
importing its modules (a ``conftest.py`` deeper in the tree among them), and only at
collection are they all in the catalog. xdist's controller collects nothing; its
workers judge.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import pytest
from toolnexus_conformance._registry import load_catalog, matches

from ._options import IGNORE, SELECT

if TYPE_CHECKING:
    from toolnexus_conformance._model import CheckInfo

__all__ = ["SelectionCheck", "unknown_tokens"]

#: How many near names the error suggests per unknown token.
SUGGESTIONS = 3


def unknown_tokens(tokens: Iterable[str], infos: Sequence[CheckInfo]) -> list[str]:
    """The tokens that name no check, as the catalog's own ``matches`` reads a name."""
    return [token for token in tokens if not any(matches(info, token) for info in infos)]


def _suggest(token: str, infos: Sequence[CheckInfo]) -> str:
    words = sorted({w for i in infos for w in (i.code, i.category.value, i.slug)})
    close = difflib.get_close_matches(token, words, n=SUGGESTIONS, cutoff=0.6)
    if not close:
        codes = [i.code for i in infos]
        close = difflib.get_close_matches(token.upper(), codes, SUGGESTIONS, 0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


class SelectionCheck:
    """A pytest plugin object: refuses, at collection, tokens that name no check."""

    def __init__(self, select: Sequence[str], ignore: Sequence[str]) -> None:
        self.given = {SELECT: tuple(select), IGNORE: tuple(ignore)}

    @pytest.hookimpl(tryfirst=True)  # registered after the session's: called before it
    def pytest_collection_modifyitems(self) -> None:
        infos = [c.info for c in load_catalog()]
        problems = [
            f"{option} {token!r} names no check{_suggest(token, infos)}"
            for option, tokens in self.given.items()
            for token in unknown_tokens(tokens, infos)
        ]
        if problems:
            raise pytest.UsageError(
                "\n".join(problems)
                + "\nA check is named by its code or a code prefix (TN3), its category"
                " (schema) or its slug (schema-has-type); docs/checks.md lists them all."
            )
