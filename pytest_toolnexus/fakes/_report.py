"""What a fake says when a test goes wrong: the problems, and one screen explaining them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._replies import describe

if TYPE_CHECKING:
    from toolnexus_ref.wire import Message, Request

    from ._core import FakeLLM

__all__ = ["CHECKS_HINT", "RELAX_HINT", "failure_report", "problems", "unplanned_message"]

RELAX_HINT = (
    "To allow this, build the fake with strict=False, or mark the test "
    "@pytest.mark.toolnexus_llm(strict=False)."
)
CHECKS_HINT = (
    "The fake refuses what the provider refuses; to turn that off, build it with "
    "provider_checks=False or mark the test @pytest.mark.toolnexus_llm(provider_checks=False)."
)
#: How many earlier requests an unplanned request's error lists.
_MAX_LISTED = 10


def problems(fake: FakeLLM) -> list[str]:
    """One line per problem: script violations first (they fail even when not strict)."""
    out = [
        f"scripted reply for request #{n} breaks the {rule} rule: {message}"
        for n, rule, message in fake.violations
    ]
    out += [
        f"request #{n} was refused as the provider would ({rule}): {cut(message)}"
        for n, rule, message in fake.refusals
    ]
    out += [
        f"bad call {v.call_id} ({v.kind}) came back as if it had worked: {cut(v.output, 80)}"
        for v in fake.verdicts()
        if v.outcome == "carried_on"
    ]
    pending = fake.behaviour.pending()
    if pending:
        out.append(f"{len(pending)} planned repl{'y' if len(pending) == 1 else 'ies'} never served")
    if fake.unexpected:
        out.append(f"{len(fake.unexpected)} request(s) after the plan ran out")
    return out


def failure_report(fake: FakeLLM, found: list[str]) -> str:
    """The problems, what was planned and never served, every request and its reply."""
    lines = [f"FakeLLM: {'; '.join(found)}."]
    pending = fake.behaviour.pending()
    if pending:
        lines.append("Expected but never served:")
        lines += [f"  {p}" for p in pending]
    lines.append(f"Requests received ({len(fake.requests)}):")
    for i, (req, reply) in enumerate(zip(fake.requests, fake.replies, strict=True), 1):
        lines.append(f"  #{i} {req.provider or '?'}: {request_line(req)} -> {describe(reply)}")
    if not fake.requests:
        lines.append("  (none)")
    if fake.refusals:
        lines.append(CHECKS_HINT)
    lines.append(RELAX_HINT)
    return "\n".join(lines)


def unplanned_message(fake: FakeLLM, number: int) -> str:
    """The error body for a request after the plan ran out: the requests so far."""
    lines = [f"FakeLLM: no reply planned for request #{number}. Requests so far:"]
    for i, req in list(enumerate(fake.requests, 1))[-_MAX_LISTED:]:
        got = describe(fake.replies[i - 1]) if i <= len(fake.replies) else "(this request)"
        lines.append(f"  #{i} {req.provider or '?'}: {request_line(req)} -> {got}")
    lines.append(RELAX_HINT)
    return "\n".join(lines)


def request_line(request: Request) -> str:
    last: Message | None = request.messages[-1] if request.messages else None
    if last is None:
        what = "(no messages)"
    elif last.tool_results:
        what = f"{len(last.tool_results)} tool result(s)"
    else:
        text = (last.text or "")[:60]
        what = f"{last.role} {text!r}"
    tools = ", ".join(t.name for t in request.tools) or "none"
    return f"{what} | tools: {tools}"


def cut(value: str, limit: int = 160) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."
