"""One MCP server connection (``McpServer``) and its tools as OwlTUI tools (``McpTool``).

``McpServer.run`` connects by a deadline (the SDK, a second's import, is imported in a worker
thread), lists the server's tools, subscribes to ``tools/list_changed`` where the protocol asks a
client to, and stays connected until ``stop`` or the server exits. On ``tools/list_changed`` it lists
again and, when the list differs from the one it has, takes the new one and tells ``on_tools``
(what changed, in words); an unchanged list is silent. Tools the client cannot serve are left out:
``execution.taskSupport: "required"`` (OwlTUI runs no tasks). A failure is one warning naming the
server and why; a server that dies later keeps its tools and its calls answer that it is not
connected. ``McpServer.call`` is one ``tools/call`` (with progress, a timeout that each progress
notification restarts, and ``notifications/cancelled`` on timeout and abort). ``source.McpSource``
runs the servers of a session.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack, nullcontext
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.policy.permissions.mcp_names import tool_name
from owltui.tools.mcp.config import DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ServerSpec
from owltui.tools.mcp.launch import Launch
from owltui.tools.mcp.schema import SchemaProblem, arguments_of, check_schema, params_model

log = logging.getLogger(__name__)
State = Literal["pending", "connecting", "connected", "failed", "closed"]
Warn = Callable[[str], None]
OnTools = Callable[["McpServer", str], None]  # (server, what changed: "" when it first connected)
LISTEN_ACK_WITHIN = 10.0  # a server that does not acknowledge subscriptions/listen by then: no notice


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
        """``server`` answers it; ``remote`` is its name there, ``name`` the model's."""
        self.server = server
        self.remote = remote  # the tool's name on the server
        self.name = name
        self.description = description
        self.schema = schema
        self.params: type[BaseModel] = params_model(name, schema)
        self.read_only = read_only

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        arguments = arguments_of(args)
        try:  # what the server's channel would fail on while writing, taking the connection down
            json.dumps(arguments, allow_nan=False, ensure_ascii=False).encode("utf-8")
        except (ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
            why = "a lone surrogate (not UTF-8)" if isinstance(exc, UnicodeEncodeError) else str(exc)
            raise ToolError(f"These arguments cannot be sent to the MCP server: {why}.") from None
        return await self.server.call(self.remote, arguments, ctx)


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
        launch: Launch | None = None,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT,
        on_tools: OnTools | None = None,
    ) -> None:
        """``launch``: where and how a stdio server starts (default: a neutral directory, confined
        servers under a default sandbox). ``tool_timeout``: the calls' limit unless the entry sets
        one. ``on_tools``: told when the server connects and when its tool list changed."""
        self.spec = spec
        self.startup_timeout = spec.startup_timeout or startup_timeout
        self.tool_timeout = spec.tool_timeout or tool_timeout
        self.on_tools = on_tools
        self.workspace = workspace
        self.launch = launch or Launch(workspace)
        self.env = dict(env)
        self.trust_read_only = trust_read_only
        self.warn = warn
        self.state: State = "pending"
        self.error: str | None = None
        self.tools: list[McpTool] = []
        self.settled = anyio.Event()  # connected or failed, the first time
        self.finished = anyio.Event()  # the connection is over (failed, exited or closed)
        self.list_changed = False  # the server changed its tools during the session
        self.hidden: list[str] = []  # tools left out because the client cannot serve them
        self._relist = anyio.Event()
        self.pid: int | None = None
        self._client: Any = None
        self._transport: Any = None
        self._stop = anyio.Event()
        self.requests: Any = None  # McpRequests: what the server may ask (the source sets it)

    @property
    def name(self) -> str:
        return self.spec.name

    def is_connected(self) -> bool:
        """The state now: ``run`` reads it after awaits, during which ``_connected`` may have set it."""
        return self.state == "connected"

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
                        transport = client_mod.stdio_transport(spec, self.env, self.launch)
                    else:
                        transport = client_mod.http_transport(spec, self.env, self.warn)
                    self._transport = transport
                    client = await stack.enter_async_context(
                        client_mod.make_client(transport, self._on_message, self.requests, self.name)
                    )
                    listed, problems = await client_mod.list_all_tools(client)
                    events = await self._subscribe(stack, client)
                    scope.deadline = math.inf
                    self.pid = getattr(transport, "pid", None)
                    if self.settled.is_set():  # the deadline watch gave up on it meanwhile
                        return
                    self._connected(client, listed, problems)
                    await self._until_stopped(transport, events)
            if scope.cancelled_caught and not self.is_connected():
                self._fail(f"it did not start within {self.startup_timeout:g} s{self._said(transport)}")
        except ImportError as exc:
            self._fail(f"the MCP SDK cannot be imported ({exc}); install it with: pip install mcp")
        except Exception as exc:
            why = importlib.import_module("owltui.tools.mcp.client").describe_error(exc, spec)
            if self._stop.is_set() and self.is_connected():
                log.debug("MCP server %s: error while closing: %s", self.name, why)
            elif login := getattr(transport, "login_needed", None):  # one line: "needs login: ..."
                self.state, self.error = "failed", login.removeprefix(f"MCP server '{self.name}' ")
                self.warn(login)
            else:
                self._fail(why + self._said(transport), stopped=self.is_connected())
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
            tg.start_soon(self._relisting)
        if not self._stop.is_set():
            self._client = None
            self._fail(f"it exited{self._said(transport) or ''}", stopped=True)

    def _connected(
        self, client: Any, listed: Sequence[Any], problems: Sequence[tuple[str, str]] = ()
    ) -> None:
        self._client = client
        self.state = "connected"
        self.error = None
        self.tools = self._tools_of(listed, problems, self.warn)
        self.settled.set()
        if self.on_tools is not None:
            self.on_tools(self, "")

    def _tools_of(
        self, listed: Sequence[Any], problems: Sequence[tuple[str, str]], warn: Warn
    ) -> list[McpTool]:
        """The listed tools as OwlTUI tools, sorted; each one left out is one ``warn``."""
        for remote_name, why in problems:
            warn(f"MCP tool '{remote_name}' of server '{self.name}' is left out: {why}")
        seen: dict[str, str] = {}
        tools: list[McpTool] = []
        hidden: list[str] = []
        for remote in listed:
            name = tool_name(self.spec.key, remote.name)
            label = f"MCP tool '{remote.name}' of server '{self.name}'"
            execution = getattr(remote, "execution", None)
            if getattr(execution, "task_support", None) == "required":
                hidden.append(remote.name)  # it runs only as a task, which OwlTUI does not implement
                continue
            if name in seen:
                warn(f"{label} is left out: its name {name} clashes with '{seen[name]}'")
                continue
            try:
                schema = check_schema(remote.input_schema)
            except SchemaProblem as problem:
                warn(f"{label} is left out: {problem}")
                continue
            seen[name] = remote.name
            hints = remote.annotations
            read_only = self.trust_read_only and bool(hints is not None and hints.read_only_hint)
            title = remote.title or (hints.title if hints is not None else None)
            description = (
                remote.description or title or ""
            ).strip() or f"The tool {remote.name} of the MCP server {self.name}."
            tools.append(McpTool(self, remote.name, name, description, schema, read_only))
        self.hidden = hidden
        return sorted(tools, key=lambda t: t.name)

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
        self._relist.set()  # listed again by ``_relisting`` (a notice during start-up too)

    async def _relisting(self) -> None:
        """Each ``tools/list_changed``: list again; a list unlike the one kept replaces it and is
        said once (``on_tools``); the same list is silent."""
        from owltui.tools.mcp.client import describe_error, list_all_tools

        while True:
            await self._relist.wait()
            self._relist = anyio.Event()
            client = self._client
            if client is None:
                continue
            try:
                listed, problems = await list_all_tools(client)
            except Exception as exc:
                log.debug(
                    "MCP server %s: listing again failed: %s", self.name, describe_error(exc, self.spec)
                )
                continue
            said: list[str] = []
            new = self._tools_of(listed, problems, said.append)
            change = tools_change(self.tools, new)
            if not change:
                continue
            for line in said:
                self.warn(line)
            self.tools = new
            self.list_changed = True
            if self.on_tools is not None:
                self.on_tools(self, change)

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
        from owltui.tools.mcp.results import has_images, to_output

        limit = self.tool_timeout
        clock = anyio.CancelScope(deadline=anyio.current_time() + limit)

        async def progress(done: float, total: float | None, message: str | None) -> None:
            clock.deadline = anyio.current_time() + limit  # a call that reports progress is alive
            of = f"/{total:g}" if total else ""
            ctx.progress(f"progress {done:g}{of}{f': {message}' if message else ''}\n")

        result: Any = None
        try:
            asks = self.requests.during_call(self.name, clock, limit) if self.requests else nullcontext()
            with clock, asks:  # cancelling the request sends notifications/cancelled
                result = await client.call_tool(tool, arguments, progress_callback=progress)
        except MCPError as exc:
            return ToolOutput(
                f"The MCP server '{self.name}' answered {tool} with an error: {exc.message}", is_error=True
            )
        except Exception as exc:
            why = describe_error(exc, self.spec)
            return ToolOutput(f"The MCP server '{self.name}' failed on {tool}: {why}", is_error=True)
        if clock.cancelled_caught or result is None:
            return ToolOutput(timeout_text(self.name, tool, limit), is_error=True)
        images = ctx.services.images
        refusal = images.image_refusal() if images is not None else None
        if has_images(result):  # decoding (and maybe downscaling) off the event loop
            return await anyio.to_thread.run_sync(to_output, result, self.name, tool, refusal)
        return to_output(result, self.name, tool, refusal)


def timeout_text(server: str, tool: str, limit: float) -> str:
    """The result a call that timed out gets: the server, the tool, the limit and what to change."""
    return (
        f"The MCP server '{server}' did not answer the tool {tool} within {limit:g} s (no result and "
        "no progress notification in that time), so the call was cancelled on the server. The "
        f"limit is the server entry's tool_timeout (or [mcp] tool_timeout); it is {limit:g} s now."
    )


def tools_change(old: Sequence[McpTool], new: Sequence[McpTool]) -> str:
    """What differs between two tool lists, in words ("" when nothing does)."""

    def shape(t: McpTool) -> tuple[str, str, bool]:
        return (t.description, json.dumps(t.schema, sort_keys=True), t.read_only)

    before = {t.name: shape(t) for t in old}
    after = {t.name: shape(t) for t in new}
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(n for n in set(before) & set(after) if before[n] != after[n])
    parts = [
        f"{verb} {', '.join(names)}"
        for verb, names in (("added", added), ("removed", removed), ("changed", changed))
        if names
    ]
    return "; ".join(parts)
