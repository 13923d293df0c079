"""Server-sent events: encoding what the fakes stream, decoding what the host reads."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["SSEEvent", "decode_sse", "encode_sse"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str | None = None

    def json(self) -> Any:
        return json.loads(self.data)


def encode_sse(data: Any, event: str | None = None) -> bytes:
    """One event; ``data`` that is not text is dumped as compact JSON, as the providers do."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    lines = "".join(f"data: {line}\n" for line in text.split("\n"))
    return f"{head}{lines}\n".encode()


def decode_sse(lines: Iterable[str]) -> Iterator[SSEEvent]:
    """Events from text lines (``httpx.Response.iter_lines`` or a split body)."""
    event: str | None = None
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield SSEEvent("\n".join(data), event)
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            event = value
        elif key == "data":
            data.append(value)
    if data:
        yield SSEEvent("\n".join(data), event)
