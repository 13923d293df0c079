"""Small clients, one per wire format, over httpx: just enough to drive the loop."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolnexus_ref.wire import (
    PROVIDERS,
    Message,
    ToolDecl,
    TruncatedStream,
    Turn,
    WireError,
    WireFormat,
)

from ._errors import ProviderError, error_for, parse_retry_after

if TYPE_CHECKING:
    import httpx

    from toolnexus_ref._context import ToolContext

__all__ = [
    "CLIENTS",
    "LLM",
    "AnthropicClient",
    "GeminiClient",
    "HTTPClient",
    "OllamaClient",
    "OpenAIClient",
    "ResponsesClient",
]


class LLM(Protocol):
    """What the loop needs from a model: the next turn for a conversation.

    Raise ``ProviderError`` for a provider failure; the loop retries the retryable ones.
    """

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDecl],
        *,
        ctx: ToolContext | None = None,
    ) -> Turn: ...


class HTTPClient:
    """Shared plumbing: build the body, post it, read a body or a stream, map errors.

    A subclass only names its row of the provider table (``provider``): the row gives
    the wire format, the default base URL, the path, the key's headers and the
    environment variables holding the key."""

    provider: str = ""
    #: whether the provider needs a key at all (a local Ollama does not)
    needs_key: bool = True

    @property
    def wire(self) -> WireFormat:
        return PROVIDERS[self.provider].wire

    @property
    def env_keys(self) -> tuple[str, ...]:
        return PROVIDERS[self.provider].env_keys

    @property
    def default_base_url(self) -> str:
        return PROVIDERS[self.provider].base_url

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        stream: bool = False,
        timeout: float = 60.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        key = api_key or next((os.environ[k] for k in self.env_keys if os.environ.get(k)), None)
        if not key and not self.needs_key:
            key = "unused"
        if not key:
            names = " or ".join(self.env_keys)
            raise ValueError(
                f"{type(self).__name__} needs an API key: pass api_key= or set {names}"
            )
        self.model = model
        self.api_key = key
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.stream = stream
        self.timeout = timeout
        self._http = http
        self._owned: tuple[object, httpx.AsyncClient] | None = None

    def __repr__(self) -> str:  # never shows the key
        return f"<{type(self).__name__} model={self.model!r} base_url={self.base_url!r}>"

    def headers(self) -> dict[str, str]:
        return PROVIDERS[self.provider].auth_headers(self.api_key)

    def url(self) -> str:
        return self.base_url + PROVIDERS[self.provider].request_path(self.model, self.stream)

    def body(self, messages: Sequence[Message], tools: Sequence[ToolDecl]) -> dict[str, Any]:
        result: dict[str, Any] = self.wire.build_request(
            self.model, list(messages), list(tools), stream=self.stream
        )
        return result

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDecl],
        *,
        ctx: ToolContext | None = None,
    ) -> Turn:
        import httpx

        del ctx  # the loop races the call against the context
        body = self.body(messages, tools)
        http = self._http or self._own_client()
        try:
            request = http.build_request("POST", self.url(), json=body, headers=self.headers())
            response = await http.send(request, stream=True)
            try:
                return await self._read(response)
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise ProviderError(0, f"transport error: {exc!r}", provider=self.provider) from exc

    def _own_client(self) -> httpx.AsyncClient:
        """One client per event loop: building one costs milliseconds (TLS setup), and a
        client's connections belong to the loop that opened them."""
        import asyncio

        import httpx

        loop = asyncio.get_running_loop()
        if self._owned is None or self._owned[0] is not loop or self._owned[1].is_closed:
            self._owned = (loop, httpx.AsyncClient(timeout=self.timeout))
        return self._owned[1]

    async def aclose(self) -> None:
        """Close the client this object opened (not one passed in as ``http``)."""
        if self._owned is not None:
            owned, self._owned = self._owned[1], None
            await owned.aclose()

    async def _read(self, response: httpx.Response) -> Turn:
        if response.status_code >= 400:
            raw = (await response.aread()).decode("utf-8", "replace")
            try:
                message = self.wire.error_message(json.loads(raw))
            except ValueError:
                message = raw[:500]
            raise error_for(
                response.status_code,
                str(message),
                retry_after=parse_retry_after(response.headers.get("retry-after")),
                provider=self.provider,
            )
        try:
            if self.stream:
                lines = [line async for line in response.aiter_lines()]
                return self.wire.read_stream(lines)
            data = json.loads(await response.aread())
            if not isinstance(data, Mapping):
                raise WireError("response body is not a JSON object")
            return self.wire.parse_response(data)
        except TruncatedStream as exc:
            raise ProviderError(0, str(exc), provider=self.provider) from exc
        except (WireError, ValueError) as exc:
            raise ProviderError(0, f"unreadable response: {exc}", provider=self.provider) from exc


class OpenAIClient(HTTPClient):
    """OpenAI Chat Completions (``/v1/chat/completions``)."""

    provider = "openai"


class ResponsesClient(HTTPClient):
    """The OpenAI Responses API (``/v1/responses``), stateless: the whole conversation
    goes as ``input`` each turn (``store: false``), as the loop keeps the history."""

    provider = "responses"


class AnthropicClient(HTTPClient):
    """Anthropic Messages (``/v1/messages``)."""

    provider = "anthropic"


class GeminiClient(HTTPClient):
    """Gemini ``generateContent`` (``streamGenerateContent?alt=sse`` when streaming)."""

    provider = "gemini"


class OllamaClient(HTTPClient):
    """Ollama's native ``/api/chat``; streams NDJSON when ``stream=True``; no key."""

    provider = "ollama"
    needs_key = False


#: A client class per row of the provider table.
CLIENTS: dict[str, type[HTTPClient]] = {
    c.provider: c
    for c in (OpenAIClient, ResponsesClient, AnthropicClient, GeminiClient, OllamaClient)
}
