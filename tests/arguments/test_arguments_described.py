"""Values a description quotes are tried first: they are what a model reading it sends."""

from __future__ import annotations

from typing import Any

from toolnexus_conformance.arguments import edge_args_for
from toolnexus_conformance.arguments._edges import described_values

#: mcp-server-time's convert_time, as the server declares it (2026.10).
CONVERT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source_timezone": {
            "type": "string",
            "description": "Source IANA timezone name (e.g., 'America/New_York',"
            " 'Europe/London'). Use 'UTC' as local timezone if no source timezone"
            " provided by the user.",
        },
        "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        "target_timezone": {
            "type": "string",
            "description": "Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco').",
        },
    },
    "required": ["source_timezone", "time", "target_timezone"],
}


def test_the_quoted_values_of_a_string_description_in_order() -> None:
    node = CONVERT["properties"]["source_timezone"]
    assert described_values(node) == ["America/New_York", "Europe/London", "UTC"]
    node = {"type": "string", "description": 'A `mode` such as "fast", or "slow".'}
    assert described_values(node) == ["mode", "fast", "slow"]


def test_an_apostrophe_is_no_quote_and_other_types_quote_nothing() -> None:
    node = {"type": "string", "description": "The user's name, as the user's profile says."}
    assert described_values(node) == []
    assert described_values({"type": "integer", "description": "e.g. '5'"}) == []
    assert described_values({"type": "string"}) == []


def test_every_property_is_set_to_its_example_at_once_before_the_edges() -> None:
    base = {"source_timezone": "", "time": "", "target_timezone": ""}
    explicit = edge_args_for(CONVERT, base)
    assert explicit[0] == {
        "source_timezone": "America/New_York",
        "time": "",
        "target_timezone": "Asia/Tokyo",
    }
    assert {**base, "source_timezone": "Europe/London"} in explicit
    assert {**base, "target_timezone": "America/San_Francisco"} in explicit


def test_a_quoted_value_the_schema_refuses_is_not_offered() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "pattern": "^[A-Z]{3}$",
                "description": "e.g. 'EUR' or 'euro'",
            }
        },
    }
    explicit = edge_args_for(schema, {"code": "AAA"})
    assert {"code": "EUR"} in explicit
    assert {"code": "euro"} not in explicit
