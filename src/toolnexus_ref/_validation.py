"""Argument validation against a tool's own input schema, with messages that name the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["argument_errors", "format_json_path", "validator_for"]

_MAX_LISTED = 5


def validator_for(schema: Mapping[str, Any]) -> Validator:
    """A jsonschema validator for the schema's declared dialect (Draft 2020-12 by default).

    Formats are checked too (``format_checker``), so that ``"format": "date"`` means
    what a model expects it to mean.
    """
    from jsonschema import Draft202012Validator, validators

    cls = validators.validator_for(schema, default=Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def format_json_path(path: Any) -> str:
    """``["items", 0, "name"]`` as ``items[0].name``; the empty path is ``(root)``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def argument_errors(validator: Validator, args: object) -> list[str]:
    """Every way ``args`` breaks the schema, most relevant first, as ``path: message``."""
    if not isinstance(args, Mapping):
        return [f"(root): arguments must be a JSON object, got {type(args).__name__}"]
    from jsonschema.exceptions import relevance

    errors = sorted(validator.iter_errors(args), key=relevance)
    lines = [f"{format_json_path(e.absolute_path)}: {e.message}" for e in errors[:_MAX_LISTED]]
    if len(errors) > _MAX_LISTED:
        lines.append(f"... and {len(errors) - _MAX_LISTED} more")
    return lines
