"""One MCP server connection (``McpServer``) and its tools as OwlTUI tools (``McpTool``).

``McpServer.run`` connects by a deadline (the SDK, a second's import, is imported in a worker
thread), lists the server's tools, subscribes to ``tools/list_changed`` where the protocol asks a
client to, and stays connected until ``stop`` or the server exits. A failure is one warning naming
the server and why; a server that dies later keeps its tools and its calls answer that it is not
connected. ``McpServer.call`` is one ``tools/call`` (with progress, a per-tool timeout and
``notifications/cancelled`` on abort). ``source.McpSource`` runs the servers of a session.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Literal

import anyio
from pydantic import BaseModel

from owltui.agent.tool import ToolContext, ToolError, ToolOutput
from owltui.policy.permissions.mcp_names import tool_name
from owltui.tools.mcp.config import DEFAULT_STARTUP_TIMEOUT, ServerSpec
from owltui.tools.mcp.launch import Launch
from owltui.tools.mcp.schema import SchemaProblem, arguments_of, check_schema, params_model

log = logging.getLogger(__name__)
State = Literal["pending", "connecting", "connected", "failed", "closed"]
Warn = Callable[[str], None]
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
    ) -> None:
        """``launch``: where and how a stdio server starts (default: a neutral directory, confined
        servers under a default sandbox)."""
        self.spec = spec
        self.startup_timeout = spec.startup_timeout or startup_timeout
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
        self.list_changed = False
        self.pid: int | None = None
        self._client: Any = None
        self._transport: Any = None
        self._stop = anyio.Event()

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
            if scope.cancelled_caught and not self.is_connected():
                self._fail(f"it did not start within {self.startup_timeout:g} s{self._said(transport)}")
        except ImportError as exc:
            self._fail(f"the MCP SDK cannot be imported ({exc}); install it with: pip install mcp")
        except Exception as exc:
            why = importlib.import_module("owltui.tools.mcp.client").describe_error(exc, spec)
            if self._stop.is_set() and self.is_connected():
                log.debug("MCP server %s: error while closing: %s", self.name, why)
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
