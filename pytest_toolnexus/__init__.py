"""pytest-toolnexus: conformance suites, fake LLMs and fixtures for LLM tools."""

from __future__ import annotations

__all__: list[str] = []
