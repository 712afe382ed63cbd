"""``McpSource``: the configured MCP servers as a tool source (``owltui.session.runtime.sources.ToolSource``).

**Readiness and the fixed tool list.** Every request of a session must carry one sorted tool list
(the cached prefix), yet servers take from 0.1 s to several seconds to start and must not delay the
first frame. So: ``start()`` (in the runtime's task group, in the background) connects every server
in parallel (the SDK, a second's import, is imported in a worker thread), each within its start-up
timeout (measured from ``start``, import included; a server that misses it is a failed server).
``tools()`` is empty until every server has connected or failed; then its first call freezes the
sorted list for the session. The runtime awaits ``wait_ready()`` once, before the session's first
model request (by then the servers have usually long been up: the user was typing), and takes the
tools then. A server's ``tools/list_changed`` is noted (one notice) and applies from the next
session; a server that dies later keeps its tools in the list and its calls answer that it is not
connected.

One failed server is one warning naming it and why; the others and the session go on. ``status()``
is the ``/mcp`` listing and the ``mcp_status`` RPC answer. ``aclose()`` closes every connection:
stdio servers get their stdin closed and, unless they exit at once, their process group
terminated (see ``stdio``).
"""

from __future__ import annotations

import importlib
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
from pydantic import BaseModel

from owltui.agent.tool import Tool, ToolContext, ToolOutput
from owltui.policy.permissions.mcp_names import tool_name
from owltui.tools.mcp.config import DEFAULT_STARTUP_TIMEOUT, McpApprovals, ServerSpec
from owltui.tools.mcp.schema import SchemaProblem, arguments_of, check_schema, params_model

log = logging.getLogger(__name__)
State = Literal["pending", "connecting", "connected", "failed", "closed"]
Warn = Callable[[str], None]
CLOSE_WITHIN = 5.0  # aclose waits at most this long for every server to go away
READY_MARGIN = 1.0
LISTEN_ACK_WITHIN = 10.0  # a server that does not acknowledge subscriptions/listen by then: no notice


def _stderr_warn(text: str) -> None:
    import sys

    print(f"owltui: warning: {text}", file=sys.stderr)


class McpTool:
    """One tool of one server, named ``mcp__SERVER__TOOL``, with the server's schema as parameters."""

    def __init__(
        self,
        server: McpServer,
        remote: str,
        name: str,
        description: str,
        schema: dict[str, Any],
        read_only: bool,
    ) -> None:
        self.server = server
        self.remote = remote  # the tool's name on the server
        self.name = name
        self.description = description
        self.schema = schema
        self.params: type[BaseModel] = params_model(name, schema)
        self.read_only = read_only

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        return await self.server.call(self.remote, arguments_of(args), ctx)


class McpServer:
    """One connection: its state, the tools it listed, the call path."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        workspace: Path,
        env: Mapping[str, str],
        trust_read_only: bool,
        warn: Warn,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        self.spec = spec
        self.startup_timeout = spec.startup_timeout or startup_timeout
        self.workspace = workspace
        self.env = dict(env)
        self.trust_read_only = trust_read_only
        self.warn = warn
        self.state: State = "pending"
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.settled = anyio.Event()  # connected or failed, the first time
        self.finished = anyio.Event()  # the connection is over (failed, exited or closed)
        self.list_changed = False
        self.pid: int | None = None
        self._client: Any = None
        self._transport: Any = None
        self._stop = anyio.Event()

    @property
    def name(self) -> str:
        return self.spec.name

    # ---- connecting ----------------------------------------------------------------------------
    async def run(self, deadline: float) -> None:
        """Connect (by ``deadline``), list tools, stay connected until ``stop`` or the server exits."""
        spec = self.spec
        self.state = "connecting"
        transport: Any = None
        try:
            with anyio.CancelScope(deadline=deadline) as scope:
                # the SDK takes about a second to import: in a worker thread, off the event loop
                client_mod = await anyio.to_thread.run_sync(
                    importlib.import_module, "owltui.tools.mcp.client", abandon_on_cancel=True
                )
                async with AsyncExitStack() as stack:
                    if spec.transport == "stdio":
                        transport = client_mod.stdio_transport(spec, self.env, self.workspace)
                    else:
                        transport = client_mod.http_transport(spec.url, spec.headers)
                    self._transport = transport
                    client = await stack.enter_async_context(
                        client_mod.make_client(transport, self._on_message)
                    )
                    listed, problems = await client_mod.list_all_tools(client)
                    events = await self._subscribe(stack, client)
                    scope.deadline = math.inf
                    self.pid = getattr(transport, "pid", None)
                    if self.settled.is_set():  # the deadline watch gave up on it meanwhile
                        return
                    self._connected(client, listed, problems)
                    await self._until_stopped(transport, events)
            if scope.cancelled_caught and self.state != "connected":
                self._fail(f"it did not start within {self.startup_timeout:g} s{self._said(transport)}")
        except ImportError as exc:
            self._fail(f"the MCP SDK cannot be imported ({exc}); install it with: pip install mcp")
        except Exception as exc:
            why = importlib.import_module("owltui.tools.mcp.client").describe_error(exc, spec)
            if self._stop.is_set() and self.state == "connected":
                log.debug("MCP server %s: error while closing: %s", self.name, why)
            else:
                self._fail(why + self._said(transport), stopped=self.state == "connected")
        finally:
            self._client = None
            self.pid = self.pid or getattr(transport, "pid", None)
            if self.state in ("connected", "connecting", "pending"):
                self.state = "closed"
            self.settled.set()
            self.finished.set()

    def _said(self, transport: Any) -> str:
        http = getattr(transport, "http_error", None)
        if http:
            return f" (the server answered {http}{'; check the headers' if 'HTTP 40' in http else ''})"
        tail = transport.stderr_tail() if hasattr(transport, "stderr_tail") else ""
        code = getattr(transport, "returncode", None)
        out = f" (exit code {code})" if code not in (None, 0) and "exit code" not in tail else ""
        return f"{out}; it said: {tail}" if tail else out

    async def _until_stopped(self, transport: Any, events: Any) -> None:
        exited = getattr(transport, "exited", None)
        async with anyio.create_task_group() as tg:

            async def watch(event: anyio.Event) -> None:
                await event.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(watch, self._stop)
            if exited is not None:
                tg.start_soon(watch, exited)
            if events is not None:
                tg.start_soon(self._listen, events)
        if not self._stop.is_set():
            self._client = None
            self._fail(f"it exited{self._said(transport) or ''}", stopped=True)

    def _connected(
        self, client: Any, listed: Sequence[Any], problems: Sequence[tuple[str, str]] = ()
    ) -> None:
        self._client = client
        self.state = "connected"
        self.error = None
        for remote_name, why in problems:
            self.warn(f"MCP tool '{remote_name}' of server '{self.name}' is left out: {why}")
        seen: dict[str, str] = {}
        tools: list[McpTool] = []
        for remote in listed:
            name = tool_name(self.spec.key, remote.name)
            label = f"MCP tool '{remote.name}' of server '{self.name}'"
            if name in seen:
                self.warn(f"{label} is left out: its name {name} clashes with '{seen[name]}'")
                continue
            try:
                schema = check_schema(remote.input_schema)
            except SchemaProblem as problem:
                self.warn(f"{label} is left out: {problem}")
                continue
            seen[name] = remote.name
            hints = remote.annotations
            read_only = self.trust_read_only and bool(hints is not None and hints.read_only_hint)
            title = remote.title or (hints.title if hints is not None else None)
            description = (
                remote.description or title or ""
            ).strip() or f"The tool {remote.name} of the MCP server {self.name}."
            tools.append(McpTool(self, remote.name, name, description, schema, read_only))
        self.tools = sorted(tools, key=lambda t: t.name)
        self.settled.set()

    def timed_out(self) -> None:
        """The start-up deadline passed (called by the source at the deadline, before the
        connection is torn down, so readiness does not wait for a stubborn process to die)."""
        if not self.settled.is_set():
            self._fail(f"it did not start within {self.startup_timeout:g} s{self._said(self._transport)}")
            self.settled.set()

    def _fail(self, why: str, stopped: bool = False) -> None:
        if self.state == "failed" and not stopped:
            return  # already said (the deadline watch and the connection both saw it)
        self.state = "failed"
        self.error = why
        verb = "stopped" if stopped else "failed to start"
        self.warn(f"MCP server '{self.name}' {verb}: {why}")

    async def _on_message(self, message: Any) -> None:
        """Notifications on a 2025-era connection (where ``tools/list_changed`` arrives unasked)."""
        method = getattr(message, "method", None) or getattr(getattr(message, "root", None), "method", None)
        if method == "notifications/tools/list_changed":
            self._tools_changed()

    async def _subscribe(self, stack: AsyncExitStack, client: Any) -> Any:
        """On a 2026-era connection a client opts in to ``tools/list_changed`` (``subscriptions/
        listen``), before the server counts as connected so no change is missed. A server that does
        not offer it is fine: only the notice is missed."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None
        try:
            with anyio.move_on_after(LISTEN_ACK_WITHIN):
                return await stack.enter_async_context(client.listen(tools_list_changed=True))
        except Exception as exc:
            log.debug("MCP server %s: no tools/list_changed subscription: %s", self.name, exc)
        return None

    async def _listen(self, events: Any) -> None:
        try:
            async for _event in events:
                self._tools_changed()
        except Exception as exc:  # the subscription was lost: only later notices are missed
            log.debug("MCP server %s: tools/list_changed subscription ended: %s", self.name, exc)

    def _tools_changed(self) -> None:
        if not self.list_changed:
            self.list_changed = True
            self.warn(
                f"MCP server '{self.name}' changed its tools; this session keeps the list it "
                "started with (every request keeps its cached prefix): the change applies from "
                "the next session"
            )

    def stop(self) -> None:
        self._stop.set()

    # ---- calling -------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """One ``tools/call``. Cancelling the caller (abort) sends ``notifications/cancelled``."""
        client = self._client
        if client is None or self.state != "connected":
            why = f": {self.error}" if self.error else ""
            return ToolOutput(f"The MCP server '{self.name}' is not connected{why}.", is_error=True)
        from mcp.shared.exceptions import MCPError

        from owltui.tools.mcp.client import describe_error
        from owltui.tools.mcp.results import to_output

        async def progress(done: float, total: float | None, message: str | None) -> None:
            of = f"/{total:g}" if total else ""
            ctx.progress(f"progress {done:g}{of}{f': {message}' if message else ''}\n")

        timeout = self.spec.tool_timeout
        try:
            with anyio.fail_after(timeout if timeout is not None else math.inf):
                result = await client.call_tool(tool, arguments, progress_callback=progress)
        except TimeoutError:
            return ToolOutput(
                f"The MCP server '{self.name}' did not answer {tool} within {timeout:g} s "
                "(the call was cancelled).",
                is_error=True,
            )
        except MCPError as exc:
            return ToolOutput(
                f"The MCP server '{self.name}' answered {tool} with an error: {exc.message}", is_error=True
            )
        except Exception as exc:
            why = describe_error(exc, self.spec)
            return ToolOutput(f"The MCP server '{self.name}' failed on {tool}: {why}", is_error=True)
        return to_output(result, self.name, tool)


class McpSource:
    """The MCP servers of a session as one ``ToolSource`` named ``mcp``."""

    name = "mcp"

    def __init__(
        self,
        servers: Sequence[ServerSpec],
        *,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        warn: Warn | None = None,
        trust_read_only_hints: bool = False,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        import os

        self.workspace = workspace
        self.env = dict(os.environ if env is None else env)
        self.warn = warn or _stderr_warn
        self.trust_read_only_hints = trust_read_only_hints
        self.startup_timeout = startup_timeout
        self.servers: list[McpServer] = []
        self.approvals: McpApprovals | None = None  # where /mcp approve records (wiring.mcp_source)
        self._frozen: list[Tool] | None = None
        self._ready = anyio.Event()
        self._tg: anyio.abc.TaskGroup | None = None
        self._t0: float | None = None
        self._done = anyio.Event()
        self._closing = anyio.Event()
        self._closed = False
        self.add_servers(servers)

    # ---- the ToolSource protocol ---------------------------------------------------------------
    def tools(self) -> Sequence[Tool]:
        """Empty until every server connected or failed; then the sorted list, frozen at this call."""
        if self._frozen is not None:
            return self._frozen
        if not self.ready:
            return []
        tools = [t for s in self.servers if s.state == "connected" for t in s.tools]
        self._frozen = sorted(tools, key=lambda t: t.name)
        return self._frozen

    async def start(self) -> None:
        """Connect every server in parallel and hold the connections (and the place where servers
        approved later start) until ``aclose``. Runs in the runtime's task group for the session."""
        if self._t0 is not None or self._closed:
            return
        self._t0 = anyio.current_time()
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                for server in self.servers:
                    self._launch(server, self._t0)
                await self._closing.wait()
        finally:
            self._tg = None
            self._done.set()

    async def aclose(self) -> None:
        """Close every connection (idempotent); waits at most ``CLOSE_WITHIN`` seconds."""
        self._closed = True
        self._closing.set()
        for server in self.servers:
            server.stop()
        if self._t0 is None:
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(CLOSE_WITHIN) as scope:
            await self._done.wait()
        if scope.cancelled_caught and self._tg is not None:
            self._tg.cancel_scope.cancel()

    # ---- readiness -----------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        """Every server connected or failed (true at once without servers)."""
        return all(s.settled.is_set() for s in self.servers)

    @property
    def frozen(self) -> bool:
        return self._frozen is not None

    async def wait_ready(self, within: float | None = None) -> bool:
        """Until ``ready`` (at most ``within`` seconds; default: the longest start-up timeout plus a
        second). Returns ``ready``. The runtime calls it once before the first model request."""
        if self.ready:
            return True
        limit = within if within is not None else self.longest_startup() + READY_MARGIN
        with anyio.move_on_after(limit):
            while not self.ready:
                event = self._ready
                await event.wait()
        return self.ready

    def starting(self) -> list[str]:
        """The servers still starting (for a "waiting for MCP servers: a, b" notice)."""
        return [s.name for s in self.servers if not s.settled.is_set()]

    def longest_startup(self) -> float:
        return max((s.startup_timeout for s in self.servers), default=0.0)

    def _check_ready(self) -> None:
        if self.ready:
            self._ready.set()

    def add_servers(self, specs: Sequence[ServerSpec]) -> bool:
        """Add servers (e.g. a ``.mcp.json`` the user just approved). They join this session when the
        tool list is not frozen yet (returns True), else the next one (False, nothing started)."""
        if self._frozen is not None or self._closed:
            return False
        known = {s.spec.key for s in self.servers}
        new = [
            McpServer(
                spec,
                workspace=self.workspace,
                env=self.env,
                warn=self.warn,
                trust_read_only=self.trust_read_only_hints,
                startup_timeout=self.startup_timeout,
            )
            for spec in specs
            if spec.key not in known
        ]
        if new and self._ready.is_set():
            self._ready = anyio.Event()
        self.servers.extend(new)
        if self._tg is not None:
            for server in new:
                self._launch(server)
        self._check_ready()
        return True

    def _launch(self, server: McpServer, since: float | None = None) -> None:
        """Run ``server`` in the source's task group; its start-up time counts from ``since`` (the
        source's start, so the SDK import counts too) or now."""
        assert self._tg is not None
        base = since if since is not None else anyio.current_time()
        deadline = base + server.startup_timeout

        async def run() -> None:
            await server.run(deadline)
            self._check_ready()

        async def settle() -> None:
            with anyio.move_on_after(max(0.0, deadline - anyio.current_time())):
                await server.settled.wait()
            server.timed_out()
            self._check_ready()

        self._tg.start_soon(run, name=f"MCP server {server.name}")
        self._tg.start_soon(settle, name=f"MCP server {server.name} readiness")

    # ---- what /mcp and mcp_status show -----------------------------------------------------------
    def status(self) -> list[dict[str, Any]]:
        """``[{name, state, tools, error?}]``: ``tools`` the names the model calls (after the freeze:
        those in the session's list)."""
        frozen = {t.name for t in self._frozen} if self._frozen is not None else None
        out: list[dict[str, Any]] = []
        for server in self.servers:
            names = [t.name for t in server.tools if frozen is None or t.name in frozen]
            entry: dict[str, Any] = {"name": server.name, "state": server.state, "tools": names}
            if server.error:
                entry["error"] = server.error
            out.append(entry)
        return out

    def describe(self) -> str:
        """``/mcp``: one block per server (state, where it runs, its tools)."""
        if not self.servers:
            return "No MCP servers are configured (.mcp.json, [mcp.servers.NAME] or --mcp-config FILE)."
        lines: list[str] = []
        for server, entry in zip(self.servers, self.status(), strict=True):
            spec = server.spec
            where = f"{spec.transport}: {spec.describe()}; from {spec.origin}"
            lines.append(f"{server.name}: {entry['state']} ({where})")
            if entry.get("error"):
                lines.append(f"  error: {entry['error']}")
            if server.list_changed:
                lines.append("  its tools changed: the new list applies from the next session")
            for tool in server.tools:
                if tool.name in entry["tools"]:
                    free = "  (read-only: runs without asking)" if tool.read_only else ""
                    lines.append(f"  {tool.name}{free}")
        if not self.ready:
            lines.append("(still starting: the tool list is fixed before the first request)")
        return "\n".join(lines)
