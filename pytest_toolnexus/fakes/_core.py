"""The fake model: serves replies, records every request, and fails loudly when unused."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolnexus_ref.wire import Message, Request, ToolCallPart, ToolDecl, ToolResultPart, Turn

from ._behaviours import Adversarial, Behaviour, FunctionBehaviour, SchemaDriven, Script, Verdict
from ._cassette import Replay
from ._embeddings import DEFAULT_DIMENSIONS, hashed_vector
from ._reasoning import (
    Reasoning,
    ScriptedTurn,
    passback_refusal,
    reasoning_violation,
    signed_calls,
)
from ._record import Recording
from ._refusals import Refusal, refusal_for
from ._replies import (
    AUTO_ID,
    ESTIMATED,
    DelayedReply,
    ErrorReply,
    HangReply,
    Reply,
    TruncatedReply,
    describe,
)
from ._report import unplanned_message
from ._settings import Violation, apply_settings, estimate_usage

if TYPE_CHECKING:
    from toolnexus_ref._context import ToolContext

    from ._respx import FakeRouter
    from ._server import FakeLLMServer

__all__ = ["FakeLLM", "Served"]

_ANY: Any = object()


@dataclass(frozen=True, slots=True)
class Served:
    """What the fake decided for one request: the reply to send, after how long."""

    number: int
    reply: Turn | ErrorReply | TruncatedReply | HangReply
    delay: float = 0.0


class FakeLLM:
    """A model that answers from a script (or a function, a schema walk, or mischief).

    It is the reference loop's ``LLM`` in-process (``await fake.complete(...)``), and
    it serves every wire of the provider table (OpenAI Chat Completions and Responses,
    Anthropic, Gemini, Ollama) over respx routes (``fake.respx()``) or a loopback
    server (``fake.serve()``). Every request, however it came, is parsed into one
    neutral ``Request`` and kept in ``requests``; call ids and response ids count per
    fake, so what a test records does not depend on which tests ran before.

    Strict by default: ``verify()`` fails when a planned reply was never served or a
    request came after the plan ran out (that request gets a 400 error).

    Faithful by default (``provider_checks=True``): a request the provider would refuse
    (a result for an unknown call id, an unanswered call, a bad tool name or schema, ...)
    gets the provider's 400 error body, consumes no scripted reply, and is reported by
    ``verify()``. A scripted reply the request forbids (a call under
    ``tool_choice="none"``, two calls with parallel calls off, text that breaks the
    ``response_format`` schema) is not served: the client gets a 400 naming the rule,
    and ``verify()`` fails whatever ``strict`` says.
    """

    def __init__(
        self,
        script: Iterable[Reply] | Callable[[Request], Reply | None] | Behaviour = (),
        *,
        strict: bool = True,
        provider_checks: bool = True,
        model: str = "fake-model",
        fragment: int = 8,
    ) -> None:
        if _is_behaviour(script):
            self.behaviour: Behaviour = script  # type: ignore[assignment]
        elif callable(script):
            self.behaviour = FunctionBehaviour(script)
        else:
            self.behaviour = Script(script)  # type: ignore[arg-type]
        self.strict = strict
        self.provider_checks = provider_checks
        self.model = model
        self.fragment = fragment
        self.requests: list[Request] = []
        self.replies: list[Reply] = []
        self.unexpected: list[Request] = []
        #: (request number, rule, message) for every request refused as the provider would
        self.refusals: list[tuple[int, str, str]] = []
        #: (request number, rule, message) for every scripted reply the request forbade
        self.violations: list[tuple[int, str, str]] = []
        self._lock = threading.RLock()
        self._calls = 0
        self._conversations: dict[str, tuple[tuple[Message, ...], tuple[ToolDecl, ...]]] = {}
        #: the length of an embedding no request sets a length for
        self.dimensions = DEFAULT_DIMENSIONS
        #: every text an embeddings endpoint was asked to embed, in order
        self.embedded: list[str] = []
        self._vectors: dict[str, list[float]] = {}
        #: call id -> the reasoning served with it, which the agent must send back
        self._signed: dict[str, tuple[Reasoning, ...]] = {}

    def __repr__(self) -> str:
        return f"<FakeLLM {type(self.behaviour).__name__} requests={len(self.requests)} strict={self.strict}>"

    @classmethod
    def schema_driven(
        cls,
        *,
        seed: int = 0,
        only: Iterable[str] | None = None,
        rounds: int = 1,
        calls_per_turn: int | None = None,
        strict: bool = True,
        provider_checks: bool = True,
        model: str = "fake-model",
    ) -> FakeLLM:
        """Call every offered tool with valid generated arguments, then summarise."""
        behaviour = SchemaDriven(seed=seed, only=only, rounds=rounds, calls_per_turn=calls_per_turn)
        return cls(behaviour, strict=strict, provider_checks=provider_checks, model=model)

    @classmethod
    def adversarial(
        cls,
        *,
        kinds: Iterable[str] | None = None,
        per_turn: int | None = None,
        impossible: bool = False,
        strict: bool = True,
        provider_checks: bool = True,
        model: str = "fake-model",
    ) -> FakeLLM:
        """Send malformed calls a host must turn into error results, then judge what it
        did with each (``fake.verdicts()``). Only the shapes the wire can carry are sent
        unless ``impossible=True`` (e.g. arguments that are not an object, over
        Anthropic)."""
        behaviour = Adversarial(kinds=kinds, per_turn=per_turn, impossible=impossible)
        return cls(behaviour, strict=strict, provider_checks=provider_checks, model=model)

    @classmethod
    def replay(
        cls,
        path: str | Path,
        *,
        strict: bool = True,
        provider_checks: bool = True,
        model: str = "fake-model",
    ) -> FakeLLM:
        """Replay a recorded cassette (see ``Recorder``): each reply is served only to a
        conversation of the shape it was recorded for; another shape fails with a diff."""
        from ._cassette import Cassette, Replay

        behaviour = Replay(Cassette.load(path))
        return cls(behaviour, strict=strict, provider_checks=provider_checks, model=model)

    def script(self, *replies: Reply) -> FakeLLM:
        """Append replies to the script (replacing any other behaviour); returns the fake."""
        if isinstance(self.behaviour, Script):
            self.behaviour.extend(replies)
        else:
            self.behaviour = Script(replies)
        return self

    def use(self, behaviour: Behaviour | Callable[[Request], Reply | None]) -> FakeLLM:
        """Replace the behaviour: a ``Behaviour`` or a function of the request."""
        if _is_behaviour(behaviour):
            self.behaviour = behaviour  # type: ignore[assignment]
        elif callable(behaviour):
            self.behaviour = FunctionBehaviour(behaviour)
        else:
            raise TypeError(f"expected a behaviour or a function, got {type(behaviour).__name__}")
        return self

    # -- serving ----------------------------------------------------------------------
    def serve_request(self, request: Request) -> Served:
        """Record ``request`` and decide what to send; safe from any thread.

        The order: the provider's own refusals, then the behaviour's reply, then the
        request's settings applied to it; call ids and usage are filled in last."""
        with self._lock:
            self.requests.append(request)
            number = len(self.requests)
            refusal = refusal_for(request) if self.provider_checks else None
            if refusal is None and self.provider_checks and self._signed:
                dropped = passback_refusal(self._signed, request.provider, request.raw)
                if dropped is not None:
                    refusal = Refusal(dropped[0], dropped[1], dropped[2])
            if refusal is not None:
                reply = ErrorReply(
                    refusal.status, refusal.message, param=refusal.param, rule=refusal.rule
                )
                self.refusals.append((number, refusal.rule, refusal.message))
                self.replies.append(reply)
                return Served(number, reply)
            planned = self.behaviour.next(request)
            if planned is None:
                self.unexpected.append(request)
                if self.strict:
                    planned = ErrorReply(400, unplanned_message(self, number))
                else:
                    planned = Turn("(FakeLLM: nothing left to say)", (), "stop")
            delay = 0.0
            if isinstance(planned, DelayedReply):
                delay = planned.seconds
                planned = planned.reply
            final = self._finish(planned, request, number)
            self.replies.append(final)
            return Served(number, final, delay)

    def reply_for(self, request: Request) -> Reply:
        """The reply ``serve_request`` decides (without its delay)."""
        return self.serve_request(request).reply

    def _finish(
        self, reply: Turn | ErrorReply | TruncatedReply | HangReply, request: Request, number: int
    ) -> Turn | ErrorReply | TruncatedReply | HangReply:
        turn = reply.turn if isinstance(reply, TruncatedReply) else reply
        if not isinstance(turn, Turn):
            return reply
        turn = self._named(turn, request.provider)
        if isinstance(turn, ScriptedTurn):
            why = reasoning_violation(turn, request.provider, request.raw)
            if why is not None:
                found = Violation(*why)
                self.violations.append((number, found.rule, found.message))
                return ErrorReply(
                    400, _violation_message(self.behaviour, number, found), rule=found.rule
                )
            self._signed.update(signed_calls(turn, request.provider))
        if isinstance(self.behaviour, Script | FunctionBehaviour | Replay | Recording):
            shaped = apply_settings(turn, request)
            if isinstance(shaped, Violation):
                self.violations.append((number, shaped.rule, shaped.message))
                return ErrorReply(
                    400, _violation_message(self.behaviour, number, shaped), rule=shaped.rule
                )
            if not isinstance(self.behaviour, Replay | Recording):
                # a recorded reply was shaped by the real model already: judge, never reshape
                turn = shaped
        if turn.usage == ESTIMATED:
            turn = replace(turn, usage=estimate_usage(request, turn))
        return TruncatedReply(turn, reply.keep) if isinstance(reply, TruncatedReply) else turn

    def _named(self, turn: Turn, provider: str) -> Turn:
        """Calls built without an id get ``call_<n>`` (``toolu_fake<n>`` over Anthropic,
        as its ids start), counted per fake."""
        prefix = "toolu_fake" if provider == "anthropic" else "call_"
        if not any(c.id == AUTO_ID for c in turn.tool_calls):
            return turn
        calls = []
        for c in turn.tool_calls:
            if c.id == AUTO_ID:
                self._calls += 1
                c = ToolCallPart(f"{prefix}{self._calls}", c.name, c.arguments)
            calls.append(c)
        return replace(turn, tool_calls=tuple(calls))

    def refuse(
        self,
        request: Request,
        rule: str,
        message: str,
        *,
        param: str | None = None,
        status: int = 400,
    ) -> ErrorReply:
        """Record ``request`` as refused by the provider (no reply consumed)."""
        with self._lock:
            self.requests.append(request)
            reply = ErrorReply(status, message, param=param, rule=rule)
            self.refusals.append((len(self.requests), rule, message))
            self.replies.append(reply)
            return reply

    def observe(self, request: Request, reply: Turn | ErrorReply) -> None:
        """Record an exchange someone else answered (the real API, while recording)."""
        with self._lock:
            self.requests.append(request)
            self.replies.append(reply)

    def conversation(
        self, response_id: str
    ) -> tuple[tuple[Message, ...], tuple[ToolDecl, ...]] | None:
        """The conversation a served reply ended and the tools it offered, for a request
        that continues from it (``previous_response_id``, an Anthropic thread)."""
        with self._lock:
            return self._conversations.get(response_id)

    def remember(
        self, response_id: str, messages: tuple[Message, ...], tools: tuple[ToolDecl, ...] = ()
    ) -> None:
        with self._lock:
            self._conversations[response_id] = (messages, tools)

    def next_id(self) -> int:
        with self._lock:
            return len(self.requests)

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDecl],
        *,
        ctx: ToolContext | None = None,
    ) -> Turn:
        """The in-process ``LLM`` protocol of the reference loop."""
        import asyncio

        from toolnexus_ref.host._errors import ProviderError, error_for

        request = Request(self.model, tuple(messages), tuple(tools), False, "inprocess")
        served = self.serve_request(request)
        if served.delay:
            await asyncio.sleep(served.delay)
        reply = served.reply
        if isinstance(reply, HangReply):
            await asyncio.Event().wait()  # until the caller cancels or times out
        if isinstance(reply, ErrorReply):
            raise error_for(
                reply.status, reply.message, retry_after=reply.retry_after, provider="fake"
            )
        if isinstance(reply, TruncatedReply):
            raise ProviderError(0, "the stream ended early (fake truncated reply)", provider="fake")
        assert isinstance(reply, Turn)
        return reply

    # -- embeddings -------------------------------------------------------------------
    def embedding(self, text: str, vector: Sequence[float]) -> FakeLLM:
        """Script the vector ``text`` gets (else a unit vector seeded by the text)."""
        self._vectors[text] = [float(v) for v in vector]
        return self

    def embed(self, text: str, dimensions: int | None = None) -> list[float]:
        """The vector for ``text``: the scripted one, else a deterministic unit vector of
        ``dimensions`` (default ``fake.dimensions``). Recorded in ``embedded``."""
        with self._lock:
            self.embedded.append(text)
            scripted = self._vectors.get(text)
        if scripted is not None:
            return list(scripted)
        return hashed_vector(text, dimensions or self.dimensions)

    # -- transports -----------------------------------------------------------------
    def respx(self) -> FakeRouter:
        """A context manager routing the providers' hosts to this fake, for httpx and
        httpx2 clients (the ``openai`` and ``anthropic`` SDKs use httpx2). Yields the router."""
        from ._respx import respx_mock

        return respx_mock(self)

    def mount_respx(self, router: Any) -> Any:
        """Add routes for the providers' hosts to an existing respx router."""
        from ._respx import mount_respx

        return mount_respx(self, router)

    def serve(self) -> FakeLLMServer:
        """A loopback HTTP server serving this fake; use as a context manager."""
        from ._server import FakeLLMServer

        return FakeLLMServer(self)

    # -- what the model was shown -------------------------------------------------------
    @property
    def last_request(self) -> Request:
        if not self.requests:
            raise AssertionError("FakeLLM received no request")
        return self.requests[-1]

    @property
    def issued_calls(self) -> list[ToolCallPart]:
        """Every tool call the fake asked for, in order."""
        return [c for r in self.replies if isinstance(r, Turn) for c in r.tool_calls]

    def tool_results(self, name: str | None = None) -> list[ToolResultPart]:
        """The results sent back (latest request's view of the conversation)."""
        if not self.requests:
            return []
        results = self.last_request.tool_results
        names = {c.id: c.name for c in self.issued_calls}
        return [r for r in results if name is None or (r.name or names.get(r.call_id)) == name]

    def assert_tool_called(self, name: str, args: Any = _ANY) -> ToolCallPart:
        """The fake asked for ``name`` (with exactly ``args``, if given) and a result came back."""
        calls = [c for c in self.issued_calls if c.name == name]
        if args is not _ANY:
            calls = [c for c in calls if _arguments(c) == args]
        if not calls:
            made = (
                "\n".join(f"  {c.name}({c.arguments[:120]})" for c in self.issued_calls)
                or "  (none)"
            )
            wanted = name if args is _ANY else f"{name}({json.dumps(args)})"
            raise AssertionError(f"FakeLLM never called {wanted}. Calls made:\n{made}")
        results = [r for request in self.requests for r in request.tool_results]
        answered = {r.call_id for r in results if r.call_id}
        # Gemini results may come back without the call's id (the SDK's
        # Part.from_function_response sets none): then the name is all there is.
        answered_by_name = {r.name for r in results if not r.call_id and r.name}
        answered_by_name |= _answered_in_order(self.requests)
        for c in calls:
            if c.id in answered or c.name in answered_by_name:
                return c
        raise AssertionError(f"FakeLLM called {name!r} but no result for it was sent back")

    def assert_tools_offered(self, *names: str) -> None:
        offered = [t.name for t in self.last_request.tools]
        missing = [n for n in names if n not in offered]
        if missing:
            raise AssertionError(f"tools {missing} were not offered; offered: {offered}")

    def verdicts(self) -> list[Verdict]:
        """For the generated fakes: what the host did with each planned call (an
        adversarial call should come back as an error, a schema-driven one should work)."""
        if isinstance(self.behaviour, Adversarial | SchemaDriven):
            return self.behaviour.verdicts()
        return []

    # -- strictness -------------------------------------------------------------------
    def problems(self) -> list[str]:
        """Everything ``verify()`` would report, one line each."""
        from ._report import problems

        return problems(self)

    def verify(self) -> None:
        """Raise ``AssertionError`` listing what was expected and what came.

        A reply the request forbade fails always; refused requests, unused replies and
        requests past the plan fail in strict mode."""
        __tracebackhide__ = True
        from ._report import failure_report

        found = self.problems()
        if not self.strict:
            found = found[: len(self.violations)]
        if found:
            raise AssertionError(failure_report(self, found))

    # -- snapshots --------------------------------------------------------------------
    def to_data(self) -> dict[str, Any]:
        """Every request and what was served, as plain data in a stable order: no
        process-wide counters, so a snapshot of it is the same under any test order."""
        return {
            "requests": [
                {**r.to_data(), "reply": describe(reply)}
                for r, reply in zip(self.requests, self.replies, strict=True)
            ],
        }


def _violation_message(behaviour: Behaviour, number: int, violation: Violation) -> str:
    if not isinstance(behaviour, Replay | Recording):
        return (
            f"FakeLLM: scripted reply for request #{number} breaks the request's "
            f"{violation.rule} rule: {violation.message}. A real model cannot answer so; "
            "fix the script."
        )
    vanished = ""
    if violation.rule == "tool_not_offered":
        vanished = f" Tool {violation.message.split(chr(39))[1]!r} vanished from the agent."
    return (
        f"FakeLLM replay: the cassette's reply to request #{number} breaks the request's "
        f"{violation.rule} rule: {violation.message}.{vanished} The agent changed since "
        "the recording; re-record the cassette (pytest --toolnexus-record=all) or edit it."
    )


def _is_behaviour(value: object) -> bool:
    """A behaviour object (``next`` and ``pending``), as opposed to a plain function."""
    return callable(getattr(value, "next", None)) and callable(getattr(value, "pending", None))


def _arguments(call: ToolCallPart) -> Any:
    try:
        return call.parsed_arguments()
    except ValueError:
        return call.arguments


def _answered_in_order(requests: Sequence[Request]) -> set[str]:
    """Names of calls answered by a result with neither id nor name, which answers the
    call at its position in the assistant message before it (Ollama's tool messages
    carry no id, and clients such as litellm's ``ollama_chat/`` send no name)."""
    names: set[str] = set()
    for request in requests:
        calls: tuple[ToolCallPart, ...] = ()
        position = 0
        for message in request.messages:
            if message.tool_calls:
                calls, position = message.tool_calls, 0
            for result in message.tool_results:
                if not result.call_id and not result.name and position < len(calls):
                    names.add(calls[position].name)
                position += 1
    return names
