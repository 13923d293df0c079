"""Report masking costs nothing when nothing is registered, and little when nothing matches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pytest_toolnexus import _masking
from pytest_toolnexus._items import RECORDS, records_of
from toolnexus_ref import secrets


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    secrets.clear()
    yield
    secrets.clear()


class Unrenderable:
    """A failure's ``longrepr`` that must not be rendered."""

    rendered = 0

    def __str__(self) -> str:
        Unrenderable.rendered += 1
        return "boom: the token abcd-secret-1234 leaked"


def _report(longrepr: Any = None) -> pytest.TestReport:
    record = {"check": "TN501", "findings": [{"message": "all fine", "sent": {"a": 1}}]}
    report = pytest.TestReport(
        "x.py::t",
        ("x.py", 1, "t"),
        {},
        "failed" if longrepr is not None else "passed",
        longrepr,
        "call",
        sections=[("Captured stdout call", "hello")],
        user_properties=[("a_users_property", "some value")],
    )
    setattr(report, RECORDS, [record])  # as the plugin hands an item's records to its report
    return report


def _through_hook(report: pytest.TestReport) -> pytest.TestReport:
    wrapper = _masking.pytest_runtest_makereport(None, None)  # type: ignore[arg-type]
    next(wrapper)
    with pytest.raises(StopIteration) as done:
        wrapper.send(report)
    result: pytest.TestReport = done.value.value
    return result


def test_with_nothing_registered_no_report_is_touched_or_rendered() -> None:
    Unrenderable.rendered = 0
    report = _report(Unrenderable())
    properties, sections, records = report.user_properties, report.sections, records_of(report)
    assert _through_hook(report) is report
    assert Unrenderable.rendered == 0
    assert report.user_properties is properties
    assert report.sections is sections
    assert records_of(report) is records


def test_a_registered_value_that_shows_nowhere_leaves_the_report_as_it_was() -> None:
    secrets.register("never-printed-value")
    report = _report()
    properties, sections, records = report.user_properties, report.sections, records_of(report)
    _through_hook(report)
    assert report.user_properties is properties
    assert report.sections is sections
    assert records_of(report) is records


def test_a_registered_value_is_masked_wherever_it_shows() -> None:
    secrets.register("abcd-secret-1234")
    report = _report(Unrenderable())
    report.sections = [("Captured stdout call", "token abcd-secret-1234")]
    report.user_properties = [("a_users_property", "the token abcd-secret-1234")]
    record: Any = records_of(report)[0]
    record["findings"][0]["message"] = "got abcd-secret-1234"
    _through_hook(report)
    assert report.longrepr == "boom: the token *** leaked"
    assert report.sections == [("Captured stdout call", "token ***")]
    assert report.user_properties == [("a_users_property", "the token ***")]
    record = records_of(report)[0]
    assert record["findings"][0]["message"] == "got ***"
    assert record["findings"][0]["sent"] == {"a": 1}
