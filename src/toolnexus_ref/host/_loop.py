"""The reference host loop: ask the model, run the calls it wants, feed results back.

Whatever the model sends, a malformed call ends as an error result the model reads,
never as an exception in the host: unknown names, arguments that are not JSON or not
an object, arguments that break the schema, empty or duplicate call ids.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolnexus_ref._calling import call_tool, cancelled_result
from toolnexus_ref._context import ToolContext
from toolnexus_ref._result import ToolResult
from toolnexus_ref._validation import argument_errors, validator_for
from toolnexus_ref.wire import Message, ToolCallPart, ToolDecl, ToolResultPart, Turn

from ._clients import LLM
from ._errors import ProviderError
from ._transcript import CallRecord, Transcript

__all__ = ["HostLoop", "run_loop"]

_MAX_LISTED = 20


def _tools_of(toolkit: Any) -> list[Any]:
    tools = getattr(toolkit, "tools", toolkit)
    return list(tools() if callable(tools) else tools)


class HostLoop:
    """The loop's configuration and its tool table; ``run`` does one conversation.

    ``retries`` bounds how many times one model request is retried after a retryable
    ``ProviderError`` (429, 5xx, a cut stream); the wait is the server's
    ``Retry-After`` when given, else exponential backoff from ``backoff`` with jitter,
    capped at ``max_backoff``.
    """

    def __init__(
        self,
        llm: LLM,
        toolkit: Any,
        *,
        max_turns: int = 10,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        seed: int | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self.llm = llm
        self.toolkit = toolkit
        self.max_turns = max_turns
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._random = random.Random(seed)
        self.tools = {t.name: t for t in _tools_of(toolkit)}
        self.declarations = tuple(
            ToolDecl(t.name, t.description, dict(t.input_schema)) for t in self.tools.values()
        )
        self._validators: dict[str, Any] = {}

    async def run(
        self, messages: Iterable[Message] | str, *, ctx: ToolContext | None = None
    ) -> Transcript:
        history = [Message("user", messages)] if isinstance(messages, str) else list(messages)
        transcript = Transcript(messages=history)
        for number in range(1, self.max_turns + 1):
            if ctx is not None and ctx.is_cancelled():
                transcript.stop_reason = "cancelled"
                return transcript
            turn = await self._ask(history, ctx, transcript)
            if turn is None:
                transcript.stop_reason = "cancelled"
                return transcript
            transcript.turns.append(turn)
            if not turn.tool_calls:
                history.append(turn.as_message())
                transcript.stop_reason = "final"
                return transcript
            calls = self._unique_ids(turn.tool_calls, number)
            history.append(Message("assistant", turn.text, tuple(sent for _, sent in calls)))
            results = await asyncio.gather(*(self._execute(c, s, calls, ctx) for c, s in calls))
            parts = []
            for (call, sent), result in zip(calls, results, strict=True):
                transcript.calls.append(CallRecord(number, call, result, sent.id))
                parts.append(ToolResultPart(sent.id, result.output, result.is_error, call.name))
            history.append(Message("tool", tool_results=tuple(parts)))
        transcript.stop_reason = "max_turns"
        return transcript

    # -- the model ------------------------------------------------------------------
    async def _ask(
        self, history: list[Message], ctx: ToolContext | None, transcript: Transcript
    ) -> Turn | None:
        attempt = 0
        while True:
            try:
                return await self._race(self.llm.complete(history, self.declarations, ctx=ctx), ctx)
            except ProviderError as exc:
                if not exc.retryable or attempt >= self.retries:
                    raise
                delay = exc.retry_after
                if delay is None:
                    delay = self.backoff * (2**attempt) * (0.5 + self._random.random() / 2)
                attempt += 1
                transcript.retries += 1
                if not await self._sleep(min(delay, self.max_backoff), ctx):
                    return None

    @staticmethod
    async def _race(work: Any, ctx: ToolContext | None) -> Turn | None:
        task = asyncio.ensure_future(work)
        if ctx is None:
            result: Turn = await task
            return result
        watcher = asyncio.ensure_future(ctx.wait_cancelled())
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            watcher.cancel()
        if task.done():
            done: Turn = task.result()
            return done
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
        return None

    @staticmethod
    async def _sleep(seconds: float, ctx: ToolContext | None) -> bool:
        """Wait, but wake when the context ends; ``False`` if it did."""
        if ctx is None:
            await asyncio.sleep(seconds)
            return True
        try:
            await asyncio.wait_for(ctx.wait_cancelled(), seconds)
        except TimeoutError:
            return True
        return not ctx.is_cancelled()

    # -- the tools ------------------------------------------------------------------
    @staticmethod
    def _unique_ids(
        calls: Sequence[ToolCallPart], turn: int
    ) -> list[tuple[ToolCallPart, ToolCallPart]]:
        """Pairs of (as asked, as sent back): every call gets an id no other call has."""
        seen: set[str] = set()
        out = []
        for index, call in enumerate(calls):
            sent_id = call.id
            if not sent_id or sent_id in seen:
                sent_id = f"{call.id or 'call'}_t{turn}_{index}"
            seen.add(sent_id)
            out.append((call, ToolCallPart(sent_id, call.name, call.arguments)))
        return out

    async def _execute(
        self,
        call: ToolCallPart,
        sent: ToolCallPart,
        turn_calls: list[tuple[ToolCallPart, ToolCallPart]],
        ctx: ToolContext | None,
    ) -> ToolResult:
        if call.id and sent.id != call.id:
            return _refused(
                "DuplicateCallId",
                f"Call id {call.id!r} was used by an earlier call in this turn; "
                "this call was not run. Give every call its own id.",
            )
        tool = self.tools.get(call.name)
        if tool is None:
            names = sorted(self.tools)
            listed = ", ".join(names[:_MAX_LISTED]) + (" ..." if len(names) > _MAX_LISTED else "")
            shown = call.name if len(call.name) <= 80 else call.name[:80] + "..."
            return _refused(
                "UnknownTool", f"Unknown tool {shown!r}. Available tools: {listed or '(none)'}"
            )
        try:
            args = call.parsed_arguments()
        except ValueError as exc:
            return _refused(
                "InvalidJSON",
                f"Arguments for {call.name!r} are not valid JSON ({exc}); send a JSON object.",
            )
        if not isinstance(args, Mapping):
            return _refused(
                "InvalidArguments",
                f"Arguments for {call.name!r} must be a JSON object, got {type(args).__name__}.",
            )
        problems = argument_errors(self._validator(call.name, tool), args)
        if problems:
            listed = "\n".join(f"- {p}" for p in problems)
            return _refused("InvalidArguments", f"Invalid arguments for {call.name!r}:\n{listed}")
        if ctx is not None and ctx.is_cancelled():
            return cancelled_result(ctx)
        child = ctx.child() if ctx is not None else None
        execute = getattr(self.toolkit, "execute", None)
        if execute is not None and asyncio.iscoroutinefunction(execute):
            try:
                result = await execute(call.name, dict(args), child)
            except Exception as exc:  # a toolkit that breaks its contract
                return _refused(type(exc).__name__, f"{type(exc).__name__}: {exc}")
            if isinstance(result, ToolResult):
                return result
        return await call_tool(tool, dict(args), child)

    def _validator(self, name: str, tool: Any) -> Any:
        if name not in self._validators:
            self._validators[name] = validator_for(dict(tool.input_schema))
        return self._validators[name]


def _refused(kind: str, message: str) -> ToolResult:
    return ToolResult.error(message, {"error_type": kind}, retryable=False)


async def run_loop(
    llm: LLM,
    toolkit: Any,
    messages: Iterable[Message] | str,
    *,
    max_turns: int = 10,
    ctx: ToolContext | None = None,
    retries: int = 3,
    backoff: float = 0.5,
) -> Transcript:
    """Run one conversation to a final answer, the turn limit, or cancellation.

    ``toolkit`` is a ``Toolkit`` or any sequence of tools. Raises only
    ``ProviderError`` (after the retries) or ``ProviderRequestError`` (a 4xx).
    """
    loop = HostLoop(llm, toolkit, max_turns=max_turns, retries=retries, backoff=backoff)
    return await loop.run(messages, ctx=ctx)


def transcript_json(transcript: Transcript) -> str:
    return json.dumps(transcript.to_data(), indent=2, sort_keys=True)
