"""Foreign tool objects, adapted: what LangChain, OpenAI Agents and pydantic-ai declare.

Entries appear only where the library is installed (they are test dependencies).
"""

from toolnexus_conformance.corpus import Entry
from toolnexus_ref import as_tools

CORPUS = []

try:
    from langchain_core.tools import tool as langchain_tool
except ImportError:
    pass
else:

    @langchain_tool
    def metres_to_feet(metres: float) -> str:
        """Convert a length in metres to feet."""
        return f"{metres * 3.28084:.2f} feet"

    CORPUS += [Entry(t, note="LangChain @tool") for t in as_tools(metres_to_feet)]

try:
    from agents import function_tool
except ImportError:
    pass
else:

    @function_tool
    def count_words(text: str) -> int:
        """Count the words in a text."""
        return len(text.split())

    CORPUS += [Entry(t, note="OpenAI Agents @function_tool") for t in as_tools(count_words)]

try:
    from pydantic_ai import Tool as PydanticTool
except ImportError:
    pass
else:

    def reverse_text(text: str) -> str:
        """Reverse a text, character by character."""
        return text[::-1]

    CORPUS += [Entry(t, note="pydantic-ai Tool") for t in as_tools(PydanticTool(reverse_text))]
