"""The base URL each provider's SDK takes, for anything that serves the fakes at ``url``."""

from __future__ import annotations

__all__ = ["BaseUrls"]


class BaseUrls:
    """Give a class with a ``url`` the per-provider base URLs (OpenAI adds ``/v1``)."""

    @property
    def url(self) -> str:
        raise NotImplementedError

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    @property
    def gemini_base_url(self) -> str:
        return self.url

    @property
    def ollama_base_url(self) -> str:
        return self.url
