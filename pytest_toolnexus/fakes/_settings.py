"""The request's settings applied to a scripted reply, as a real model is bound by them.

``max_tokens`` cuts a longer text and ends it with the length stop reason; the rest
are promises a real model keeps (``tool_choice``, one call when parallel calls are
off, only offered tools, JSON that matches ``response_format``). A script that breaks
one is a bug in the test, not a model behaviour to simulate: the fake refuses to
serve it and names the rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from toolnexus_ref.wire import Request, Turn, Usage

__all__ = ["Violation", "apply_settings", "estimate_tokens", "estimate_usage"]


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    message: str


def estimate_tokens(text: str) -> int:
    """About four characters a token, at least one for any text."""
    return max(1, -(-len(text) // 4)) if text else 0


def estimate_usage(request: Request, turn: Turn) -> Usage:
    """Usage as a provider would count it: what the request showed, what the reply said."""
    shown = sum(
        len(m.text or "") + sum(len(r.output) for r in m.tool_results) + 4 for m in request.messages
    )
    shown += sum(len(json.dumps(dict(t.parameters))) + len(t.name) for t in request.tools)
    said = len(turn.text or "") + sum(len(c.name) + len(c.arguments) for c in turn.tool_calls)
    said += sum(len(r.text) for r in getattr(turn, "reasoning", ()))  # reasoning is output
    return Usage(max(1, -(-shown // 4)), max(1, -(-said // 4)))


def apply_settings(turn: Turn, request: Request) -> Turn | Violation:
    settings = request.settings
    offered = {t.name for t in request.tools}
    names = [c.name for c in turn.tool_calls]
    choice = settings.tool_choice
    if names and choice == "none":
        return Violation(
            "tool_choice", f"tool_choice is 'none', but the reply calls {', '.join(names)}"
        )
    for name in names:
        if name not in offered:
            shown = ", ".join(sorted(offered)) or "no tools"
            return Violation(
                "tool_not_offered", f"the reply calls {name!r}, but the request offered {shown}"
            )
    if choice == "required" and not names:
        return Violation("tool_choice", "tool_choice requires a tool call, but the reply has none")
    if choice not in (None, "auto", "none", "required"):
        if not names:
            return Violation(
                "tool_choice", f"tool_choice forces {choice!r}, but the reply calls no tool"
            )
        others = [n for n in names if n != choice]
        if others:
            return Violation(
                "tool_choice", f"tool_choice forces {choice!r}, but the reply calls {others}"
            )
    if settings.parallel_tool_calls is False and len(names) > 1:
        return Violation(
            "parallel_tool_calls",
            f"parallel tool calls are off, but the reply makes {len(names)} calls",
        )
    if settings.response_format and turn.text is not None and not names:
        problem = _format_problem(turn.text, request)
        if problem:
            return Violation("response_format", problem)
    limit = settings.max_tokens
    if limit is not None and turn.text and not names and estimate_tokens(turn.text) > limit:
        cut = turn.text[: max(0, limit * 4)]
        return replace(turn, text=cut, finish_reason="length", usage=_usage(turn, limit))
    return turn


def _usage(turn: Turn, output: int) -> Usage:
    return Usage(max(0, turn.usage.input_tokens), output)


def _format_problem(text: str, request: Request) -> str | None:
    settings = request.settings
    try:
        value = json.loads(text)
    except ValueError as exc:
        return f"response_format asks for JSON, but the reply is not JSON ({exc}): {text[:80]!r}"
    if settings.response_format == "json_object" and not isinstance(value, dict):
        return f"response_format asks for a JSON object, got {type(value).__name__}"
    if settings.response_schema is None:
        return None
    import jsonschema

    errors = sorted(
        jsonschema.Draft202012Validator(dict(settings.response_schema)).iter_errors(value),
        key=lambda e: list(e.absolute_path),
    )
    if not errors:
        return None
    where = "/".join(str(p) for p in errors[0].absolute_path) or "(root)"
    return (
        f"the reply does not match the response_format schema at {where}: "
        f"{errors[0].message} ({len(errors)} problem{'s' if len(errors) > 1 else ''})"
    )
