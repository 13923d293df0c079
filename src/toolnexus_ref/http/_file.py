"""HTTP tools declared in a JSON or YAML file: ``{"tools": [{name, method, url, ...}, ...]}``.

Each entry takes ``HttpTool``'s fields (``name``, ``description``, ``method``,
``url``, ``headers``, ``query``, ``body``, ``input_schema``, ``timeout``); a bad
entry is refused with its position and the field at fault.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._tool import HttpTool

__all__ = ["HttpConfigError", "load_http_tools", "parse_http_tools"]

_FIELDS = (
    "name",
    "description",
    "method",
    "url",
    "headers",
    "query",
    "body",
    "input_schema",
    "timeout",
)


class HttpConfigError(ValueError):
    """A file of HTTP tools that cannot be read; the message names the entry and field."""


def parse_http_tools(
    data: Any, *, where: str = "the HTTP tools", transport: Any = None
) -> list[HttpTool]:
    entries = data.get("tools") if isinstance(data, Mapping) else data
    if not isinstance(entries, list):
        raise HttpConfigError(f"{where}: expected a list of tools, or a mapping with 'tools'")
    tools = []
    for index, entry in enumerate(entries):
        at = f"{where}, tool #{index + 1}"
        if not isinstance(entry, Mapping):
            raise HttpConfigError(f"{at}: expected a mapping, got {type(entry).__name__}")
        unknown = sorted(set(entry) - set(_FIELDS))
        if unknown:
            raise HttpConfigError(f"{at}: unknown field(s) {unknown}; known: {list(_FIELDS)}")
        for required in ("name", "url"):
            if not isinstance(entry.get(required), str):
                raise HttpConfigError(f"{at}: '{required}' must be a string")
        headers = entry.get("headers") or {}
        if not isinstance(headers, Mapping) or not all(
            isinstance(v, str) for v in headers.values()
        ):
            raise HttpConfigError(f"{at}: 'headers' must map header names to strings")
        try:
            tools.append(
                HttpTool(
                    name=entry["name"],
                    description=str(entry.get("description", "")),
                    method=str(entry.get("method", "GET")),
                    url=entry["url"],
                    headers=headers,
                    query=list(entry.get("query") or ()),
                    body=entry.get("body", "json"),
                    input_schema=entry.get("input_schema"),
                    timeout=entry.get("timeout", 30.0),
                    transport=transport,
                )
            )
        except (TypeError, ValueError) as exc:
            raise HttpConfigError(f"{at}: {exc}") from exc
    return tools


def load_http_tools(path: str | Path, *, transport: Any = None) -> list[HttpTool]:
    """The tools declared in a ``.json``, ``.yaml`` or ``.yml`` file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise HttpConfigError(f"cannot read {file}: {exc}") from exc
    try:
        if file.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:
        raise HttpConfigError(f"{file} does not parse: {exc}") from exc
    return parse_http_tools(data, where=str(file), transport=transport)
