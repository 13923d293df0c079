"""Foreign tool objects whose own declaration breaks the contract (found through the adapter)."""

from toolnexus_conformance.corpus import Entry
from toolnexus_ref import as_tools

CORPUS = []

try:
    from langchain_core.tools import tool as langchain_tool
except ImportError:
    pass
else:

    @langchain_tool("look up")
    def look_up(query: str) -> str:
        """Look a word up."""
        return query

    CORPUS += [Entry(t, frozenset({"TN102"}), "LangChain tool named with a space") for t in as_tools(look_up)]
