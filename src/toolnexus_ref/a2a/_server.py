"""The mirror: any list of Tools served as an A2A agent, with the SDK's own server components.

Each tool is a skill (id and name = the tool's name); a message names its skill in
``metadata["skill"]`` (the A2A tools of this package do), or goes to the only
skill there is. The arguments are the message's data part, or its text when that
is a JSON object, or ``{"message": text}``. An error result fails the task with
the tool's words; a result that is suspended (``metadata["pending"]``) asks for
input; a cancelled task cancels the tool's context. Used by our tests, and by
anyone testing an agent that calls other agents.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._calling import call_tool
from .._context import ToolContext
from .._tool import annotations_of

if TYPE_CHECKING:
    from a2a.server.request_handlers import RequestHandler
    from a2a.types import AgentCard
    from starlette.applications import Starlette

__all__ = ["LoopbackAgent", "agent_app", "agent_card", "serve_loopback", "tools_agent_app"]

CANCELLED_BY_CLIENT = "cancelled by the A2A client"


def _as_tool_list(tools: Any) -> list[Any]:
    from toolnexus_ref._resolve import as_tools

    return as_tools(tools, label="the tools to serve")


def agent_card(
    tools: Any,
    *,
    url: str,
    name: str = "toolnexus",
    description: str = "Tools served as an A2A agent",
    streaming: bool = True,
) -> AgentCard:
    """A 1.0 card with one skill per tool; a read-only tool's skill is tagged ``read-only``."""
    from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    skills = []
    for tool in _as_tool_list(tools):
        hints = annotations_of(tool)
        tags = ["tool", *(["read-only"] if hints.read_only is True else [])]
        skills.append(
            AgentSkill(
                id=tool.name,
                name=tool.name,
                description=tool.description,
                tags=tags,
                input_modes=["text/plain", "application/json"],
                output_modes=["text/plain"],
            )
        )
    return AgentCard(
        name=name,
        description=description,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def _arguments(message: Any) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    texts = []
    for part in message.parts:
        if part.HasField("data"):
            data = MessageToDict(part.data)
            if isinstance(data, dict):
                return data
        elif part.HasField("text"):
            texts.append(part.text)
    text = "\n".join(texts)
    with contextlib.suppress(ValueError):
        parsed = json.loads(text)
        if isinstance(parsed, dict):
            return parsed
    return {"message": text}


class ToolsExecutor:
    """An ``AgentExecutor`` that runs the tool a message's skill names."""

    def __init__(self, tools: Any, *, timeout: float | None = None) -> None:
        self.tools = {tool.name: tool for tool in _as_tool_list(tools)}
        self.timeout = timeout

    def _tool_for(self, message: Any) -> Any:
        from google.protobuf.json_format import MessageToDict

        skill = (
            MessageToDict(message.metadata).get("skill") if message.HasField("metadata") else None
        )
        if isinstance(skill, str) and skill in self.tools:
            return self.tools[skill]
        if skill is None and len(self.tools) == 1:
            return next(iter(self.tools.values()))
        return None

    async def execute(self, context: Any, event_queue: Any) -> None:
        from a2a.helpers.proto_helpers import new_task, new_text_part
        from a2a.server.tasks import TaskUpdater
        from a2a.types import TaskState

        task = context.current_task
        if task is None:  # an empty text is a message too (the SDK's helper refuses it)
            task = new_task(
                context.task_id,
                context.context_id,
                TaskState.TASK_STATE_SUBMITTED,
                history=[context.message],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        tool = self._tool_for(context.message)
        if tool is None:
            known = ", ".join(sorted(self.tools))
            await updater.reject(
                updater.new_agent_message(
                    [new_text_part(f"no skill named by the message; skills: {known}")]
                )
            )
            return
        await updater.start_work()
        ctx = ToolContext()
        try:
            result = await call_tool(tool, _arguments(context.message), ctx, timeout=self.timeout)
        except asyncio.CancelledError:
            ctx.cancel(CANCELLED_BY_CLIENT)  # a sync tool in its thread hears it too
            raise
        words = updater.new_agent_message([new_text_part(result.output)])
        if result.is_error and "pending" in result.metadata:
            await updater.requires_input(words)
        elif result.is_error:
            await updater.failed(words)
        else:
            await updater.add_artifact([new_text_part(result.output)], name="result")
            await updater.complete()

    async def cancel(self, context: Any, event_queue: Any) -> None:
        from a2a.server.tasks import TaskUpdater

        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def agent_app(
    card: AgentCard,
    executor: Any,
    *,
    handler: Callable[..., RequestHandler] | None = None,
    raw_card: Mapping[str, Any] | None = None,
) -> Starlette:
    """An ASGI app: the card at the well-known path, JSON-RPC at the card's interface path.

    ``handler`` replaces the SDK's ``DefaultRequestHandler`` (same keyword
    arguments); ``raw_card`` serves that JSON as the card instead of ``card``.
    Both exist to build misbehaving agents for tests.
    """
    from urllib.parse import urlsplit

    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    make = handler or DefaultRequestHandler
    request_handler = make(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    path = (
        urlsplit(card.supported_interfaces[0].url).path or "/" if card.supported_interfaces else "/"
    )
    if raw_card is None:
        card_routes = create_agent_card_routes(card)
    else:
        served = dict(raw_card)

        async def show(request: Any) -> JSONResponse:
            return JSONResponse(served)

        card_routes = [Route("/.well-known/agent-card.json", show, methods=["GET"])]
    return Starlette(routes=[*card_routes, *create_jsonrpc_routes(request_handler, path)])


def tools_agent_app(
    tools: Any, *, url: str, name: str = "toolnexus", timeout: float | None = None
) -> Starlette:
    """``tools`` as one agent whose interface is at ``url``."""
    return agent_app(agent_card(tools, url=url, name=name), ToolsExecutor(tools, timeout=timeout))


@dataclass
class LoopbackAgent:
    """A served agent: ``url`` is its base (the card is at ``url + .well-known/agent-card.json``)."""

    url: str
    server: Any
    thread: threading.Thread

    @property
    def target(self) -> str:
        """The conformance target naming this agent."""
        return f"a2a:{self.url}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10.0)


@contextlib.contextmanager
def serve_loopback(
    tools: Any = None,
    *,
    app: Callable[[str], Any] | None = None,
    name: str = "toolnexus",
    host: str = "127.0.0.1",
    timeout: float | None = None,
) -> Iterator[LoopbackAgent]:
    """Serve on a free loopback port in a thread, for as long as the ``with`` lasts.

    Serves ``tools`` (with ``tools_agent_app``), or ``app``: a function from the
    agent's URL to an ASGI app (``agent_app`` for a custom agent).
    """
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(128)
    url = f"http://{host}:{sock.getsockname()[1]}/"
    if (tools is None) == (app is None):
        sock.close()
        raise ValueError("serve_loopback needs tools or app, not both")
    asgi = (
        app(url) if app is not None else tools_agent_app(tools, url=url, name=name, timeout=timeout)
    )
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", lifespan="off"))
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), name="a2a-agent", daemon=True
    )
    thread.start()
    started = time.monotonic()
    while not server.started and thread.is_alive() and time.monotonic() - started < 30:
        time.sleep(0.02)
    agent = LoopbackAgent(url, server, thread)
    if not server.started:
        agent.stop()
        sock.close()
        raise RuntimeError(f"the A2A agent at {url} did not start")
    try:
        yield agent
    finally:
        agent.stop()
        sock.close()
