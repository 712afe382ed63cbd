"""MCP client against real servers: the reference ``mcp-server-time`` (PyPI) started from a workspace's
``.mcp.json``, a small SDK-built server over stdio and over Streamable HTTP on loopback (with a bearer
token), a hand-written server with schemas the providers would reject, and, when npm can install it,
``@modelcontextprotocol/server-everything`` for a long-running tool with progress.

The tools reach the real loop the way the runtime wires them: the source starts in the background,
the tool list is taken once the source is ready (before the first model request) and stays fixed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.agent.agent import Agent
from owltui.agent.cancel import CancelToken
from owltui.agent.events import ToolEnd, ToolUpdate
from owltui.agent.messages import ToolResult
from owltui.agent.pause import PauseGate
from owltui.agent.results import ResultStore
from owltui.agent.tool import ToolContext, tool_spec
from owltui.features.chat import chat_config
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.session.runtime.sources import StaticSource, ToolSource, collect_tools
from owltui.testing.scripted import Call, ScriptedModel, Step
from owltui.tools.mcp.approvals import McpApprovals, approve_project
from owltui.tools.mcp.config import ServerSpec
from owltui.tools.mcp.selection import load_mcp_servers
from owltui.tools.mcp.source import McpSource
from owltui.tools.mcp.wiring import decide, mcp_source, question
from owltui.tools.registry import builtin_tools

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
TEST_SERVER = [sys.executable, str(HERE / "mcp_test_server.py")]
RAW_SERVER = [sys.executable, str(HERE / "mcp_raw_server.py")]
TOKEN = "owl-secret-token"


# ---- the servers -----------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def time_server() -> list[str]:
    """The reference time server, installed into this environment when missing (test extras)."""
    if importlib.util.find_spec("mcp_server_time") is None:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "mcp-server-time"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        importlib.invalidate_caches()
        if done.returncode != 0 or importlib.util.find_spec("mcp_server_time") is None:
            pytest.skip(
                f"mcp-server-time is not installed and pip could not install it: {done.stderr[-300:]}"
            )
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    """The SDK-built test server on Streamable HTTP, 127.0.0.1, bearer token required; its URL."""
    proc = subprocess.Popen(
        [*TEST_SERVER, "http", TOKEN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        line = proc.stdout.readline() if ready else ""  # type: ignore[union-attr]
        assert line.startswith("PORT "), f"the test server did not start: {line!r} {proc.poll()}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.fixture(scope="session")
def everything_server(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``@modelcontextprotocol/server-everything`` installed with npm into a temporary directory."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("node/npm are not installed")
    prefix = tmp_path_factory.mktemp("npm-everything")
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--prefix",
                str(prefix),
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "@modelcontextprotocol/server-everything",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("npm could not install @modelcontextprotocol/server-everything within 300 s")
    entry = prefix / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if done.returncode != 0 or not entry.is_file():
        pytest.skip(f"npm is unreachable or the install failed: {done.stderr.strip()[-300:]}")
    return [node, str(entry), "stdio"]


def stdio(name: str, argv: Sequence[str], **extra: Any) -> dict[str, Any]:
    return {name: {"command": argv[0], "args": list(argv[1:]), **extra}}


def write_mcp_json(ws: Path, servers: dict[str, Any]) -> Path:
    path = ws / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def specs(ws: Path, servers: dict[str, Any], env: dict[str, str] | None = None) -> list[ServerSpec]:
    """The servers of a ``.mcp.json`` given on the command line (approved by being named)."""
    found, notices = load_mcp_servers(ws, {}, write_mcp_json(ws, servers), None, env or dict(os.environ))
    assert notices == []
    return found


# ---- the runtime's wiring, in small ------------------------------------------------------------------
@asynccontextmanager
async def running(
    servers: Sequence[ServerSpec], ws: Path, **options: Any
) -> AsyncIterator[tuple[McpSource, list[str]]]:
    """A started source and the warnings it gave; closed (and checked closed) on the way out."""
    warnings: list[str] = []
    src = McpSource(servers, workspace=ws, warn=warnings.append, **options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        try:
            yield src, warnings
        finally:
            with anyio.fail_after(10):
                await src.aclose()
            tg.cancel_scope.cancel()


async def session(ws: Path, model: ScriptedModel, src: McpSource, mode: str = "yolo") -> Agent:
    """An agent built with the source's (still empty) tools, then — as the runtime does once, before
    the first model request — the tool list taken from every source after ``wait_ready``."""
    sources: list[ToolSource] = [StaticSource("builtin", builtin_tools()), src]
    policy = PermissionPolicy(ws, mode, None)
    cfg = chat_config(
        model,
        collect_tools(sources),
        workspace=ws,
        permission=policy.check,
        results=ResultStore(ws / ".results"),
    )
    assert not any(name.startswith("mcp__") for name in cfg.all_tools())
    assert await src.wait_ready()
    cfg.set_tools(collect_tools(sources))
    return Agent(cfg, gate=PauseGate())


def results(agent: Agent) -> list[ToolResult]:
    return [i for i in agent.history.items() if isinstance(i, ToolResult)]


def wire_tools(model: ScriptedModel) -> list[list[str]]:
    return [[t.model_dump_json() for t in req.tools] for req in model.requests]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def ctx(ws: Path, progress: list[str] | None = None) -> ToolContext:
    c = ToolContext(workspace=ws, cancel=CancelToken())
    if progress is not None:
        c.progress = progress.append
    return c


async def call(
    src: McpSource, name: str, args: dict[str, Any], ws: Path, progress: list[str] | None = None
) -> Any:
    (tool,) = [t for t in src.tools() if t.name == name]
    return await tool.run(tool.params.model_validate(args), ctx(ws, progress))


# ---- the reference server, through the loop -------------------------------------------------------
async def test_scripted_model_calls_the_time_server_from_an_approved_mcp_json(
    ws: Path, tmp_path: Path, time_server: list[str]
) -> None:
    write_mcp_json(ws, stdio("time", time_server))
    store = McpApprovals(tmp_path / "data" / "mcp-approvals.json")
    assert load_mcp_servers(ws, {}, None, store)[0] == []  # a cloned repository starts nothing
    approve_project(ws, store)
    servers, notices = load_mcp_servers(ws, {}, None, store)
    assert notices == [] and [s.name for s in servers] == ["time"]

    model = ScriptedModel(
        [
            Step(calls=[Call("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})]),
            Step(text="It is evening in Tokyo."),
        ]
    )
    async with running(servers, ws) as (src, warnings):
        agent = await session(ws, model, src)
        ends: list[ToolEnd] = []
        agent.emitter.subscribe(lambda ev: ends.append(ev) if isinstance(ev, ToolEnd) else None)
        out = await agent.run("what time is it in Tokyo?")
    assert out.reason == "done" and warnings == []
    (r,) = results(agent)
    answer = json.loads(r.content)
    assert r.status == "ok" and answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")
    assert ends[0].details == {"mcp_server": "time", "mcp_tool": "get_current_time"}
    sent = {t.name: t for t in model.requests[0].tools}
    assert {"mcp__time__convert_time", "mcp__time__get_current_time", "bash", "read"} <= set(sent)
    assert [t.name for t in model.requests[0].tools] == sorted(sent)
    params = sent["mcp__time__get_current_time"].parameters
    assert params["type"] == "object" and params["required"] == ["timezone"]
    assert wire_tools(model)[0] == wire_tools(model)[1]  # the cached prefix: byte-identical


async def test_a_server_whose_command_does_not_exist_is_one_warning_and_the_run_finishes(
    ws: Path, time_server: list[str]
) -> None:
    servers = specs(ws, {**stdio("time", time_server), "ghost": {"command": "owltui-no-such-server-4711"}})
    model = ScriptedModel(
        [Step(calls=[Call("mcp__time__get_current_time", {"timezone": "UTC"})]), Step(text="done")]
    )
    async with running(servers, ws) as (src, warnings):
        agent = await session(ws, model, src)
        out = await agent.run("time?")
        status = {s["name"]: s for s in src.status()}
    assert out.reason == "done" and results(agent)[0].status == "ok"
    assert warnings == ["MCP server 'ghost' failed to start: command not found: owltui-no-such-server-4711"]
    assert status["ghost"] == {
        "name": "ghost",
        "state": "failed",
        "tools": [],
        "error": "command not found: owltui-no-such-server-4711",
    }
    assert status["time"]["state"] == "connected"
    assert status["time"]["tools"] == ["mcp__time__convert_time", "mcp__time__get_current_time"]


# ---- abort, cancellation, the fixed list ----------------------------------------------------------
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_abort_during_a_slow_call_returns_within_a_second_and_the_server_stays_usable(
    ws: Path, tmp_path: Path, transport: str, request: pytest.FixtureRequest
) -> None:
    marker = tmp_path / "cancelled.txt"
    if transport == "stdio":
        servers = specs(ws, stdio("t", TEST_SERVER, env={"MCP_TEST_MARKER": str(marker)}))
    else:
        url = request.getfixturevalue("http_server")
        servers = specs(
            ws, {"t": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {TOKEN}"}}}
        )
        marker = None  # type: ignore[assignment]  # the HTTP server runs without the marker variable
    model = ScriptedModel(
        [
            Step(calls=[Call("mcp__t__slow", {"seconds": 30})]),
            Step(calls=[Call("mcp__t__echo", {"text": "still here"})]),
            Step(text="fine"),
        ]
    )
    async with running(servers, ws) as (src, warnings):
        agent = await session(ws, model, src)
        at_server = anyio.Event()  # the server's first progress: it is running the call
        agent.emitter.subscribe(lambda ev: at_server.set() if isinstance(ev, ToolUpdate) else None)
        async with anyio.create_task_group() as tg:
            agent.bind(tg)
            assert agent.prompt("sleep")
            with anyio.fail_after(10):
                await at_server.wait()
            t0 = time.monotonic()
            agent.abort()
            with anyio.fail_after(5):
                await agent.wait_idle()
            took = time.monotonic() - t0
        assert took < 1.0, f"abort took {took:.2f} s"
        assert agent.last_outcome is not None and agent.last_outcome.reason == "aborted"
        assert results(agent)[0].status == "cancelled"
        out = await agent.run("again")
        assert out.reason == "done" and results(agent)[-1].content == "echo: still here"
        assert src.status()[0]["state"] == "connected" and warnings == []
    if marker is not None:  # the server saw notifications/cancelled and stopped its work
        for _ in range(100):
            if marker.exists():
                break
            await anyio.sleep(0.02)
        assert marker.read_text().startswith("cancelled")


async def test_a_tool_timeout_cancels_the_call_at_the_server(ws: Path, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled.txt"
    servers = specs(ws, stdio("t", TEST_SERVER, env={"MCP_TEST_MARKER": str(marker)}, tool_timeout=0.5))
    async with running(servers, ws) as (src, _warnings):
        assert await src.wait_ready()
        t0 = time.monotonic()
        out = await call(src, "mcp__t__slow", {"seconds": 30}, ws)
        assert time.monotonic() - t0 < 2
        assert out.is_error and "did not answer the tool slow within 0.5 s" in out.content
        assert (await call(src, "mcp__t__echo", {"text": "x"}, ws)).content == "echo: x"
        for _ in range(100):
            if marker.exists():
                break
            await anyio.sleep(0.02)
        assert marker.read_text().startswith("cancelled")


async def test_the_tool_list_is_byte_identical_across_rounds_even_when_the_server_changes_it(
    ws: Path,
) -> None:
    servers = specs(ws, stdio("t", TEST_SERVER))
    model = ScriptedModel(
        [
            Step(calls=[Call("mcp__t__change_tools")]),
            Step(calls=[Call("mcp__t__echo", {"text": "a"}), Call("mcp__t__whoami")]),
            Step(text="done"),
        ]
    )
    async with running(servers, ws) as (src, warnings):
        agent = await session(ws, model, src)
        await agent.run("go")
        frozen = list(src.tools())
        await agent.run("again")  # a later run sends the same list as well
    rounds = wire_tools(model)
    assert len(rounds) == 4 and all(r == rounds[0] for r in rounds)
    assert src.tools() == frozen
    assert warnings == []  # it announced a change but listed the same tools: nothing to say


# ---- Streamable HTTP ------------------------------------------------------------------------------
async def test_streamable_http_with_a_bearer_token_from_the_environment(ws: Path, http_server: str) -> None:
    env = {**os.environ, "OWL_MCP_TOKEN": TOKEN}
    servers = specs(
        ws,
        {
            "web": {
                "type": "http",
                "url": http_server,
                "headers": {"Authorization": "Bearer ${OWL_MCP_TOKEN}"},
            },
            "locked": {"type": "http", "url": http_server, "headers": {"Authorization": "Bearer wrong"}},
        },
        env,
    )
    model = ScriptedModel([Step(calls=[Call("mcp__web__echo", {"text": "over http"})]), Step(text="ok")])
    async with running(servers, ws) as (src, warnings):
        agent = await session(ws, model, src)
        await agent.run("echo")
    assert results(agent)[0].content == "echo: over http"
    (warning,) = warnings
    assert warning.startswith("MCP server 'locked' failed to start:") and "HTTP 401" in warning
    assert TOKEN not in warning and "wrong" not in warning


# ---- what the servers send -------------------------------------------------------------------------
async def test_schemas_the_providers_would_reject_leave_out_only_those_tools(ws: Path) -> None:
    async with running(specs(ws, stdio("raw", RAW_SERVER)), ws) as (src, warnings):
        assert await src.wait_ready()
        names = [t.name for t in src.tools()]
        fine = await call(src, "mcp__raw__fine", {}, ws)
        no_type = await call(src, "mcp__raw__no_type", {"n": 3}, ws)
    tool_warnings = warnings  # its unasked tools/list_changed brought the same list: silent
    assert len(tool_warnings) == 3 and all(w.startswith("MCP tool '") for w in tool_warnings)
    by_tool = {w.split("'")[1]: w for w in tool_warnings}
    assert 'root type is "string"' in by_tool["scalar_root"]
    assert "anyOf at the top level" in by_tool["union_root"]
    assert "not a valid JSON Schema" in by_tool["broken"]
    assert names[:2] == ["mcp__raw__aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0f45e8", "mcp__raw__fine"]
    assert names[2:] == ["mcp__raw__no_type"] and all(len(n) <= 64 for n in names)
    (no_type_tool,) = [t for t in src.tools() if t.name == "mcp__raw__no_type"]
    assert tool_spec(no_type_tool).parameters == {
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "type": "object",
    }
    assert fine.content == "called fine with {}" and no_type.content == 'called no_type with {"n": 3}'


async def test_results_images_structured_content_errors_and_names_that_needed_sanitising(ws: Path) -> None:
    async with running(specs(ws, stdio("t", TEST_SERVER)), ws) as (src, _warnings):
        assert await src.wait_ready()
        picture = await call(src, "mcp__t__picture", {}, ws)
        structured = await call(src, "mcp__t__structured", {}, ws)
        fails = await call(src, "mcp__t__fails", {}, ws)
        weird = await call(src, "mcp__t__weird_name_with_spaces_", {"n": 1}, ws)
        (whoami,) = [t for t in src.tools() if t.name == "mcp__t__whoami"]
    assert picture.content.endswith(" 1×1, image/png, 70 bytes: attached below]\na red pixel")
    assert [i.media_type for i in picture.images] == ["image/png"]
    assert json.loads(structured.content) == {"answer": 42, "unit": "owls"}
    assert fails.is_error and fails.content == "it broke on purpose"
    assert weird.content == "unknown tool weird.name with spaces!"  # the server got its own name
    assert whoami.description == "The tool whoami of the MCP server t."


async def test_read_only_hints_make_a_tool_free_only_when_the_user_opted_in(ws: Path) -> None:
    policy = PermissionPolicy(ws, "ask", None)
    for trust in (False, True):
        async with running(specs(ws, stdio("t", TEST_SERVER)), ws, trust_read_only_hints=trust) as (src, _w):
            assert await src.wait_ready()
            tools = {t.name: t for t in src.tools()}
            echo, slow = tools["mcp__t__echo"], tools["mcp__t__slow"]
            assert (echo.read_only, slow.read_only) == (trust, False)
            model = ScriptedModel([Step(calls=[Call("mcp__t__echo", {"text": "hi"})]), Step(text="ok")])
            cfg = chat_config(model, list(tools.values()), workspace=ws, permission=policy.check)
            agent = Agent(cfg, gate=PauseGate())
            await agent.run("echo")
            (r,) = results(agent)
            assert (r.status == "ok") is trust and (r.status == "refused") is (not trust)


# ---- life cycle --------------------------------------------------------------------------------------
async def test_servers_start_in_parallel_and_closing_kills_each_process_group(ws: Path) -> None:
    servers = specs(ws, {**stdio("a", TEST_SERVER), **stdio("b", TEST_SERVER)})
    t0 = time.monotonic()
    async with running(servers, ws) as (src, warnings):
        assert await src.wait_ready()
        ready_after = time.monotonic() - t0
        children = [int((await call(src, f"mcp__{s}__spawn_child", {}, ws)).content) for s in ("a", "b")]
        pids = [s.pid for s in src.servers]
        assert all(pid is not None and alive(pid) for pid in [*pids, *children])
        t1 = time.monotonic()
        await src.aclose()
        closed_after = time.monotonic() - t1
    assert warnings == [] and [s["state"] for s in src.status()] == ["closed", "closed"]
    for _ in range(100):
        if not any(alive(p) for p in [*pids, *children]):  # type: ignore[arg-type]
            break
        await anyio.sleep(0.02)
    assert not any(alive(p) for p in [*pids, *children]), "a server or its child survived"  # type: ignore[arg-type]
    assert closed_after < 3.0, closed_after
    print(f"two servers ready after {ready_after:.2f} s, closed in {closed_after:.2f} s")


async def test_a_server_that_dies_is_one_warning_and_its_tools_stay_but_say_so(ws: Path) -> None:
    async with running(specs(ws, stdio("t", TEST_SERVER)), ws) as (src, warnings):
        assert await src.wait_ready()
        names = [t.name for t in src.tools()]
        pid = src.servers[0].pid
        assert pid is not None
        os.killpg(pid, signal.SIGKILL)
        with anyio.fail_after(5):
            await src.servers[0].finished.wait()
        assert src.status()[0]["state"] == "failed"
        out = await call(src, "mcp__t__echo", {"text": "x"}, ws)
        assert [t.name for t in src.tools()] == names  # the session's list does not change
    assert out.is_error and "'t' is not connected" in out.content and "exited" in out.content
    (warning,) = warnings
    assert warning.startswith("MCP server 't' stopped: it exited") and "-9" in warning


async def test_a_server_that_never_answers_fails_at_its_timeout(ws: Path) -> None:
    hang = [
        sys.executable,
        "-c",
        "import sys, time; print('starting', file=sys.stderr, flush=True); time.sleep(60)",
    ]
    servers = specs(ws, stdio("hang", hang, timeout=1.5))
    t0 = time.monotonic()
    async with running(servers, ws) as (src, warnings):
        assert await src.wait_ready()
        took = time.monotonic() - t0
        assert list(src.tools()) == []
    assert took < 3.5, took
    (warning,) = warnings
    assert (
        "'hang' failed to start: it did not start within 1.5 s" in warning and "it said: starting" in warning
    )
    pid = src.servers[0].pid
    assert pid is not None and not alive(pid)


async def test_servers_approved_before_the_freeze_join_the_session_later_ones_at_a_refresh(ws: Path) -> None:
    async with running(specs(ws, stdio("a", TEST_SERVER)), ws) as (src, _warnings):
        assert src.add_servers(specs(ws, stdio("b", TEST_SERVER)))
        assert not src.ready and "b" in src.starting()
        assert await src.wait_ready()
        names = {t.name for t in src.tools()}
        assert {"mcp__a__echo", "mcp__b__echo"} <= names
        assert src.add_servers(specs(ws, stdio("c", TEST_SERVER)))  # after the freeze: started now
        assert [s["name"] for s in src.status()] == ["a", "b", "c"]
        assert {t.name for t in src.tools()} == names  # the kept list changes only at refresh()
        assert "mcp__b__echo" in src.describe() and "b: connected, 9 tools (stdio:" in src.describe()


# ---- a server nobody here wrote, over npm ---------------------------------------------------------
async def test_server_everything_long_running_tool_reports_progress(
    ws: Path, everything_server: list[str]
) -> None:
    async with running(specs(ws, stdio("everything", everything_server)), ws) as (src, warnings):
        assert await src.wait_ready(60)
        names = {t.name for t in src.tools()}
        assert "mcp__everything__trigger-long-running-operation" in names, (names, warnings)
        progress: list[str] = []
        out = await call(
            src, "mcp__everything__trigger-long-running-operation", {"duration": 1, "steps": 4}, ws, progress
        )
        image = await call(src, "mcp__everything__get-tiny-image", {}, ws)
        echo = await call(src, "mcp__everything__echo", {"message": "owl"}, ws)
    assert not out.is_error and "Long running operation completed" in out.content
    assert progress == [f"progress {i}/4\n" for i in range(1, 5)]
    assert "image/png" in image.content and "attached below" in image.content
    assert [i.media_type for i in image.images] == ["image/png"]
    assert "owl" in echo.content


async def test_approving_the_workspace_file_in_the_session_starts_its_servers_before_the_freeze(
    ws: Path, tmp_path: Path
) -> None:
    write_mcp_json(ws, stdio("t", TEST_SERVER))
    warnings: list[str] = []
    src = mcp_source(ws, None, None, dict(os.environ), warnings.append, tmp_path / "data")
    assert src.servers == [] and "/mcp approve" in warnings[0] and question(src) is not None
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        await anyio.wait_all_tasks_blocked()  # started, and waiting for servers to be approved
        assert decide(src, True).startswith(f"Approved {ws / '.mcp.json'}: starting its MCP servers (t)")
        assert question(src) is None
        assert await src.wait_ready()
        assert "mcp__t__echo" in {t.name for t in src.tools()}
        write_mcp_json(ws, {**stdio("t", TEST_SERVER), **stdio("u", TEST_SERVER)})  # changed: asked again
        assert question(src) is not None
        assert "starting its MCP servers (t, u) now" in decide(src, True)  # after the freeze too
        assert [s["name"] for s in src.status()] == ["t", "u"]
        with anyio.fail_after(10):
            await src.aclose()
    # the next session starts both without asking
    nxt = mcp_source(ws, None, None, dict(os.environ), warnings.append, tmp_path / "data")
    assert [s.name for s in nxt.servers] == ["t", "u"] and question(nxt) is None
    assert "will not be started" in decide(nxt, False) and question(nxt) is None
