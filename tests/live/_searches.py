"""Tests' hold on the explorer's searches: what each one draws, seen or changed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


def map_searches(monkeypatch: pytest.MonkeyPatch, through: Callable[[Any], Any]) -> None:
    """Every search the explorer starts draws its arguments through ``through`` (to count
    the draws, or to fail them), otherwise as it would draw them."""
    from toolnexus_conformance.live import _explorer, _search

    search = _search.search  # what the explorer calls

    async def mapped(strategy: Any, *args: Any, **kwargs: Any) -> Any:
        return await search(strategy.map(through), *args, **kwargs)

    monkeypatch.setattr(_explorer, "search", mapped)
