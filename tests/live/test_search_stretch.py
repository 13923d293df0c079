"""The search's wall-clock budgets stretch with the machine's load, within bounds."""

from __future__ import annotations

import os
from pathlib import Path

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


@pytest.mark.parametrize(
    ("waited", "expected"),
    # a load of 8 per core, remembered by the load average, and what the CPUs say now
    [(0.0, 1.0), (0.5, 2.0), (0.75, 4.0), (1.0, 8.0), (None, 8.0)],
)
def test_search_budgets_stretch_no_more_than_the_cpus_are_contended_now(
    monkeypatch: pytest.MonkeyPatch, waited: float | None, expected: float
) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (16.0, 16.0, 16.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_search, "cpu_waited", lambda: waited)
    assert _search.search_stretch() == pytest.approx(expected)


def test_a_quiet_load_average_is_not_raised_by_pressure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.setattr(_search, "cpu_waited", lambda: 1.0)
    assert _search.search_stretch() == 1.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "some avg10=37.50 avg60=12.00 avg300=1.00 total=123\n"
            "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            0.375,
        ),
        ("full avg10=5.00 avg60=0.00 avg300=0.00 total=0\n", None),  # no "some" line
        ("some avg60=1.00\n", None),  # no ten-second average
        ("some avg10=lots\n", None),
        ("", None),
    ],
)
def test_the_share_of_time_tasks_waited_is_read_from_the_pressure_file(
    tmp_path: Path, text: str, expected: float | None
) -> None:
    path = tmp_path / "cpu"
    path.write_text(text)
    assert _search.cpu_waited(path) == expected


def test_no_pressure_file_is_no_reading(tmp_path: Path) -> None:
    assert _search.cpu_waited(tmp_path / "absent") is None
