"""One skill of a remote agent (or the agent itself, when its card lists no skills) as a Tool.

A call is one conversation: the message goes out, the task is followed (through
the stream when the agent streams, by ``get_task`` when it answers before it is
done) until it reaches a final or an interrupted state, within the call's
deadline. A cancel or a deadline sends ``cancel_task`` for the agent's task, and
the result says what the agent did with it. Nothing raises out of ``execute``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from .._calling import awaits_only, cancelled_result, exception_result
from .._context import ToolContext
from .._naming import Source, sanitize
from .._result import ToolResult
from .._tls import tls_context
from .._tool import ToolAnnotations
from .._validation import argument_errors, validator_for
from ._reply import FINAL, Conversation, state_name

if TYPE_CHECKING:
    from ._card import CardReading

__all__ = [
    "CANCEL_GRACE",
    "READ_ONLY_TAGS",
    "A2ATool",
    "build_request",
    "exposed_name",
    "open_client",
]

#: Skill tags that mark a skill as only reading (A2A cards have no behaviour hints).
READ_ONLY_TAGS = frozenset({"read-only", "readonly", "read_only"})
#: Seconds a cancelled call waits for the agent to answer ``cancel_task``: the caller is
#: waiting for the result, so an agent slow to answer gets a bounded wait, not a hang.
CANCEL_GRACE = 2.0
#: Seconds between ``get_task`` reads of a task the agent answered before finishing.
POLL_EVERY = 0.2
JSON_MODES = frozenset({"application/json", "application/*", "*/*"})


def exposed_name(agent: str, skill: str | None) -> str:
    """``sanitize(agent) + "_" + sanitize(skill)``; the agent alone when it has no skills.

    The agent's name comes first for the reason MCP's server prefix does: skill ids
    are only unique within one card, and a toolkit that holds two agents must not
    hold two tools named ``search``.
    """
    head = sanitize(agent or "agent")
    return head if skill is None else f"{head}_{sanitize(skill)}"


def _schema(accepts_data: bool, examples: list[str]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "string",
        "description": "What to ask the agent, in plain language.",
    }
    if examples:
        message["examples"] = examples[:5]
    properties: dict[str, Any] = {"message": message}
    if accepts_data:
        properties["data"] = {
            "type": "object",
            "description": "Structured input, sent to the agent as a JSON data part.",
        }
    return {
        "type": "object",
        "properties": properties,
        "required": ["message"],
        "additionalProperties": False,
    }


def _hints(tags: list[str], title: str | None) -> ToolAnnotations:
    """Read-only only when the card says so (a skill tag); otherwise a remote agent that
    may act anywhere: MCP's defaults for a tool that says nothing (open-world)."""
    if READ_ONLY_TAGS & {t.lower() for t in tags}:
        return ToolAnnotations(read_only=True, destructive=False, title=title)
    return ToolAnnotations(read_only=False, open_world=True, title=title)


@contextlib.asynccontextmanager
async def open_client(
    reading: CardReading,
    *,
    transport: Any = None,
    headers: Mapping[str, str] | None = None,
    streaming: bool = True,
    polling: bool = False,
) -> AsyncIterator[Any]:
    """A fresh SDK client for the agent of ``reading``: fresh per call, so no tool is bound
    to an event loop, and nothing stays open between calls."""
    import httpx
    from a2a.client import ClientConfig, ClientFactory

    async with httpx.AsyncClient(
        transport=transport,
        headers=dict(headers or {}),
        timeout=httpx.Timeout(None),
        verify=tls_context(),
    ) as http:
        config = ClientConfig(httpx_client=http, streaming=streaming, polling=polling)
        client = ClientFactory(config).create(reading.card)
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                await client.close()


def build_request(args: Mapping[str, Any], skill_id: str | None, answer: Any = None) -> Any:
    """A ``SendMessageRequest``: ``message`` as a text part, ``data`` as a JSON data part.

    The skill travels in ``metadata["skill"]`` (agents may route on it or ignore
    it). ``answer``, a suspended call's ``pending`` mapping, continues that task.
    """
    import uuid

    from a2a.types import Message, Part, Role, SendMessageRequest
    from google.protobuf.json_format import ParseDict
    from google.protobuf.struct_pb2 import Value

    parts = [Part(text=str(args.get("message", "")))]
    data = args.get("data")
    if isinstance(data, Mapping):
        parts.append(Part(data=ParseDict(dict(data), Value()), media_type="application/json"))
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=parts)
    if skill_id is not None:
        message.metadata.update({"skill": skill_id})
    if isinstance(answer, Mapping) and isinstance(answer.get("a2a_task_id"), str):
        message.task_id = answer["a2a_task_id"]
        if isinstance(answer.get("a2a_context_id"), str):
            message.context_id = answer["a2a_context_id"]
    return SendMessageRequest(message=message)


class A2ATool:
    """A remote agent's skill the model can call (source ``a2a``).

    ``transport`` (an ``httpx`` transport) is for tests and custom networking;
    ``headers`` are sent with every request (an agent's API key, say).
    """

    source: str = Source.A2A.value

    def __init__(
        self,
        reading: CardReading,
        skill: Any = None,
        *,
        timeout: float | None = 120.0,
        transport: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        card = reading.card
        self.reading = reading
        self.agent_name: str = card.name
        self.skill_id: str | None = skill.id if skill is not None else None
        self.name = exposed_name(card.name, self.skill_id)
        declared = skill.description if skill is not None else ""
        self.description: str = declared or card.description
        modes = list(skill.input_modes) if skill is not None and skill.input_modes else []
        modes = modes or list(card.default_input_modes)
        examples = list(skill.examples) if skill is not None else []
        self.input_schema: Mapping[str, Any] = _schema(bool(JSON_MODES & set(modes)), examples)
        tags = list(skill.tags) if skill is not None else []
        self.annotations = _hints(tags, skill.name if skill is not None else card.name)
        #: One wall-clock budget per call in seconds, or ``None`` (the context's deadline rules).
        self.timeout = timeout
        self._transport = transport
        self._headers = dict(headers or {})
        self._validator = validator_for(self.input_schema)

    def __repr__(self) -> str:
        return f"<A2ATool {self.name!r} agent={self.agent_name!r} skill={self.skill_id!r}>"

    @property
    def _code_on_loop(self) -> bool:
        """Whether a call may run code other than the SDK client's on the event loop."""
        return not awaits_only(self, A2ATool, self._transport, "execute")

    def conformance_extra(self) -> dict[str, Any]:
        """What the A2A checks read beside the declaration."""
        skills = self.reading.raw.get("skills")
        ids = (
            [s.get("id") for s in skills if isinstance(s, Mapping)]
            if isinstance(skills, list)
            else []
        )
        return {
            "a2a_card": self.reading,
            "a2a_skill_id": self.skill_id,
            "a2a_skill_ids": ids,
            "a2a_connect": self.client,
        }

    # -- the client -----------------------------------------------------------------
    def client(self, *, streaming: bool = True, polling: bool = False) -> Any:
        """A fresh SDK client for this agent (an async context manager); see ``open_client``."""
        return open_client(
            self.reading,
            transport=self._transport,
            headers=self._headers,
            streaming=streaming,
            polling=polling,
        )

    def message(self, args: Mapping[str, Any], answer: Any = None) -> Any:
        """The request for ``args``; see ``build_request``."""
        return build_request(args, self.skill_id, answer)

    # -- a call ---------------------------------------------------------------------
    async def execute(self, args: Mapping[str, Any], ctx: ToolContext | None = None) -> ToolResult:
        try:
            return await self._execute(args, ctx)
        except Exception as exc:  # the contract: failures are results
            return exception_result(exc)

    async def _execute(self, args: Mapping[str, Any], ctx: ToolContext | None) -> ToolResult:
        if ctx is not None and ctx.is_cancelled():
            return cancelled_result(ctx)
        errors = argument_errors(self._validator, args)
        if errors:
            listed = "\n".join(f"- {line}" for line in errors)
            return ToolResult.error(
                f"Invalid arguments for {self.name!r}:\n{listed}",
                {"error_type": "InvalidArguments"},
                retryable=False,
            )
        request = self.message(args, ctx.answer if ctx is not None else None)
        remaining = ctx.remaining() if ctx is not None else None
        limits = [t for t in (self.timeout, remaining) if t is not None]
        limit = min(limits) if limits else None
        talk = Conversation()
        async with self.client() as client:
            work = asyncio.ensure_future(_converse(client, request, talk))
            waiting: set[asyncio.Future[Any]] = {work}
            stop = asyncio.ensure_future(ctx.wait_cancelled()) if ctx is not None else None
            if stop is not None:
                waiting.add(stop)
            try:
                done, _ = await asyncio.wait(
                    waiting, timeout=limit, return_when=asyncio.FIRST_COMPLETED
                )
            except asyncio.CancelledError:
                work.cancel()
                _cancel_in_background(self, talk.task_id)
                raise
            finally:
                if stop is not None:
                    stop.cancel()
            if work in done:
                result: ToolResult = work.result()
                return result
            await _named(talk, work)
            work.cancel()
            await asyncio.wait({work}, timeout=CANCEL_GRACE)
            ended = await _cancel_remote(client, talk.task_id)
        meta = {**talk.metadata(), **ended}
        if ctx is not None and ctx.is_cancelled() and not ctx.deadline_exceeded:
            base = cancelled_result(ctx)
            return ToolResult.error(
                f"{base.output}; {ended['a2a_cancel']}", {**base.metadata, **meta}, retryable=False
            )
        shown = limit if limit is not None else 0.0
        return ToolResult.error(
            f"Timed out after {shown:.3g}s waiting for the agent; {ended['a2a_cancel']}",
            {"error_type": "TimeoutError", "timeout": shown, **meta},
            retryable=True,
        )


async def _named(talk: Conversation, work: asyncio.Future[Any]) -> None:
    """A cancel that came before the agent named its task: listen a little longer for the
    name, so the task that is already running can be cancelled too."""
    loop = asyncio.get_running_loop()
    until = loop.time() + CANCEL_GRACE
    while not talk.task_id and not work.done() and loop.time() < until:
        await asyncio.sleep(0.02)


async def _converse(client: Any, request: Any, talk: Conversation) -> ToolResult:
    """Send, follow the task until it settles, and say what came of it; errors are results."""
    from a2a.types import GetTaskRequest

    try:
        stream = client.send_message(request)
        async with contextlib.aclosing(stream):
            async for event in stream:
                talk.absorb(event)
                if talk.settled:
                    break
        while not talk.settled and talk.task_id:
            await asyncio.sleep(POLL_EVERY)
            talk.absorb(await client.get_task(GetTaskRequest(id=talk.task_id)))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return _transport_error(exc, talk)
    return talk.result()


def _transport_error(exc: BaseException, talk: Conversation) -> ToolResult:
    text = str(exc) or type(exc).__name__
    return ToolResult.error(
        f"A2A request failed: {type(exc).__name__}: {text}",
        {**talk.metadata(), "error_type": type(exc).__name__},
        retryable=True,
    )


async def _cancel_remote(client: Any, task_id: str | None) -> dict[str, Any]:
    """Ask the agent to cancel its task, within ``CANCEL_GRACE``; what it answered, in words
    and as a state."""
    from a2a.types import CancelTaskRequest, GetTaskRequest

    if not task_id:
        return {"a2a_cancel": "the agent had not named a task yet, so none was cancelled"}

    async def ask() -> str:
        task = await client.cancel_task(CancelTaskRequest(id=task_id))
        state = state_name(task.status.state)
        if state not in FINAL:  # it may cancel asynchronously: read it once more
            task = await client.get_task(GetTaskRequest(id=task_id))
            state = state_name(task.status.state)
        return state

    try:
        state = await asyncio.wait_for(ask(), CANCEL_GRACE)
    except TimeoutError:
        return {
            "a2a_cancel": f"the agent did not answer cancel_task for its task {task_id}"
            f" within {CANCEL_GRACE:g}s"
        }
    except Exception as exc:
        return {
            "a2a_cancel": f"cancel_task for the agent's task {task_id} failed:"
            f" {type(exc).__name__}: {exc}",
        }
    if state == "canceled":
        said = f"the agent's task {task_id} was cancelled (cancel_task: canceled)"
    else:
        said = f"cancel_task was sent for the agent's task {task_id}; the agent reports it {state}"
    return {"a2a_cancel": said, "a2a_state": state}


def _cancel_in_background(tool: A2ATool, task_id: str | None) -> None:
    """The caller's asyncio task was cancelled: still tell the agent, without holding the caller."""
    if not task_id:
        return

    async def cancel() -> None:
        with contextlib.suppress(Exception):
            async with tool.client() as client:
                await _cancel_remote(client, task_id)

    with contextlib.suppress(RuntimeError):
        _background.add(task := asyncio.get_running_loop().create_task(cancel()))
        task.add_done_callback(_background.discard)


_background: set[asyncio.Task[None]] = set()
