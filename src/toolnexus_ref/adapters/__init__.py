"""Foreign tool objects as Tools: LangChain, upstream ``toolnexus``, OpenAI Agents, pydantic-ai.

``adapt(value)`` returns a Tool for a tool object of a library it knows, or ``None``.
It imports a library only when the value's own class comes from it, so the library
is already loaded: asking costs nothing for a user who does not have it.

An adapter turns the foreign object into the Tool its own host would call: the
schema that library sends to models, its call, its error conventions mapped as
its host maps them. It never swallows what its host would not: an exception the
library lets escape escapes ``execute`` too, so the suites can report it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["FOREIGN_KINDS", "adapt", "foreign_kind"]

#: Top-level module of the library -> the adapter module that knows its tools.
FOREIGN_KINDS: dict[str, str] = {
    "langchain_core": "toolnexus_ref.adapters.langchain",
    "toolnexus": "toolnexus_ref.adapters.upstream",
    "agents": "toolnexus_ref.adapters.openai_agents",
    "pydantic_ai": "toolnexus_ref.adapters.pydantic_ai",
}


def foreign_kind(value: object) -> str | None:
    """The library a value's class (or a base class) comes from, if an adapter knows it."""
    try:
        mro = type(value).__mro__
    except Exception:  # pragma: no cover - every type has an mro
        return None
    for cls in mro:
        top = str(getattr(cls, "__module__", "") or "").partition(".")[0]
        if top in FOREIGN_KINDS:
            return top
    return None


def adapt(value: object) -> Any | None:
    """A Tool for a foreign tool object, or ``None`` when no adapter knows the value."""
    kind = foreign_kind(value)
    if kind is None:
        return None
    import importlib

    module = importlib.import_module(FOREIGN_KINDS[kind])
    adapter: Callable[[object], Any | None] = module.adapt
    try:
        return adapter(value)
    except ImportError:  # a package of the same top-level name (a project's own ``agents``)
        return None
