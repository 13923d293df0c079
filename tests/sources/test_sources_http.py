"""HTTP tools against a loopback server and respx: requests, errors, secrets, time limits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import _loopback
import httpx
import pytest
import respx
from _kit import KitRun, shown, start_kit
from _loopback import loopback_server
from _sessions import RunningSession, early

from toolnexus_ref import ToolContext
from toolnexus_ref.http import MASK, HttpConfigError, http_tool, load_http_tools

SECRET = "s3cr3t-t0ken-value"


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with loopback_server() as url:
        yield url


@pytest.mark.anyio
async def test_a_get_fills_the_url_and_sends_the_rest_as_query(base: str) -> None:
    inferred = http_tool(name="get_item", description="Get an item.", url=f"{base}/items/{{id}}")
    assert inferred.input_schema["required"] == ["id"]
    assert (inferred.method, inferred.annotations.read_only) == ("GET", True)
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "fields": {"type": "string"}},
    }
    item = http_tool(
        name="get_item", description="Get an item.", url=f"{base}/items/{{id}}", input_schema=schema
    )
    result = await item.execute({"id": "a/b", "fields": "name"})
    assert not result.is_error
    assert json.loads(result.output) == {"id": "a%2Fb", "query": {"fields": "name"}}
    assert result.metadata["status"] == 200


@pytest.mark.anyio
async def test_a_non_2xx_answer_is_an_error_result_with_status_and_body(base: str) -> None:
    down = http_tool(name="down", description="Always down.", url=f"{base}/down")
    result = await down.execute({})
    assert (result.output, result.is_error) == ("HTTP 503: down for maintenance", True)
    assert result.retryable
    missing = await http_tool(name="nope", description="Not there.", url=f"{base}/nope").execute({})
    assert missing.output == "HTTP 404: no such page"
    assert not missing.retryable


@pytest.mark.anyio
async def test_env_headers_are_sent_but_never_shown(
    base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLNEXUS_TEST_TOKEN", SECRET)
    whoami = http_tool(
        name="whoami",
        description="Echo the Authorization header.",
        url=f"{base}/whoami",
        headers={"Authorization": "Bearer ${TOOLNEXUS_TEST_TOKEN}"},
    )
    result = await whoami.execute({})
    assert json.loads(result.output) == {"authorization": f"Bearer {MASK}"}
    assert SECRET not in repr(whoami)
    assert whoami.header_names == ("Authorization",)
    monkeypatch.delenv("TOOLNEXUS_TEST_TOKEN")
    missing = await whoami.execute({})
    assert missing.is_error
    assert missing.output == (
        "header 'Authorization' needs the environment variable TOOLNEXUS_TEST_TOKEN, which is not set"
    )


@pytest.mark.anyio
async def test_deadlines_and_cancels_end_the_call_with_error_results(base: str) -> None:
    seconds = {"type": "object", "properties": {"seconds": {"type": "string"}}}
    slow = http_tool(
        name="slow",
        description="Answers late.",
        url=f"{base}/slow",
        timeout=10,
        input_schema=seconds,
    )
    expired = await slow.execute({"seconds": "5"}, ToolContext(timeout=0.2))
    assert expired.is_error
    assert expired.metadata["error_type"] == "TimeoutError"
    ctx = ToolContext()
    asyncio.get_running_loop().call_later(0.1, ctx.cancel, "stop")
    cancelled = await slow.execute({"seconds": "5"}, ctx)
    assert (cancelled.is_error, cancelled.metadata.get("cancelled")) == (True, True)
    own = http_tool(
        name="slow2", description="Late.", url=f"{base}/slow", timeout=0.2, input_schema=seconds
    )
    assert (await own.execute({"seconds": "5"})).is_error


@pytest.mark.anyio
async def test_calls_share_one_tls_context_not_one_each(
    base: str, tls_contexts_built: list[object]
) -> None:
    """Each call opens a client; building its TLS context (the CA bundle read and parsed)
    cost more CPU than a loopback call, so the context is built once per process."""
    item = http_tool(name="get_item", description="Get an item.", url=f"{base}/items/{{id}}")
    for index in range(3):
        result = await item.execute({"id": str(index)})
        assert not result.is_error, result.output
    assert len(tls_contexts_built) <= 1  # none when an earlier test of this process built it


@pytest.mark.anyio
async def test_bodies_and_methods_through_respx() -> None:
    with respx.mock(assert_all_called=True) as router:
        created = router.post("https://api.example.test/notes").respond(201, json={"id": 7})
        form = router.put("https://api.example.test/notes/7").respond(200, text="saved")
        router.get("https://api.example.test/boom").mock(side_effect=httpx.ConnectError("refused"))
        post = http_tool(
            name="add_note",
            description="Add a note.",
            method="post",
            url="https://api.example.test/notes",
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        )
        assert post.annotations.read_only is False
        assert (await post.execute({"text": "hi"})).output == '{"id":7}'
        assert json.loads(created.calls.last.request.content) == {"text": "hi"}
        put = http_tool(
            name="save",
            description="Save.",
            method="PUT",
            body="form",
            url="https://api.example.test/notes/{id}",
            input_schema={
                "type": "object",
                "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
            },
        )
        assert (await put.execute({"id": "7", "text": "hello there"})).output == "saved"
        assert form.calls.last.request.content == b"text=hello+there"
        boom = await http_tool(
            name="boom", description="Fails.", url="https://api.example.test/boom"
        ).execute({})
        assert boom.is_error
        assert boom.output.startswith("HTTP request failed: ConnectError")


def test_tools_declared_in_json_and_yaml_files(tmp_path: Path) -> None:
    declared = {
        "tools": [{"name": "get_item", "description": "Get.", "url": "http://x/items/{id}"}]
    }
    (tmp_path / "tools.json").write_text(json.dumps(declared), encoding="utf-8")
    (tmp_path / "tools.yaml").write_text(
        "tools:\n  - name: add_note\n    description: Add.\n    method: POST\n    url: http://x/notes\n",
        encoding="utf-8",
    )
    (from_json,) = load_http_tools(tmp_path / "tools.json")
    (from_yaml,) = load_http_tools(tmp_path / "tools.yaml")
    assert (from_json.name, from_json.method) == ("get_item", "GET")
    assert (from_yaml.name, from_yaml.method) == ("add_note", "POST")
    (tmp_path / "bad.json").write_text('{"tools": [{"name": "x", "url": "u", "verb": "GET"}]}')
    with pytest.raises(HttpConfigError, match=r"tool #1: unknown field\(s\) \['verb'\]"):
        load_http_tools(tmp_path / "bad.json")


TOOLS = """
import os

from toolnexus_ref.http import http_tool

BASE = os.environ["TOOLNEXUS_TEST_BASE"]

tools = [
    http_tool(
        name="get_item",
        description="Get an item by its id.",
        url=BASE + "/items/{id}",
        headers={"Authorization": "Bearer ${TOOLNEXUS_TEST_TOKEN}"},
        input_schema={
            "type": "object",
            "properties": {"id": {"type": "string", "description": "The item id"}},
            "required": ["id"],
            "additionalProperties": False,
        },
        timeout=5,
    ),
    http_tool(
        name="whoami",
        description="Echo the Authorization header the tool sent.",
        url=BASE + "/whoami",
        headers={"Authorization": "Bearer ${TOOLNEXUS_TEST_TOKEN}"},
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    ),
    http_tool(
        name="add_note",
        description="Add a note.",
        method="POST",
        url=BASE + "/notes",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    ),
]
"""


#: The session's own loopback server, started as its conftest is imported, before the
#: plugin loads any target, and stopped as the session ends; its URL is given to the
#: tools the way a user's base URL is: in the environment.
LOOPBACK_CONFTEST = """
import contextlib
import os

from _loopback import loopback_server

_serving = contextlib.ExitStack()
os.environ["TOOLNEXUS_TEST_BASE"] = _serving.enter_context(loopback_server())


def pytest_unconfigure(config):
    _serving.close()
"""


@early
def http_tools_kit(folder: Path) -> RunningSession:
    """The kit through the plugin on HTTP tools that reach a loopback server of the
    session's own: started early, as its files and arguments are fixed and it mostly
    waits for the tools' process and the server."""
    (folder / "http_plugin_tools.py").write_text(TOOLS)
    (folder / "_loopback.py").write_text(Path(_loopback.__file__).read_text())
    (folder / "conftest.py").write_text(LOOPBACK_CONFTEST)
    # The tools reach the loopback server and read the base and token from the
    # environment: the sandbox must share the network and pass those two variables.
    return start_kit(
        folder,
        "http_plugin_tools:tools",
        extra=(
            "--toolnexus-examples",
            "5",
            "--toolnexus-allow-network",
            "--toolnexus-env",
            "TOOLNEXUS_TEST_BASE,TOOLNEXUS_TEST_TOKEN",
        ),
        env={"TOOLNEXUS_TEST_TOKEN": SECRET},
    )


def test_through_the_plugin_gets_are_judged_posts_skipped_and_secrets_never_reported(
    http_tools_kit: RunningSession,
) -> None:
    done = http_tools_kit.result()
    run = KitRun.of(done)
    errors = run.failed(severity="error")
    assert not errors, shown(errors)
    assert {"TN501", "TN601", "TN602", "TN603", "TN701", "TN801"} <= set(
        run.live_passed("get_item")
    )
    skipped = [r for r in run.records if r["tool"] == "add_note" and r["check"] == "TN601"]
    assert skipped[0]["outcome"] == "skipped"
    assert "whose method is POST, not GET" in skipped[0]["message"]
    # The echo comes back from the tool's own process masked: no output carries it.
    assert "TN601" in run.live_passed("whoami")
    report = (done.path / "report.json").read_text(encoding="utf-8")
    assert SECRET not in report
    assert SECRET not in run.result.stdout.str()
    assert SECRET not in run.result.stderr.str()
