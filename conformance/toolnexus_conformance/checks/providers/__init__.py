"""Provider profiles (TN4xx): would OpenAI, Anthropic and Gemini accept this declaration as is?

Warnings by default: a tool may be meant for one provider only. Each rule cites where
it comes from in its catalog entry. Importing this package registers every profile,
in code order (OpenAI, OpenAI strict, Anthropic, Gemini).
"""

from __future__ import annotations

import importlib

__all__: list[str] = []

for _module in ("_openai", "_openai_strict", "_anthropic", "_gemini"):
    importlib.import_module(f"{__name__}.{_module}")
