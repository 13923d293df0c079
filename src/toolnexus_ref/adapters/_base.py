"""What every adapted tool shares: a declaration read once, the object it wraps, its hints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolnexus_ref._naming import Source
from toolnexus_ref._result import ToolResult
from toolnexus_ref._tool import ToolAnnotations

__all__ = ["ForeignTool", "refused_arguments"]


class ForeignTool:
    """A foreign tool object seen as a Tool; subclasses set ``input_schema`` and ``execute``.

    The declaration (name, description, input schema) is what the foreign library
    shows a model, read once when the adapter is made. ``wrapped`` is the original
    object, for tests and for users who want it back.
    """

    name: str
    description: str
    source: str = Source.CUSTOM.value
    annotations: ToolAnnotations = ToolAnnotations()
    #: The library the object comes from, as reports name it.
    library: str = "foreign"

    def __init__(
        self,
        wrapped: object,
        *,
        name: Any,
        description: Any,
        source: str = Source.CUSTOM.value,
        annotations: ToolAnnotations | None = None,
    ) -> None:
        self.wrapped = wrapped
        self.name = name
        self.description = description
        self.source = source
        if annotations is not None:
            self.annotations = annotations

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} from {self.library}>"

    def conformance_extra(self) -> Mapping[str, Any]:
        """What the checks may want to know: which library the tool came from."""
        return {"library": self.library, "wrapped_type": type(self.wrapped).__qualname__}


def refused_arguments(args: object) -> ToolResult | None:
    """The error a host gives for arguments that are not a JSON object, before any call.

    Every framework here hands its tools a dict: a model's tool call carries an
    object, and the host refuses anything else. ``None`` when ``args`` is a mapping.
    """
    if isinstance(args, Mapping):
        return None
    return ToolResult.error(
        f"Invalid arguments: expected a JSON object, got {type(args).__name__}",
        {"error_type": "InvalidArguments"},
        retryable=False,
    )
