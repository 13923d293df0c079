"""What can go wrong between a host and a model, as exceptions a caller can tell apart."""

from __future__ import annotations

__all__ = ["ProviderError", "ProviderRequestError"]


class ProviderError(Exception):
    """The provider refused or failed a request.

    ``retryable`` errors (429, 5xx, a stream cut short) are retried by the loop with
    backoff; ``retry_after`` is the server's ``Retry-After`` in seconds, if it sent one.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        retry_after: float | None = None,
        provider: str = "",
    ) -> None:
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.provider = provider
        where = f"{provider} " if provider else ""
        super().__init__(f"{where}HTTP {status}: {message}" if status else f"{where}{message}")

    @property
    def retryable(self) -> bool:
        return self.status == 0 or self.status == 429 or self.status >= 500


class ProviderRequestError(ProviderError):
    """A 4xx other than 429: the request itself is wrong (bad key, bad body, unknown
    model). Retrying cannot help, so the loop raises it at once."""

    @property
    def retryable(self) -> bool:
        return False


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds form), else ``None``."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds)


def error_for(
    status: int, message: str, *, retry_after: float | None, provider: str
) -> ProviderError:
    cls = ProviderRequestError if 400 <= status < 500 and status != 429 else ProviderError
    return cls(status, message, retry_after=retry_after, provider=provider)
