"""Adapted foreign tools whose own faults must reach the checks, not be hidden by the adapter."""

from toolnexus_conformance.corpus import Entry
from toolnexus_ref import as_tools

CORPUS = []

try:
    from langchain_core.tools import StructuredTool
except ImportError:
    pass
else:

    def _lookup(key: str) -> str:
        raise RuntimeError("the database is down")

    crash = StructuredTool.from_function(_lookup, name="langchain_lookup", description="Look a key up.")
    CORPUS += [
        Entry(t, frozenset({"TN601"}), "LangChain tool raising a plain exception") for t in as_tools(crash)
    ]

try:
    from pydantic_ai import Tool as PydanticTool
except ImportError:
    pass
else:

    def pydantic_lookup(key: str) -> str:
        """Look a key up."""
        raise RuntimeError("the database is down")

    CORPUS += [
        Entry(t, frozenset({"TN601"}), "pydantic-ai tool raising a plain exception")
        for t in as_tools(PydanticTool(pydantic_lookup))
    ]
