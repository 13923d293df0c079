"""mcp.json parsing: every layout hosts write, every mistake named with its line and key."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from toolnexus_ref.mcp import (
    McpConfigError,
    Secret,
    ServerConfig,
    load_mcp_json,
    parse_mcp_config,
    redact,
)

ENV = {"TOKEN": "s3cr3t-token-value", "REGION": "eu"}


def parse(data: object, environ: dict[str, str] | None = None) -> list[ServerConfig]:
    return parse_mcp_config(
        json.dumps(data, indent=2),
        environ=ENV if environ is None else environ,
        base_dir=Path("/base"),
    )


@pytest.mark.parametrize("container", ["mcpServers", "servers", "mcp"])
def test_each_container_key_is_read(container: str) -> None:
    [server] = parse({container: {"files": {"command": "srv"}}})
    assert (server.name, server.type, server.command) == ("files", "stdio", ("srv",))


def test_vscode_settings_nest_servers_under_mcp() -> None:
    [server] = parse({"mcp": {"servers": {"web": {"url": "http://x/mcp"}}}})
    assert (server.name, server.type, server.url) == ("web", "http", "http://x/mcp")


def test_a_raw_map_skips_the_reserved_sibling_keys() -> None:
    servers = parse(
        {
            "a": {"command": ["srv", "--flag"]},
            "builtins": {"shell": True},
            "agents": {},
            "a2a": {},
            "mcpServer": {"x": 1},
        }
    )
    assert [s.name for s in servers] == ["a"]
    assert servers[0].command == ("srv", "--flag")


def test_command_string_plus_args_and_list_forms() -> None:
    one, two = parse(
        {
            "mcpServers": {
                "one": {"command": "npx", "args": ["-y", "@scope/server"]},
                "two": {"command": ["uvx", "mcp-server-time"], "args": ["--local-timezone", "UTC"]},
            }
        }
    )
    assert one.command == ("npx", "-y", "@scope/server")
    assert two.command == ("uvx", "mcp-server-time", "--local-timezone", "UTC")


def test_fields_defaults_and_inference() -> None:
    stdio, http = parse(
        {
            "servers": {
                "s": {"command": "srv", "environment": {"A": "1"}, "cwd": "sub", "timeout": 5},
                "h": {"url": "https://h/mcp", "headers": {"X-Region": "${REGION}"}},
            }
        }
    )
    assert stdio.env["A"].reveal() == "1"
    assert stdio.cwd == Path("/base/sub")
    assert stdio.timeout == 5.0
    assert http.timeout == 30.0
    assert http.type == "http"
    assert http.headers["X-Region"].reveal() == "eu"
    assert stdio.enabled
    assert http.enabled


@pytest.mark.parametrize(
    ("entry", "enabled"),
    [
        ({"disabled": True}, False),
        ({"disabled": False}, True),
        ({"enabled": False}, False),
        ({"enabled": True}, True),
    ],
)
def test_enabled_and_disabled(entry: dict[str, bool], enabled: bool) -> None:
    [server] = parse({"mcpServers": {"s": {"command": "srv", **entry}}})
    assert server.enabled is enabled


@pytest.mark.parametrize("declared", ["http", "streamable-http", "streamableHttp"])
def test_declared_http_types(declared: str) -> None:
    [server] = parse({"mcpServers": {"s": {"type": declared, "url": "http://h/mcp"}}})
    assert server.type == "http"


def test_timeout_in_milliseconds_as_some_hosts_write_it() -> None:
    [server] = parse({"mcpServers": {"s": {"command": "srv", "timeout": 600000}}})
    assert server.timeout == 600.0


def test_header_variables_expand_and_never_show() -> None:
    [server] = parse(
        {
            "mcpServers": {
                "s": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }
        }
    )
    assert server.headers["Authorization"].reveal() == "Bearer s3cr3t-token-value"
    for shown in (
        repr(server),
        str(server),
        f"{server.headers['Authorization']}",
        repr(server.headers),
    ):
        assert "s3cr3t" not in shown


def test_a_missing_variable_names_the_variable_the_server_and_the_line() -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "api": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
            }
        },
        indent=2,
    )
    with pytest.raises(McpConfigError) as info:
        parse_mcp_config(text, source="cfg.json", environ={})
    message = str(info.value)
    assert "API_TOKEN" in message
    assert "'api'" in message
    assert "headers" in message
    assert message.startswith("cfg.json:5:")


def test_malformed_json_points_at_line_and_column(tmp_path: Path) -> None:
    file = tmp_path / "mcp.json"
    file.write_text('{\n  "mcpServers": {\n    "a": {"command": "x",}\n  }\n}\n')
    with pytest.raises(McpConfigError, match=r"mcp\.json:3:\d+: not valid JSON"):
        load_mcp_json(file)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match="cannot read"):
        load_mcp_json(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"command": 42}, "key 'command': must be a string or a non-empty list"),
        ({"command": []}, "key 'command'"),
        ({"command": "x", "args": "a b"}, "key 'args': must be a list of strings"),
        ({"command": "x", "env": ["A=1"]}, "key 'env': must be an object"),
        ({"command": "x", "timeout": "30"}, "key 'timeout': must be a number"),
        ({"command": "x", "timeout": -1}, "key 'timeout'"),
        ({"command": "x", "disabled": "yes"}, "key 'disabled': must be true or false"),
        ({"type": "sse", "url": "http://h"}, "SSE transport is not supported"),
        ({"type": "carrier-pigeon", "command": "x"}, "unknown transport"),
        ({"url": "http://h", "command": "x"}, "both 'command' and 'url'"),
        ({}, "needs a 'command'"),
        ({"type": "stdio", "url": "http://h"}, "needs a 'command'"),
        ({"url": 7}, "key 'url': must be a string"),
    ],
)
def test_a_bad_key_names_the_server_and_the_key(entry: dict[str, object], needle: str) -> None:
    with pytest.raises(McpConfigError) as info:
        parse({"mcpServers": {"broken": entry}})
    assert "server 'broken'" in str(info.value)
    assert needle in str(info.value)


def test_the_error_line_is_the_offending_key() -> None:
    text = '{\n "mcpServers": {\n  "ok": {"command": "a"},\n  "bad": {\n   "command": "b",\n   "timeout": "soon"\n  }\n }\n}'
    with pytest.raises(McpConfigError, match=r"^<mcp\.json>:6: server 'bad', key 'timeout'"):
        parse_mcp_config(text)


@pytest.mark.parametrize("data", [[1, 2], "servers", None])
def test_the_top_level_must_be_an_object(data: object) -> None:
    with pytest.raises(McpConfigError, match="top level must be a JSON object"):
        parse(data)


def test_parsing_logs_nothing_secret(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    parse({"mcpServers": {"s": {"url": "http://h", "headers": {"X": "${TOKEN}"}}}})
    assert "s3cr3t" not in caplog.text


@given(st.text(min_size=4, max_size=40))
def test_a_secret_never_shows_itself(value: str) -> None:
    secret = Secret(value)
    assert secret.reveal() == value
    shown = [
        repr(secret),
        str(secret),
        f"{secret}",
        f"{secret!r}",
        repr([secret]),
        repr(ServerConfig("s", "http", url="http://h", headers={"H": secret})),
    ]
    assert all("***" in text for text in shown)
    # What the reprs say with any secret at all ("timeout=", "http", ...) is no leak.
    masked = repr(ServerConfig("s", "http", url="http://h", headers={"H": Secret("x")}))
    if value not in masked:
        assert not any(value in text for text in shown)


@given(st.text(min_size=4, max_size=20), st.text(max_size=20), st.text(max_size=20))
def test_redact_removes_every_occurrence(value: str, before: str, after: str) -> None:
    assume("*" not in value)
    text = f"{before}{value}{after}{value}"
    assert value not in redact(text, [Secret(value)])


def test_isolated_a_bad_entry_carries_its_problem_and_the_others_load() -> None:
    text = json.dumps(
        {
            "mcpServers": {
                "ok": {"command": "run-ok", "env": {"T": "${TOKEN}"}},
                "unset": {"command": "run-unset", "env": {"T": "${NOT_SET_ANYWHERE}"}},
                "badkey": {"command": "x", "timeout": -1},
                "off": {"command": "x", "env": {"T": "${NOT_SET_ANYWHERE}"}, "disabled": True},
            }
        },
        indent=2,
    )
    ok, unset, badkey, off = parse_mcp_config(text, source="m.json", environ=ENV, isolate=True)
    assert (ok.problem, ok.command, ok.env["T"].reveal()) == (None, ("run-ok",), ENV["TOKEN"])
    assert unset.name == "unset"
    assert unset.problem is not None
    assert unset.problem.startswith("m.json:11: server 'unset', key 'env': ")
    assert "NOT_SET_ANYWHERE is not set" in unset.problem
    assert badkey.problem is not None
    assert "'timeout'" in badkey.problem
    assert (off.enabled, off.problem is not None) == (False, True)
    with pytest.raises(McpConfigError, match="NOT_SET_ANYWHERE"):
        parse_mcp_config(text, environ=ENV)  # not isolated: the first bad entry raises


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_isolated_a_file_that_is_not_a_server_map_still_raises(text: str) -> None:
    with pytest.raises(McpConfigError):
        parse_mcp_config(text, isolate=True)


@pytest.mark.anyio
async def test_a_bad_entry_fails_its_server_alone_and_a_disabled_one_stays_disabled(
    tmp_path: Path,
) -> None:
    from toolnexus_ref.mcp import open_mcp_json

    config = tmp_path / "mcp.json"
    entries = {
        "unset": {"command": "never-started", "env": {"T": "${NOT_SET_ANYWHERE}"}},
        "off": {"command": "never-started", "args": ["${NOT_SET_ANYWHERE}"], "disabled": True},
    }
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    async with await open_mcp_json(config) as source:
        unset, off = source.statuses["unset"], source.statuses["off"]
    assert (unset.state, unset.phase) == ("failed", "config")
    assert "NOT_SET_ANYWHERE is not set" in unset.reason
    assert (off.state, off.reason) == ("disabled", "disabled in the config")
