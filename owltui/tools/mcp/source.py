"""``McpSource``: the configured MCP servers as a tool source (``owltui.session.runtime.sources.ToolSource``).

**Readiness and the fixed tool list.** Every request of a session must carry one sorted tool list
(the cached prefix), yet servers take from 0.1 s to several seconds to start and must not delay the
first frame. So: ``start()`` (in the runtime's task group, in the background) connects every server
in parallel (the SDK, a second's import, is imported in a worker thread), each within its start-up
timeout (measured from ``start``, import included; a server that misses it is a failed server).
``tools()`` is empty until every server has connected or failed; then its first call freezes the
sorted list for the session. The runtime awaits ``wait_ready()`` once, before the session's first
model request (by then the servers have usually long been up: the user was typing), and takes the
tools then. After that the list changes only at a turn boundary: a server approved later (``/mcp
approve``) starts at once and, once connected, says so in one notice; a server whose
``tools/list_changed`` brought a different list says what changed in one notice (an unchanged list
is silent). Either calls ``on_change``; the runtime then calls ``refresh()`` when no run is going (at
once, or when the current run ends) and takes the tools again. A server that dies later keeps its
tools in the list and its calls answer that it is not connected.

One failed server is one warning naming it and why; the others and the session go on. ``status()``
is the ``/mcp`` listing and the ``mcp_status`` RPC answer. ``aclose()`` closes every connection:
stdio servers get their stdin closed and, unless they exit at once, their process group
terminated (see ``stdio``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from owltui.agent.tool import Tool
from owltui.tools.mcp.approvals import McpApprovals
from owltui.tools.mcp.config import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerSpec
from owltui.tools.mcp.launch import Launch
from owltui.tools.mcp.requests.handlers import McpRequests
from owltui.tools.mcp.server import McpServer, Warn

CLOSE_WITHIN = 5.0  # aclose waits at most this long for every server to go away
READY_MARGIN = 1.0


def _stderr_warn(text: str) -> None:
    import sys

    print(f"owltui: warning: {text}", file=sys.stderr)


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
        launch: Launch | None = None,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
    ) -> None:
        import os

        self.workspace = workspace
        self.launch = launch or Launch(workspace)  # where stdio servers start, which are sandboxed
        self.env = dict(os.environ if env is None else env)
        self.warn = warn or _stderr_warn
        self.trust_read_only_hints = trust_read_only_hints
        self.startup_timeout = startup_timeout
        self.tool_timeout = tool_timeout
        self.on_change: Callable[[], None] | None = None  # the kept list may be refreshed (runtime)
        self.servers: list[McpServer] = []
        self.requests = McpRequests(workspace)  # elicitation, roots, sampling (the session sets the asker)
        self.approvals: McpApprovals | None = None  # where /mcp approve records (wiring.mcp_source)
        self._frozen: list[Tool] | None = None
        self._late: set[McpServer] = set()  # servers started after ``start`` (login, approval): they say so
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

    def _server(self, spec: ServerSpec) -> McpServer:
        server = McpServer(
            spec,
            workspace=self.workspace,
            env=self.env,
            warn=self.warn,
            trust_read_only=self.trust_read_only_hints,
            startup_timeout=self.startup_timeout,
            launch=self.launch,
            tool_timeout=self.tool_timeout,
            on_tools=self._server_tools,
        )
        server.requests = self.requests
        return server

    def _server_tools(self, server: McpServer, change: str) -> None:
        """A server connected (``change`` empty) or listed different tools. Before the list is
        fixed the first request takes them: only a server started after the others (``/mcp login``,
        ``/mcp approve``) says it connected."""
        if server not in self.servers or (self._frozen is None and server not in self._late):
            return
        if change:
            self.warn(
                f"MCP server '{server.name}' changed its tools ({change}): the new list applies "
                "from the next turn"
            )
        else:
            n = len(server.tools)
            self.warn(
                f"MCP server '{server.name}' connected: its {n} tool{'s' if n != 1 else ''} "
                f"{'are' if n != 1 else 'is'} available from the next turn"
            )
        if self.on_change is not None and self._frozen is not None:
            self.on_change()

    def refresh(self) -> bool:
        """At a turn boundary (no run going): take every server's current tools as the kept list.
        True when it differs from the list kept so far (the caller takes the tools again)."""
        if self._frozen is None:
            return False
        tools = sorted((t for s in self.servers for t in s.tools), key=lambda t: t.name)
        if [id(t) for t in tools] == [id(t) for t in self._frozen]:
            return False
        self._frozen = list(tools)
        return True

    def add_servers(self, specs: Sequence[ServerSpec]) -> bool:
        """Add servers (e.g. a ``.mcp.json`` the user just approved) and start them now. Before the
        tool list is fixed they join the first request; after it, the next turn once they connect
        (``on_change``). False: the source is closed (nothing started)."""
        if self._closed:
            return False
        known = {s.spec.key for s in self.servers}
        new = [self._server(spec) for spec in specs if spec.key not in known]
        if new and self._ready.is_set():
            self._ready = anyio.Event()
        self.servers.extend(new)
        if self._tg is not None:
            for server in new:
                self._launch(server)
        self._check_ready()
        return True

    def restart(self, name: str) -> bool:
        """Connect the server ``name`` again (after ``/mcp login``): a new connection takes the old
        one's place. Its tools join as those of a server added now do. False: no such server, or the
        source is not running."""
        found = [s for s in self.servers if s.name == name]
        if not found or self._closed or self._tg is None:
            return False
        old = found[0]
        old.stop()
        new = self._server(old.spec)
        self.servers[self.servers.index(old)] = new
        if self._ready.is_set():
            self._ready = anyio.Event()
        self._launch(new)
        self._check_ready()
        return True

    def _launch(self, server: McpServer, since: float | None = None) -> None:
        """Run ``server`` in the source's task group; its start-up time counts from ``since`` (the
        source's start, so the SDK import counts too) or now."""
        assert self._tg is not None
        if since is None:
            self._late.add(server)
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
        """``[{name, state, tools, error?, joining?}]``: ``state`` pending (configured, not started),
        connecting, connected, failed or closed (stopped); ``tools`` the names the model calls (after
        the freeze: those in the session's list); ``joining`` the tools that join at the next turn."""
        frozen = {t.name for t in self._frozen} if self._frozen is not None else None
        out: list[dict[str, Any]] = []
        for server in self.servers:
            names = [t.name for t in server.tools if frozen is None or t.name in frozen]
            entry: dict[str, Any] = {"name": server.name, "state": server.state, "tools": names}
            joining = [t.name for t in server.tools if frozen is not None and t.name not in frozen]
            if joining and server.state == "connected":
                entry["joining"] = joining
            if server.error:
                entry["error"] = server.error
            out.append(entry)
        return out

    def describe(self) -> str:
        """``/mcp``: one block per server (its state in words, where it runs, its tools)."""
        if not self.servers:
            return "No MCP servers are configured (.mcp.json, [mcp.servers.NAME] or --mcp-config FILE)."
        lines: list[str] = []
        for server, entry in zip(self.servers, self.status(), strict=True):
            spec = server.spec
            where = f"{spec.transport}: {spec.describe()}; from {spec.origin}"
            lines.append(f"{server.name}: {state_words(entry, self.frozen)} ({where})")
            if entry.get("error"):
                lines.append(f"  error: {entry['error']}")
            if server.hidden:
                lines.append(
                    f"  not offered (task-only tools; OwlTUI runs no tasks): {', '.join(server.hidden)}"
                )
            for tool in server.tools:
                if tool.name in entry["tools"]:
                    free = "  (read-only: runs without asking)" if tool.read_only else ""
                    lines.append(f"  {tool.name}{free}")
            for name in entry.get("joining", []):
                lines.append(f"  {name}  (from the next turn)")
        if not self.ready and not self.frozen:
            lines.append("(still starting: the tool list is fixed before the first request)")
        return "\n".join(lines)


def state_words(entry: Mapping[str, Any], frozen: bool) -> str:
    """A server's ``status`` entry's state as ``/mcp`` says it."""
    state = entry["state"]
    if state == "pending":
        return "configured, not started yet"
    if state == "connecting":
        return "starting"
    if state == "failed":
        return "failed"
    if state == "closed":
        return "stopped"
    n = len(entry["tools"]) + len(entry.get("joining", []))
    joins = "; they join at the next turn" if entry.get("joining") and frozen else ""
    return f"connected, {n} tool{'s' if n != 1 else ''}{joins}"
