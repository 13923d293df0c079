"""Every test report masked: no value the kit expanded from ``${ENV}`` reaches any output.

The terminal, JUnit XML, ``--toolnexus-report`` and xdist's controller all read the
``TestReport`` built in ``pytest_runtest_makereport``; masking it there, outermost,
covers them all, including a secret that a server echoed into a result and a
check quoted in its message. Warnings (a failed warning-severity check is one) are
masked as they are recorded, before the terminal's summary or xdist reads them.
Under ``--toolnexus-conformance`` the values of credential-looking variables of
pytest's own environment (``secrets.register_environment``) are masked too.
Import-light: ``toolnexus_ref.secrets`` is looked up in ``sys.modules`` only; if
nothing imported it, or nothing is registered, nothing is masked, and a report
costs nothing more.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from typing import Any

import pytest

from ._items import RECORDS, records_of

_SECRETS_MODULE = "toolnexus_ref.secrets"


def _registry() -> Any:
    """The registry, when something is registered in it (nothing to mask otherwise)."""
    secrets = sys.modules.get(_SECRETS_MODULE)
    if secrets is None or not secrets.registered():
        return None
    return secrets


def _masked(value: Any, secrets: Any) -> Any:
    """``value`` with every string inside it masked (records are dicts of lists of strings).

    What holds no secret comes back as the very same object: a report's records are
    rebuilt only when one of their strings shows a registered value.
    """
    if isinstance(value, str):
        return secrets.mask(value) if secrets.find(value) else value
    if isinstance(value, dict):
        items = [(_masked(k, secrets), _masked(v, secrets)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        masked = [_masked(item, secrets) for item in value]
        if all(m is item for m, item in zip(masked, value, strict=True)):
            return value
        return masked if isinstance(value, list) else tuple(masked)
    return value


def mask_report(report: pytest.TestReport | pytest.CollectReport, secrets: Any) -> None:
    """Mask ``longrepr``, the captured sections, ``user_properties`` and the verdict
    records (``toolnexus_records``) of one report, in place.

    Called only while something is registered (``_registry``); a passing report has
    no ``longrepr`` to render, and parts that show no secret are left as they are.
    """
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (path, line, message)
        report.longrepr = _masked(longrepr, secrets)
    elif longrepr is not None:
        text = str(longrepr)
        if secrets.find(text):
            # The text, as pytest would print it; the object's structure would keep the value.
            report.longrepr = secrets.mask(text)
    if report.sections:
        report.sections = _masked(report.sections, secrets)
    if isinstance(report, pytest.TestReport) and report.user_properties:
        report.user_properties = _masked(report.user_properties, secrets)
    records = records_of(report)
    if records:
        setattr(report, RECORDS, _masked(records, secrets))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    secrets = _registry()
    if secrets is not None:
        mask_report(report, secrets)
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    secrets = _registry()
    if secrets is not None:
        mask_report(report, secrets)
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_warning_recorded(warning_message: Any, when: str, nodeid: str, location: Any) -> None:
    """Runs before every other recorder (a historic hook cannot be wrapped): masks in place."""
    secrets = _registry()
    message = getattr(warning_message, "message", None)
    if secrets is not None and message is not None and secrets.find(str(message)):
        masked = secrets.mask(str(message))
        try:
            warning_message.message = type(message)(masked)
        except Exception:  # a warning class that wants other arguments: keep the text
            warning_message.message = UserWarning(masked)
