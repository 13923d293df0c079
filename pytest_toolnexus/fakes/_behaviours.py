"""How a fake decides its next reply: a script, a function, a schema walk, or mischief."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from toolnexus_ref.wire import Request, ToolCallPart, ToolDecl, Turn, Usage

from ._generate import generate_arguments
from ._replies import Reply, describe

__all__ = [
    "ADVERSARIAL_KINDS",
    "POSSIBLE_KINDS",
    "Adversarial",
    "Behaviour",
    "FunctionBehaviour",
    "SchemaDriven",
    "Script",
    "Verdict",
    "looks_like_error",
]

#: Words a tool result uses to say it failed, for the wires without an error flag
#: (OpenAI's ``tool`` message, the Responses API's ``function_call_output``).
_ERROR_WORDS = re.compile(
    r"\b(error|errors|invalid|unknown|not valid|not a|not allowed|not found|failed|refused|"
    r"exception|must be|expected|missing|required|cannot|unable)\b",
    re.IGNORECASE,
)


def looks_like_error(output: str) -> bool:
    """Whether a result without an error flag reads as a refusal."""
    return bool(_ERROR_WORDS.search(output))


class Behaviour(Protocol):
    def next(self, request: Request) -> Reply | None:
        """The reply, or ``None`` when the behaviour has nothing left to say."""

    def pending(self) -> list[str]:
        """What was planned and never served, one line each (strict mode reports it)."""


class Script:
    """Replies served in order, one per request."""

    def __init__(self, replies: Iterable[Reply]) -> None:
        self._replies = list(replies)
        self._next = 0

    def extend(self, replies: Iterable[Reply]) -> None:
        self._replies.extend(replies)

    def next(self, request: Request) -> Reply | None:
        if self._next >= len(self._replies):
            return None
        self._next += 1
        return self._replies[self._next - 1]

    def pending(self) -> list[str]:
        return [f"#{i + 1}: {describe(r)}" for i, r in enumerate(self._replies) if i >= self._next]


class FunctionBehaviour:
    """``fn(request) -> reply``; returning ``None`` means "nothing left"."""

    def __init__(self, fn: Callable[[Request], Reply | None]) -> None:
        self._fn = fn

    def next(self, request: Request) -> Reply | None:
        return self._fn(request)

    def pending(self) -> list[str]:
        return []


def _summary(request: Request, calls: int) -> Turn:
    """The final answer of the generated fakes: what came back for each call."""
    lines = []
    for r in request.tool_results[-calls:] if calls else ():
        status = "error" if r.is_error or looks_like_error(r.output) else "ok"
        out = r.output if len(r.output) <= 200 else r.output[:197] + "..."
        lines.append(f"{r.name or r.call_id}: {status}: {out}")
    return Turn("\n".join(lines) or "No tools were called.", (), "stop", Usage(10, 10))


class _Planned:
    """A plan made on the first request (when the offered tools are known), served in
    turns, then a summary of the results."""

    #: what a host should make of each planned call: an error result (adversarial) or not
    expect_errors = False

    def __init__(self) -> None:
        self._turns: list[Turn] | None = None
        self._served = 0
        self._done = False
        self._calls = 0
        #: (kind, call id) for every planned call, in order
        self.planned: list[tuple[str, str]] = []
        self._last: Request | None = None

    def plan(self, tools: Sequence[ToolDecl]) -> list[Turn]:
        raise NotImplementedError

    def verdicts(self) -> list[Verdict]:
        """One verdict per planned call, from the latest request the host sent."""
        results = {r.call_id: r for r in self._last.tool_results} if self._last else {}
        out = []
        for kind, call_id in self.planned:
            result = results.get(call_id)
            if result is None:
                out.append(Verdict(kind, call_id, "no_result", "", self.expect_errors))
            elif result.is_error or looks_like_error(result.output):
                out.append(
                    Verdict(kind, call_id, "error_result", result.output, self.expect_errors)
                )
            else:
                worked: Outcome = "carried_on" if self.expect_errors else "ok"
                out.append(Verdict(kind, call_id, worked, result.output, self.expect_errors))
        return out

    def next(self, request: Request) -> Reply | None:
        self._last = request
        if self._turns is None:
            self._turns = self.plan(request.tools)
            self._calls = sum(len(t.tool_calls) for t in self._turns)
        if self._served < len(self._turns):
            self._served += 1
            return self._turns[self._served - 1]
        if self._done:
            return None
        self._done = True
        return _summary(request, self._calls)

    def pending(self) -> list[str]:
        if self._turns is None:
            return ["(no request came, so no tool was called)"]
        left = [describe(t) for t in self._turns[self._served :]]
        return left + ([] if self._done else ["the final summary"])


class SchemaDriven(_Planned):
    """Calls every offered tool (or ``only`` these) with valid generated arguments.

    ``rounds`` repeats the whole set with fresh arguments; ``calls_per_turn`` splits a
    round into turns of at most that many calls (default: all in one turn).
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        only: Iterable[str] | None = None,
        rounds: int = 1,
        calls_per_turn: int | None = None,
    ) -> None:
        super().__init__()
        if rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {rounds}")
        if calls_per_turn is not None and calls_per_turn < 1:
            raise ValueError(f"calls_per_turn must be >= 1, got {calls_per_turn}")
        self.seed = seed
        self.only = None if only is None else list(only)
        self.rounds = rounds
        self.calls_per_turn = calls_per_turn

    def plan(self, tools: Sequence[ToolDecl]) -> list[Turn]:
        chosen = list(tools)
        if self.only is not None:
            offered = {t.name for t in tools}
            missing = [n for n in self.only if n not in offered]
            if missing:
                raise ValueError(
                    f"schema-driven fake: tools {missing} were not offered; offered: {sorted(offered)}"
                )
            chosen = [t for t in tools if t.name in self.only]
        turns: list[Turn] = []
        for round_ in range(self.rounds):
            values = generate_arguments([t.parameters for t in chosen], self.seed + round_)
            calls = [
                ToolCallPart.of(f"call_r{round_ + 1}_{i + 1}", t.name, v)
                for i, (t, v) in enumerate(zip(chosen, values, strict=True))
            ]
            self.planned += [(c.name, c.id) for c in calls]
            size = self.calls_per_turn or max(1, len(calls))
            for start in range(0, len(calls), size):
                batch = tuple(calls[start : start + size])
                turns.append(Turn(None, batch, "tool_calls", Usage(10, 5 * len(batch))))
        return turns


#: The kinds of malformed call the adversarial fake makes.
ADVERSARIAL_KINDS = (
    "unknown_tool",
    "invalid_json",
    "not_an_object",
    "schema_violation",
    "wrong_type",
    "empty_call",
    "huge_arguments",
    "huge_name",
    "duplicate_id",
)

Outcome = Literal["error_result", "carried_on", "ok", "no_result"]

#: What each wire can carry. Anthropic, Gemini and Ollama send arguments as a JSON
#: object, so text that is not JSON (or not an object) cannot arrive there; no provider
#: sends an empty or 5,000-character name, and every one that has ids makes them
#: unique. The in-process fake carries anything.
POSSIBLE_KINDS: dict[str, tuple[str, ...]] = {
    "openai": (
        "unknown_tool",
        "invalid_json",
        "not_an_object",
        "schema_violation",
        "wrong_type",
        "huge_arguments",
    ),
    "responses": (
        "unknown_tool",
        "invalid_json",
        "not_an_object",
        "schema_violation",
        "wrong_type",
        "huge_arguments",
    ),
    "anthropic": ("unknown_tool", "schema_violation", "wrong_type", "huge_arguments"),
    "gemini": ("unknown_tool", "schema_violation", "wrong_type", "huge_arguments"),
    "ollama": ("unknown_tool", "schema_violation", "wrong_type", "huge_arguments"),
}

_HUGE = 200_000


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the host did with one planned call (a bad one, or a valid generated one)."""

    #: the adversarial kind, or the tool's name for a schema-driven call
    kind: str
    call_id: str
    #: ``error_result``: sent back as an error; ``carried_on``: a bad call sent back as
    #: if it had worked; ``ok``: a valid call that worked; ``no_result``: never answered
    #: (the host crashed, stopped, or dropped the call)
    outcome: Outcome
    output: str = ""
    #: the call was bad, so an error result is the right answer
    expected_error: bool = True

    @property
    def ok(self) -> bool:
        return self.outcome == ("error_result" if self.expected_error else "ok")


_WRONG = {
    "string": 12345,
    "integer": "12",
    "number": "1.5",
    "boolean": "yes",
    "array": {"not": "a list"},
    "object": [1, 2],
}


def _wrong_type_arguments(tool: ToolDecl) -> Any:
    """Valid arguments but one property of the wrong JSON type."""
    args = generate_arguments([tool.parameters], 0)[0]
    if not isinstance(args, dict):
        args = {}
    for name, sub in dict(tool.parameters.get("properties") or {}).items():
        kind = sub.get("type") if isinstance(sub, dict) else None
        if isinstance(kind, str) and kind in _WRONG:
            args[name] = _WRONG[kind]
            return args
    return {"unexpected": {"nested": [1, 2, 3]}}


def _breaking_arguments(tool: ToolDecl) -> Any:
    schema = tool.parameters
    required = list(schema.get("required") or [])
    props = dict(schema.get("properties") or {})
    if required:
        return {}  # drop every required property
    for name, sub in props.items():
        kind = sub.get("type") if isinstance(sub, dict) else None
        return {name: 12345 if kind == "string" else "not-a-" + str(kind or "value")}
    return {"unexpected": {"nested": [1, 2, 3]}}


class Adversarial(_Planned):
    """One turn of malformed calls (``kinds``, default all), then a summary.

    Each call aims at the first offered tool where it needs one, so the only way a
    host passes is by turning every call into an error result for the model.
    """

    expect_errors = True

    def __init__(
        self,
        *,
        kinds: Iterable[str] | None = None,
        per_turn: int | None = None,
        impossible: bool = False,
    ) -> None:
        super().__init__()
        self.impossible = impossible
        self.asked = kinds is not None
        self.kinds = list(ADVERSARIAL_KINDS if kinds is None else kinds)
        unknown = [k for k in self.kinds if k not in ADVERSARIAL_KINDS]
        if unknown:
            raise ValueError(
                f"unknown adversarial kinds {unknown}; choose from {list(ADVERSARIAL_KINDS)}"
            )
        self.per_turn = per_turn
        self.skipped: list[str] = []

    def next(self, request: Request) -> Reply | None:
        if self._turns is None:
            possible = POSSIBLE_KINDS.get(request.provider)
            if possible is not None and not self.impossible:
                self.skipped = [k for k in self.kinds if k not in possible]
                self.kinds = [k for k in self.kinds if k in possible]
        return super().next(request)

    def plan(self, tools: Sequence[ToolDecl]) -> list[Turn]:
        target = tools[0] if tools else ToolDecl("no_tools_offered")
        calls: list[ToolCallPart] = []
        for i, kind in enumerate(self.kinds, start=1):
            cid = f"bad_{i}"
            if kind == "unknown_tool":
                calls.append(ToolCallPart(cid, "definitely_not_a_tool", "{}"))
            elif kind == "invalid_json":
                calls.append(ToolCallPart(cid, target.name, '{"a": 1,'))
            elif kind == "not_an_object":
                calls.append(ToolCallPart(cid, target.name, "[1, 2, 3]"))
            elif kind == "schema_violation":
                calls.append(ToolCallPart.of(cid, target.name, _breaking_arguments(target)))
            elif kind == "wrong_type":
                calls.append(ToolCallPart.of(cid, target.name, _wrong_type_arguments(target)))
            elif kind == "empty_call":
                calls.append(ToolCallPart(cid, "", ""))
            elif kind == "huge_arguments":
                calls.append(ToolCallPart(cid, target.name, json.dumps({"padding": "x" * _HUGE})))
            elif kind == "huge_name":
                calls.append(ToolCallPart(cid, "n" * 5000, "{}"))
            elif kind == "duplicate_id":
                # the same id twice: the first runs (or fails on its own), the second must not
                calls.append(ToolCallPart("dup_1", "definitely_not_a_tool", "{}"))
                calls.append(ToolCallPart("dup_1", "definitely_not_a_tool", "{}"))
                self.planned.append((kind, "dup_1"))
                continue
            self.planned.append((kind, cid))
        size = self.per_turn or max(1, len(calls))
        return [
            Turn(None, tuple(calls[s : s + size]), "tool_calls", Usage(10, 10))
            for s in range(0, len(calls), size)
        ]
