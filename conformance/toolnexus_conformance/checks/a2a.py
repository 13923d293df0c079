"""A2A-specific checks of what an agent declares: its card, and its skill ids.

They judge the *agent*: the card against the protocol version it claims (with
the SDK's own types), and the skill ids a client addresses skills by. The live
checks of how it runs tasks are in ``a2a_live``. Nothing here imports the a2a
SDK at module level: the catalog loads without the ``a2a`` extra.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from .._model import Category, Finding, Scope, Severity, Skip
from .._options import RunOptions
from .._registry import check
from .._subject import ToolSubject

A2A = ("a2a",)
SPEC_CARD = "https://a2a-protocol.org/latest/specification/#441-agentcard"


@check(
    "TN171",
    "a2a-skill-id-unique",
    title="No other skill of the agent's card has this skill's id",
    category=Category.NAMING,
    severity=Severity.ERROR,
    why="Clients address a skill by its id, and the tools a host builds from a card are named"
    " after it: two skills with one id become two tools with one name, which providers refuse"
    " (a 400 for the whole request), or one silently hides the other.",
    fix="Give every skill in the agent card an id of its own.",
    reference=SPEC_CARD,
    sources=A2A,
)
def a2a_skill_id_unique(subject: ToolSubject, options: RunOptions) -> Iterable[Finding]:
    skill = subject.extra.get("a2a_skill_id")
    ids = subject.extra.get("a2a_skill_ids")
    if not isinstance(ids, list):
        raise Skip("the tool does not say its agent's skill ids")
    if skill is None:
        return []
    count = Counter(ids)[skill]
    if count <= 1:
        return []
    return [
        Finding(
            f"the agent card lists {count} skills with the id {skill!r} (exposed here as"
            f" {subject.name!r})",
            path="skills",
        )
    ]


@check(
    "TN871",
    "a2a-card-valid",
    title="The agent card is valid for the protocol version it declares",
    category=Category.TIMEOUT,
    severity=Severity.ERROR,
    why="Clients parse the card before they send anything: a card missing a required field, or"
    " with a field of the wrong shape, is refused by strict clients and half-read by lax ones"
    " (no interface means no URL to call; no skills means nothing to call it for).",
    fix="Build the card with the SDK's AgentCard type (or check it against the specification's"
    " schema) and serve it at /.well-known/agent-card.json; read each problem named here.",
    reference=SPEC_CARD,
    scope=Scope.TARGET,
    sources=A2A,
)
def a2a_card_valid(subject: Any, options: RunOptions) -> Iterable[Finding]:
    problems = subject.extra.get("a2a_card_problems")
    reading = subject.extra.get("a2a_card")
    if not isinstance(problems, list) or reading is None:
        raise Skip("not an A2A target")
    version = getattr(reading, "version", "?")
    url = getattr(reading, "url", "the card")
    return [Finding(f"{url} (A2A {version}): {problem}", path="card") for problem in problems]
