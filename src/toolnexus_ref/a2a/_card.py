"""Reading an agent card: fetched once, judged against its protocol version, parsed leniently.

Judging and using are kept apart on purpose. A card with a missing required
field or a duplicate skill id is still usable (the SDK's own parser accepts it),
so its tools load and the checks name each problem; only a card that cannot be
read at all (not JSON, not an object, fields of the wrong type) stops the load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._tls import tls_context

if TYPE_CHECKING:
    import httpx
    from a2a.types import AgentCard

__all__ = ["CardError", "CardReading", "card_problems", "read_card", "reading_of"]

WELL_KNOWN = "/.well-known/agent-card.json"


class CardError(Exception):
    """The card cannot be fetched or read at all; the message says why."""


@dataclass(frozen=True, slots=True)
class CardReading:
    """A card as served (``raw``), as the SDK reads it (``card``), and what is wrong with it."""

    url: str
    raw: Mapping[str, Any]
    card: AgentCard
    #: The protocol version the card was judged against ("1.0" or "0.3").
    version: str
    problems: tuple[str, ...] = field(default=())


def card_url(base: str) -> str:
    """The card's address: ``base`` itself when it names a ``.json`` file, else the well-known path."""
    if base.endswith(".json"):
        return base
    return base.rstrip("/") + WELL_KNOWN


def _version_of(raw: Mapping[str, Any]) -> str:
    """0.3 cards carry ``protocolVersion`` at the top; 1.0 cards per interface."""
    if "supportedInterfaces" in raw or "protocolVersion" not in raw:
        return "1.0"
    declared = str(raw.get("protocolVersion", ""))
    return "0.3" if declared.startswith("0.") else "1.0"


def card_problems(raw: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The protocol version a card is judged against, and every way it breaks that version.

    1.0 cards are parsed strictly into the SDK's protobuf ``AgentCard`` and their
    REQUIRED fields checked by the SDK's own rule; 0.3 cards are validated with the
    SDK's pydantic model of 0.3. Duplicate skill ids are not judged here: the
    checks judge them per skill (TN171), where the tool they break is named.
    """
    version = _version_of(raw)
    problems: list[str] = []
    if version == "0.3":
        from a2a.compat.v0_3.types import AgentCard as Card03
        from pydantic import ValidationError

        try:
            Card03.model_validate(dict(raw))
        except ValidationError as exc:
            for error in exc.errors():
                where = ".".join(str(p) for p in error["loc"]) or "(card)"
                problems.append(f"{where}: {error['msg']}")
    else:
        from a2a.types import AgentCard
        from a2a.utils.errors import InvalidParamsError
        from a2a.utils.proto_utils import validate_proto_required_fields
        from google.protobuf.json_format import ParseDict, ParseError

        strict = AgentCard()
        try:
            ParseDict(dict(raw), strict)
        except (ParseError, TypeError, ValueError) as exc:
            problems.append(f"not an A2A {version} AgentCard: {exc}")
        else:
            try:
                validate_proto_required_fields(strict)
            except InvalidParamsError as exc:
                data = getattr(exc, "data", None) or {}
                for error in data.get("errors", []):
                    problems.append(f"{error.get('field')}: {error.get('message', 'required')}")
            for n, interface in enumerate(strict.supported_interfaces):
                if not interface.protocol_version:
                    problems.append(f"supported_interfaces[{n}].protocol_version: required")
    return version, problems


async def read_card(base: str, *, client: httpx.AsyncClient | None = None) -> CardReading:
    """Fetch and judge the card of the agent at ``base``; raises ``CardError`` only."""
    import httpx

    url = card_url(base)
    own = client is None
    http = client or httpx.AsyncClient(timeout=30.0, verify=tls_context())
    try:
        response = await http.get(url)
        response.raise_for_status()
        raw = response.json()
    except httpx.HTTPStatusError as exc:
        raise CardError(
            f"the agent card at {url} answered HTTP {exc.response.status_code}"
        ) from exc
    except httpx.HTTPError as exc:
        raise CardError(
            f"cannot fetch the agent card at {url}: {type(exc).__name__}: {exc}"
        ) from exc
    except ValueError as exc:
        raise CardError(f"the agent card at {url} is not JSON: {exc}") from exc
    finally:
        if own:
            await http.aclose()
    return reading_of(raw, url)


def reading_of(raw: object, url: str = "(in memory)") -> CardReading:
    """Judge and parse a card already in hand (JSON data); raises ``CardError`` only."""
    import copy

    from a2a.client.card_resolver import parse_agent_card
    from google.protobuf.json_format import ParseError

    if not isinstance(raw, dict):
        raise CardError(f"the agent card at {url} is not a JSON object")
    version, problems = card_problems(raw)
    try:
        card = parse_agent_card(copy.deepcopy(raw))
    except (ParseError, TypeError, ValueError) as exc:
        raise CardError(f"the agent card at {url} cannot be read: {exc}") from exc
    return CardReading(url, raw, card, version, tuple(problems))
