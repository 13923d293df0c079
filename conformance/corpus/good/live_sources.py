"""Tools from each source, called live: an HTTP GET, a skills folder, adapted foreign tools.

The HTTP tool's transport answers in process after a short wait, so cancels and
deadlines land while the call is under way; nothing here needs the network.
"""

import asyncio
from pathlib import Path

import httpx

from toolnexus_conformance.corpus import Entry
from toolnexus_ref import as_tools
from toolnexus_ref.http import http_tool
from toolnexus_ref.skills import load_skills


async def _weather(request: httpx.Request) -> httpx.Response:
    await asyncio.sleep(0.02)
    return httpx.Response(200, json={"city": request.url.path.rsplit("/", 1)[1], "sky": "clear"})


CORPUS = [
    Entry(
        http_tool(
            name="get_weather",
            description="Current weather for a city, as JSON.",
            url="https://weather.example.test/cities/{city}",
            input_schema={
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city name"}},
                "required": ["city"],
                "additionalProperties": False,
            },
            timeout=5,
            transport=httpx.MockTransport(_weather),
        ),
        note="http GET tool",
    ),
    Entry(
        load_skills(Path(__file__).resolve().parent.parent / "skills" / "good"),
        note="skills folder",
    ),
]

try:
    from langchain_core.tools import tool as langchain_tool
except ImportError:
    pass
else:

    from pydantic import StrictInt

    # Strict: with plain ``int`` pydantic's lax mode turns ``true`` into 1, and TN604
    # rightly warns that the tool accepts what its schema forbids.
    @langchain_tool
    async def langchain_add(a: StrictInt, b: StrictInt) -> int:
        """Add two integers."""
        return a + b

    CORPUS += [Entry(t, note="LangChain async @tool") for t in as_tools(langchain_add)]

try:
    from pydantic_ai import Tool as PydanticTool
except ImportError:
    pass
else:

    def pydantic_reverse(text: str) -> str:
        """Reverse a text."""
        return text[::-1]

    CORPUS += [Entry(t, note="pydantic-ai Tool") for t in as_tools(PydanticTool(pydantic_reverse))]
