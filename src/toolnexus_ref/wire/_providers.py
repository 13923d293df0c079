"""The provider table: one row per wire format, read by the fakes, the host clients and
the toolkit. A new provider is one wire module and one row here."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import anthropic, gemini, ollama, openai, responses

if TYPE_CHECKING:
    from ._format import WireFormat

__all__ = ["PROVIDERS", "Provider", "Route", "provider", "route"]


@dataclass(frozen=True, slots=True)
class Provider:
    """Where a provider lives and how its requests are recognised.

    ``path`` matches the end of a request path; its named groups ``model`` and
    ``method`` carry what Gemini puts in the URL. ``loopback_suffix`` is what a base
    URL on a fake server needs (the OpenAI SDKs expect ``.../v1``).
    """

    name: str
    wire: WireFormat
    path: re.Pattern[str]
    #: where the SDKs send by default (``host`` or ``host:port``), for respx routes
    hosts: tuple[str, ...]
    base_url: str
    loopback_suffix: str
    env_keys: tuple[str, ...]
    #: the path a host posts to, after its base URL, for a model and streaming or not
    request_path: Callable[[str, bool], str]
    #: the headers that carry an API key
    auth_headers: Callable[[str], dict[str, str]]
    #: the body streams when the path says so (Gemini), else when the body says so
    stream_method: str = ""
    #: the content type of a streamed reply
    stream_type: str = "text/event-stream"


def _bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def _anthropic_key(key: str) -> dict[str, str]:
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


def _google_key(key: str) -> dict[str, str]:
    return {"x-goog-api-key": key}


def _no_key(key: str) -> dict[str, str]:
    return {}


PROVIDERS: dict[str, Provider] = {
    row.name: row
    for row in (
        Provider(
            "openai",
            openai,
            re.compile(r"/chat/completions$"),
            ("api.openai.com",),
            "https://api.openai.com/v1",
            "/v1",
            ("OPENAI_API_KEY",),
            lambda model, stream: "/chat/completions",
            _bearer,
        ),
        Provider(
            "responses",
            responses,
            re.compile(r"/responses$"),
            ("api.openai.com",),
            "https://api.openai.com/v1",
            "/v1",
            ("OPENAI_API_KEY",),
            lambda model, stream: "/responses",
            _bearer,
        ),
        Provider(
            "anthropic",
            anthropic,
            re.compile(r"/messages$"),
            ("api.anthropic.com",),
            "https://api.anthropic.com",
            "",
            ("ANTHROPIC_API_KEY",),
            lambda model, stream: "/v1/messages",
            _anthropic_key,
        ),
        Provider(
            "gemini",
            gemini,
            re.compile(
                r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$"
            ),
            ("generativelanguage.googleapis.com",),
            "https://generativelanguage.googleapis.com",
            "",
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            lambda model, stream: gemini.path_for(model, stream=stream),
            _google_key,
            stream_method="streamGenerateContent",
        ),
        Provider(
            "ollama",
            ollama,
            re.compile(r"/api/chat$"),
            ("127.0.0.1:11434", "localhost:11434"),
            "http://127.0.0.1:11434",
            "",
            (),
            lambda model, stream: "/api/chat",
            _no_key,
            stream_type="application/x-ndjson",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Route:
    """A request path resolved to its provider, with what the URL said."""

    provider: Provider
    model: str | None
    stream: bool | None


def provider(name: str) -> Provider:
    """The row for a provider name, with a clear error for an unknown one."""
    try:
        return PROVIDERS[name]
    except KeyError:
        raise ValueError(
            f"unknown provider {name!r}; expected one of {', '.join(sorted(PROVIDERS))}"
        ) from None


def route(path: str) -> Route | None:
    """The provider serving ``path`` (query string removed), or ``None``."""
    for row in PROVIDERS.values():
        match = row.path.search(path)
        if match is None:
            continue
        groups = match.groupdict()
        stream = groups["method"] == row.stream_method if row.stream_method else None
        return Route(row, groups.get("model"), stream)
    return None
