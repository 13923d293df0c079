"""HTTP tools with the declaration mistakes a file of endpoints invites."""

from toolnexus_conformance.corpus import Entry
from toolnexus_ref.http import parse_http_tools

DECLARED = [
    {
        "name": "weather.get",
        "description": "Current weather for a city.",
        "url": "https://weather.example.test/cities/{city}",
    },
    {
        "name": "get_forecast",
        "description": "The forecast for a city.",
        "url": "https://weather.example.test/forecast/{city}",
        "input_schema": {
            "type": "object",
            "properties": {"town": {"type": "string"}},
            "required": ["city"],
        },
    },
]

_dotted, _unlisted = parse_http_tools(DECLARED)

CORPUS = [
    Entry(_dotted, frozenset({"TN102"}), "http tool named with a dot, as REST paths read"),
    Entry(_unlisted, frozenset({"TN306"}), "http tool requiring its URL placeholder without declaring it"),
]
