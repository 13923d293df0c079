"""One HTTP endpoint as a Tool: a method, a URL template, headers, a body, a timeout.

Arguments fill ``{placeholders}`` in the URL; the rest go to the query string
(GET, HEAD, DELETE, or the names listed in ``query``) or to the body (JSON or a
form). Header values may name environment variables as ``${NAME}``: they are
read at call time and never appear in the tool's repr, its results or a report;
if the server echoes one back, it is masked there too. A non-2xx answer is an
error result ``HTTP <status>: <body>``; a missing variable, a connection
failure, a cancel and a deadline are error results as well.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal
from urllib.parse import quote

from toolnexus_ref._calling import awaits_only
from toolnexus_ref._context import ToolContext
from toolnexus_ref._naming import Source
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tls import tls_context
from toolnexus_ref._tool import BaseTool, ToolAnnotations

__all__ = ["HttpTool", "http_tool"]

Body = Literal["json", "form"]

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_IN_QUERY = frozenset({"GET", "HEAD", "DELETE", "OPTIONS"})
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
#: The most characters of a response body an error result quotes.
MAX_ERROR_BODY = 2000
MASK = "***"


class _MissingVariable(Exception):
    def __init__(self, header: str, variable: str) -> None:
        super().__init__(variable)
        self.header = header
        self.variable = variable


def _hints(method: str) -> ToolAnnotations:
    """What the method says about the call: only safe methods are read-only."""
    return ToolAnnotations(
        read_only=method in _SAFE,
        destructive=True if method == "DELETE" else (False if method in _SAFE else None),
        idempotent=method in _IDEMPOTENT,
    )


def _inferred_schema(url: str) -> dict[str, Any]:
    names = list(dict.fromkeys(_PLACEHOLDER.findall(url)))
    return {
        "type": "object",
        "properties": {n: {"type": "string", "description": f"The {n} in the URL"} for n in names},
        "required": names,
        "additionalProperties": False,
    }


class HttpTool(BaseTool):
    """An HTTP endpoint the model can call (source ``http``).

    ``method`` is public: the suites call only GET endpoints unless told otherwise.
    ``transport`` (an ``httpx`` transport) is for tests and custom networking.
    """

    source = Source.HTTP.value

    def __init__(
        self,
        *,
        name: str,
        description: str,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        query: Sequence[str] = (),
        body: Body = "json",
        input_schema: Mapping[str, Any] | None = None,
        timeout: float | None = 30.0,
        transport: Any = None,
    ) -> None:
        if body not in ("json", "form"):
            raise ValueError(f"http tool {name!r}: body must be 'json' or 'form', got {body!r}")
        self.name = name
        self.description = description
        self.method = method.upper()
        self.url = url
        self._headers = dict(headers or {})
        self.query = tuple(query)
        self.body = body
        self.input_schema = (
            dict(input_schema) if input_schema is not None else _inferred_schema(url)
        )
        self.timeout = timeout
        self.annotations = _hints(self.method)
        self._transport = transport

    def __repr__(self) -> str:  # the headers stay out: they may hold secrets
        return f"<HttpTool {self.name!r} {self.method} {self.url}>"

    @property
    def _code_on_loop(self) -> bool:
        """Whether a call may run code other than ours and httpx's on the event loop."""
        return not awaits_only(self, HttpTool, self._transport, "execute", "run")

    @property
    def header_names(self) -> tuple[str, ...]:
        """The headers sent, by name only."""
        return tuple(self._headers)

    def conformance_extra(self) -> Mapping[str, Any]:
        return {"method": self.method, "url_template": self.url}

    def _expanded_headers(self) -> tuple[dict[str, str], list[str]]:
        """The headers with ``${NAME}`` read from the environment, and the values read."""
        secrets: list[str] = []
        headers = {}
        for header, template in self._headers.items():

            def read(match: re.Match[str], header: str = header) -> str:
                value = os.environ.get(match.group(1))
                if value is None:
                    raise _MissingVariable(header, match.group(1))
                if value:
                    secrets.append(value)
                return value

            headers[header] = _ENV.sub(read, template)
        return headers, secrets

    def _request_parts(self, args: Mapping[str, Any]) -> tuple[str, dict[str, Any], Any]:
        rest = dict(args)

        def fill(match: re.Match[str]) -> str:
            value = rest.pop(match.group(1), "")
            return quote(str(value), safe="")

        url = _PLACEHOLDER.sub(fill, self.url)
        in_query = {k: rest.pop(k) for k in list(rest) if k in self.query}
        if self.method in _IN_QUERY:
            in_query.update(rest)
            rest = {}
        params = {k: v if isinstance(v, str) else _json(v) for k, v in in_query.items()}
        return url, params, rest or None

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> ToolResult:
        import httpx

        try:
            headers, secrets = self._expanded_headers()
        except _MissingVariable as missing:
            return ToolResult.error(
                f"header {missing.header!r} needs the environment variable"
                f" {missing.variable}, which is not set",
                {"error_type": "MissingCredential"},
                retryable=False,
            )
        url, params, payload = self._request_parts(args)
        remaining = ctx.remaining() if ctx is not None else None
        limits = [t for t in (self.timeout, remaining) if t is not None]
        send: dict[str, Any] = {"params": params, "headers": headers}
        if payload is not None:
            send["json" if self.body == "json" else "data"] = payload
        try:
            async with httpx.AsyncClient(
                transport=self._transport,
                timeout=min(limits) if limits else None,
                verify=tls_context(),
            ) as client:
                response = await client.request(self.method, url, **send)
        except httpx.TimeoutException as exc:
            return ToolResult.error(
                _masked(f"HTTP request timed out: {type(exc).__name__}", secrets),
                {"error_type": "TimeoutError"},
                retryable=True,
            )
        except httpx.HTTPError as exc:
            return ToolResult.error(
                _masked(f"HTTP request failed: {type(exc).__name__}: {exc}", secrets),
                {"error_type": type(exc).__name__},
                retryable=True,
            )
        text = _masked(response.text, secrets)
        meta = {"status": response.status_code}
        if not response.is_success:
            shown = text if len(text) <= MAX_ERROR_BODY else text[:MAX_ERROR_BODY] + "..."
            retry = response.status_code == 429 or response.status_code >= 500
            return ToolResult.error(f"HTTP {response.status_code}: {shown}", meta, retryable=retry)
        return ToolResult.ok(text, meta)


def _json(value: Any) -> str:
    import json

    return json.dumps(value)


def _masked(text: str, secrets: Sequence[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def http_tool(
    *,
    name: str,
    description: str,
    method: str = "GET",
    url: str,
    headers: Mapping[str, str] | None = None,
    query: Sequence[str] = (),
    body: Body = "json",
    input_schema: Mapping[str, Any] | None = None,
    timeout: float | None = 30.0,
    transport: Any = None,
) -> HttpTool:
    """Declare one endpoint as a tool; see ``HttpTool``."""
    return HttpTool(
        name=name,
        description=description,
        method=method,
        url=url,
        headers=headers,
        query=query,
        body=body,
        input_schema=input_schema,
        timeout=timeout,
        transport=transport,
    )
