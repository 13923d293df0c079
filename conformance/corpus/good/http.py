"""HTTP tools declared well: a GET with a URL placeholder, as a user's file declares them.

The transport answers in process, so the corpus needs no network.
"""

import httpx

from toolnexus_conformance.corpus import Entry
from toolnexus_ref.http import parse_http_tools


def _answer(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"path": request.url.path})


DECLARED = {
    "tools": [
        {
            "name": "get_weather",
            "description": "Current weather for a city, as JSON with temperature and sky.",
            "method": "GET",
            "url": "https://weather.example.test/cities/{city}",
            "headers": {"Authorization": "Bearer ${WEATHER_TOKEN}"},
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "The city name"}},
                "required": ["city"],
            },
            "timeout": 5,
        }
    ]
}

CORPUS = [
    Entry(tool, note="http GET tool declared in a file")
    for tool in parse_http_tools(DECLARED, transport=httpx.MockTransport(_answer))
]
