"""The search's wall-clock budgets stretch with the machine's load, within bounds."""

from __future__ import annotations

import os

import pytest
from toolnexus_conformance.live import _search


@pytest.mark.parametrize(
    ("load", "cores", "expected"),
    [(0.3, 2, 1.0), (2.0, 2, 1.0), (6.0, 2, 3.0), (45.0, 2, _search.MAX_STRETCH)],
)
def test_budgets_stretch_by_the_load_per_core(
    monkeypatch: pytest.MonkeyPatch, load: float, cores: int, expected: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert _search.stretch() == expected


def test_no_load_average_means_no_stretch(monkeypatch: pytest.MonkeyPatch) -> None:
    def unavailable() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert _search.stretch() == 1.0
