"""Skipping a test module whose SDK is missing, without importing the SDK."""

from __future__ import annotations

import importlib.util

import pytest


def skip_unless_installed(*names: str, reason: str | None = None) -> None:
    """Skip the calling module unless every package named is installed.

    ``pytest.importorskip`` imports the package; an agent SDK takes up to seconds,
    and every xdist worker collects every module. The modules that call this import
    their SDK in the tests or fixtures that use it, so only the worker that runs them
    pays for it. A dotted name's parent is looked up first (``find_spec`` raises
    when it is missing, and imports it, a namespace package for ``google.genai``).
    """
    for name in names:
        parent = name.rpartition(".")[0]
        if (parent and importlib.util.find_spec(parent) is None) or (
            importlib.util.find_spec(name) is None
        ):
            pytest.skip(reason or f"{name} is not installed", allow_module_level=True)
