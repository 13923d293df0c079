"""pytest-toolnexus: conformance suites, fake LLMs and fixtures for LLM tools.

The names below load on first use, so that importing the plugin (which pytest does
in every session) costs nothing until a test asks for a fake.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._plain_imports import import_libraries_plainly

# Before the plugin imports either library (see ``_plain_imports``).
import_libraries_plainly()

if TYPE_CHECKING:
    from .fakes import (
        FakeLLM,
        FakeLLMServer,
        Recorder,
        Usage,
        call,
        delayed,
        error,
        hang,
        text,
        tool_calls,
        truncated,
    )
    from .snapshots import ToolnexusSnapshotExtension

__all__ = [
    "FakeLLM",
    "FakeLLMServer",
    "Recorder",
    "ToolnexusSnapshotExtension",
    "Usage",
    "call",
    "delayed",
    "error",
    "hang",
    "text",
    "tool_calls",
    "truncated",
]

_HOMES = {name: ".fakes" for name in __all__} | {"ToolnexusSnapshotExtension": ".snapshots"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'pytest_toolnexus' has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
