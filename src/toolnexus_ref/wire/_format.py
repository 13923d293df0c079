"""The one protocol every wire format implements, so a provider is a module and a row.

A wire format converts between the neutral conversation (``Message``, ``ToolDecl``,
``Turn``, ``Request``) and one provider's JSON: the request a host sends, the reply a
server gives (whole or streamed), and the error body it sends instead. The fakes
serve with it, the host clients speak it, the toolkit declares tools with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from ._model import Message, Request, ToolDecl, Turn

__all__ = ["WireFormat"]


class WireFormat(Protocol):
    """Implemented by each module of ``toolnexus_ref.wire`` (modules satisfy protocols)."""

    #: the request path, as the provider documents it (``{model}`` where it goes)
    PATH: str

    def declarations(self, tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
        """The request's ``tools`` value."""
        ...

    def build_request(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[ToolDecl] = (),
        *,
        stream: bool = False,
    ) -> dict[str, Any]:
        """The body a host sends."""
        ...

    def parse_request(
        self, body: Mapping[str, Any], *, model: str | None = None, stream: bool | None = None
    ) -> Request:
        """A body back to a ``Request``; ``model``/``stream`` when the URL carries them."""
        ...

    def build_response(
        self,
        turn: Turn,
        *,
        model: str,
        id: str = ...,
        request: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A whole reply; ``request`` (the body) for the fields a provider echoes."""
        ...

    def stream_events(
        self,
        turn: Turn,
        *,
        model: str,
        id: str = ...,
        fragment: int = 8,
        request: Mapping[str, Any] | None = None,
    ) -> list[bytes]:
        """A streamed reply, one element per event (SSE) or line (NDJSON)."""
        ...

    def parse_response(self, body: Mapping[str, Any]) -> Turn: ...

    def read_stream(self, lines: Iterable[str]) -> Turn:
        """A streamed reply's text lines back to a turn; ``TruncatedStream`` when cut."""
        ...

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The provider's own error body, so an SDK raises its own error class."""
        ...

    def error_message(self, body: object) -> str: ...
