"""The fake model: serves replies, records every request, and fails loudly when unused."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolnexus_ref.wire import Message, Request, ToolCallPart, ToolDecl, ToolResultPart, Turn

from ._behaviours import Adversarial, Behaviour, FunctionBehaviour, SchemaDriven, Script
from ._replies import ErrorReply, Reply, TruncatedReply, describe

if TYPE_CHECKING:
    from toolnexus_ref._context import ToolContext

__all__ = ["FakeLLM"]

_ANY: Any = object()
RELAX_HINT = (
    "To allow this, build the fake with strict=False, or mark the test "
    "@pytest.mark.toolnexus_llm(strict=False)."
)


class FakeLLM:
    """A model that answers from a script (or a function, a schema walk, or mischief).

    It is the reference loop's ``LLM`` in-process (``await fake.complete(...)``), and
    it serves the OpenAI, Anthropic and Gemini wire formats over respx routes
    (``fake.respx()``) or a loopback server (``fake.serve()``). Every request, however
    it came, is parsed into one neutral ``Request`` and kept in ``requests``.

    Strict by default: ``verify()`` fails when a planned reply was never served or a
    request came after the plan ran out (that request gets a 400 error).
    """

    def __init__(
        self,
        script: Iterable[Reply] | Callable[[Request], Reply | None] | Behaviour = (),
        *,
        strict: bool = True,
        model: str = "fake-model",
        fragment: int = 8,
    ) -> None:
        if isinstance(script, Script | FunctionBehaviour | SchemaDriven | Adversarial):
            self.behaviour: Behaviour = script
        elif callable(script):
            self.behaviour = FunctionBehaviour(script)
        else:
            self.behaviour = Script(script)  # type: ignore[arg-type]
        self.strict = strict
        self.model = model
        self.fragment = fragment
        self.requests: list[Request] = []
        self.replies: list[Reply] = []
        self.unexpected: list[Request] = []
        self._lock = threading.Lock()
        self._counter = 0

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
        model: str = "fake-model",
    ) -> FakeLLM:
        """Call every offered tool with valid generated arguments, then summarise."""
        behaviour = SchemaDriven(seed=seed, only=only, rounds=rounds, calls_per_turn=calls_per_turn)
        return cls(behaviour, strict=strict, model=model)

    @classmethod
    def adversarial(
        cls,
        *,
        kinds: Iterable[str] | None = None,
        per_turn: int | None = None,
        strict: bool = True,
        model: str = "fake-model",
    ) -> FakeLLM:
        """Send malformed calls a host must turn into error results, then summarise."""
        return cls(Adversarial(kinds=kinds, per_turn=per_turn), strict=strict, model=model)

    def script(self, *replies: Reply) -> FakeLLM:
        """Append replies to the script (replacing any other behaviour); returns the fake."""
        if isinstance(self.behaviour, Script):
            self.behaviour.extend(replies)
        else:
            self.behaviour = Script(replies)
        return self

    def use(self, behaviour: Behaviour | Callable[[Request], Reply | None]) -> FakeLLM:
        """Replace the behaviour: a ``Behaviour`` or a function of the request."""
        if isinstance(behaviour, Script | FunctionBehaviour | SchemaDriven | Adversarial):
            self.behaviour = behaviour
        elif callable(behaviour):
            self.behaviour = FunctionBehaviour(behaviour)
        else:
            raise TypeError(f"expected a behaviour or a function, got {type(behaviour).__name__}")
        return self

    # -- serving ----------------------------------------------------------------------
    def reply_for(self, request: Request) -> Reply:
        """Record ``request`` and decide the reply; safe from any thread."""
        with self._lock:
            self.requests.append(request)
            self._counter += 1
            reply = self.behaviour.next(request)
            if reply is None:
                self.unexpected.append(request)
                if self.strict:
                    reply = ErrorReply(
                        400,
                        f"FakeLLM: no reply planned for request #{len(self.requests)}. {RELAX_HINT}",
                    )
                else:
                    reply = Turn("(FakeLLM: nothing left to say)", (), "stop")
            self.replies.append(reply)
            return reply

    def next_id(self) -> int:
        with self._lock:
            return self._counter

    async def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolDecl],
        *,
        ctx: ToolContext | None = None,
    ) -> Turn:
        """The in-process ``LLM`` protocol of the reference loop."""
        from toolnexus_ref.host._errors import ProviderError, error_for

        request = Request(self.model, tuple(messages), tuple(tools), False, "inprocess")
        reply = self.reply_for(request)
        if isinstance(reply, ErrorReply):
            raise error_for(
                reply.status, reply.message, retry_after=reply.retry_after, provider="fake"
            )
        if isinstance(reply, TruncatedReply):
            raise ProviderError(0, "the stream ended early (fake truncated reply)", provider="fake")
        return reply

    # -- transports -----------------------------------------------------------------
    def respx(self) -> Any:
        """A context manager routing the three providers' hosts to this fake, for httpx and
        httpx2 clients (the ``openai`` and ``anthropic`` SDKs use httpx2). Yields the router."""
        from ._respx import respx_mock

        return respx_mock(self)

    def mount_respx(self, router: Any) -> Any:
        """Add routes for the three providers' hosts to an existing respx router."""
        from ._respx import mount_respx

        return mount_respx(self, router)

    def serve(self) -> Any:
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
        results = self.requests[-1].tool_results
        answered = {r.call_id for r in results if r.call_id}
        # Gemini results may come back without the call's id (the SDK's
        # Part.from_function_response sets none): then the name is all there is.
        answered_by_name = {r.name for r in results if not r.call_id and r.name}
        for c in calls:
            if c.id in answered or c.name in answered_by_name:
                return c
        raise AssertionError(f"FakeLLM called {name!r} but no result for it was sent back")

    def assert_tools_offered(self, *names: str) -> None:
        offered = [t.name for t in self.last_request.tools]
        missing = [n for n in names if n not in offered]
        if missing:
            raise AssertionError(f"tools {missing} were not offered; offered: {offered}")

    # -- strictness -------------------------------------------------------------------
    def problems(self) -> list[str]:
        out = []
        pending = self.behaviour.pending()
        if pending:
            out.append(
                f"{len(pending)} planned repl{'y' if len(pending) == 1 else 'ies'} never served"
            )
        if self.unexpected:
            out.append(f"{len(self.unexpected)} request(s) after the plan ran out")
        return out

    def verify(self) -> None:
        """Raise ``AssertionError`` listing what was expected and what came (strict only)."""
        problems = self.problems()
        if not self.strict or not problems:
            return
        lines = [f"FakeLLM: {'; '.join(problems)}."]
        pending = self.behaviour.pending()
        if pending:
            lines.append("Expected but never served:")
            lines += [f"  {p}" for p in pending]
        lines.append(f"Requests received ({len(self.requests)}):")
        for i, (req, reply) in enumerate(zip(self.requests, self.replies, strict=True), 1):
            lines.append(f"  #{i} {req.provider or '?'}: {_request_line(req)} -> {describe(reply)}")
        if not self.requests:
            lines.append("  (none)")
        lines.append(RELAX_HINT)
        raise AssertionError("\n".join(lines))


def _arguments(call: ToolCallPart) -> Any:
    try:
        return call.parsed_arguments()
    except ValueError:
        return call.arguments


def _request_line(request: Request) -> str:
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


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
