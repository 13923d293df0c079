"""Agent cards judged against their protocol version, and the a2a: target form."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from toolnexus_conformance.targets import TargetError, TargetKind, parse_target

from toolnexus_ref.a2a import card_problems

CARD_1_0: dict[str, Any] = {
    "name": "Travel Agent",
    "description": "Plans trips.",
    "version": "1.0.0",
    "supportedInterfaces": [
        {"url": "https://agent.example/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ],
    "capabilities": {"streaming": True},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {"id": "flights", "name": "Flights", "description": "Find flights.", "tags": ["travel"]}
    ],
}
CARD_0_3: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Travel Agent",
    "description": "Plans trips.",
    "url": "https://agent.example/",
    "version": "1.0.0",
    "capabilities": {},
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain"],
    "skills": [
        {"id": "flights", "name": "Flights", "description": "Find flights.", "tags": ["travel"]}
    ],
}


@pytest.mark.parametrize("card", [CARD_1_0, CARD_0_3], ids=["1.0", "0.3"])
def test_a_valid_card_has_no_problems(card: dict[str, Any]) -> None:
    version, problems = card_problems(card)
    assert version == ("0.3" if "protocolVersion" in card else "1.0")
    assert problems == []


def test_a_1_0_card_missing_required_fields() -> None:
    card = copy.deepcopy(CARD_1_0)
    del card["version"]
    del card["supportedInterfaces"][0]["protocolVersion"]
    _, problems = card_problems(card)
    assert any(p.startswith("version") for p in problems), problems
    assert any("protocol_version" in p for p in problems), problems


def test_a_1_0_card_with_a_field_of_the_wrong_shape() -> None:
    card = copy.deepcopy(CARD_1_0)
    card["skills"] = "flights"
    _, problems = card_problems(card)
    assert problems
    assert "not an A2A 1.0 AgentCard" in problems[0]


def test_a_0_3_card_is_judged_by_the_0_3_model() -> None:
    card = copy.deepcopy(CARD_0_3)
    del card["url"]
    version, problems = card_problems(card)
    assert version == "0.3"
    assert any(p.startswith("url") for p in problems), problems


def test_duplicate_skill_ids_are_left_to_the_skill_check() -> None:
    card = copy.deepcopy(CARD_1_0)
    card["skills"].append(dict(card["skills"][0], name="Flights again"))
    assert card_problems(card) == ("1.0", [])  # TN171 names them, per tool


def test_the_a2a_target_form() -> None:
    spec = parse_target("a2a:https://agent.example/")
    assert (spec.kind, spec.value, spec.label) == (
        TargetKind.A2A,
        "https://agent.example/",
        "a2a:https://agent.example/",
    )
    assert parse_target("https://host/mcp").kind is TargetKind.HTTP  # a bare URL stays MCP
    with pytest.raises(TargetError, match="needs the agent's http"):
        parse_target("a2a:agent.example")


def test_the_reference_and_the_catalog_do_not_import_the_sdk() -> None:
    """Only using the A2A source imports the a2a SDK: the extra stays optional."""
    import subprocess
    import sys

    code = (
        "import sys, toolnexus_ref, toolnexus_ref.host\n"
        "from toolnexus_conformance._registry import load_catalog\n"
        "from toolnexus_conformance.targets import parse_target\n"
        "assert 'TN871' in load_catalog() and 'TN771' in load_catalog()\n"
        "parse_target('a2a:http://127.0.0.1:9/')\n"
        "print(sorted(m for m in sys.modules if m == 'a2a' or m.startswith('a2a.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
