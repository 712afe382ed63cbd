"""The tests' ACP client: the SDK's own client connection to ``serve`` over two OS pipes, recording
what the agent sends (updates, permission requests, extension notifications) and answering
permission requests as a test says."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from acp import ClientSideConnection, connect_to_agent
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from owltui.agent.model import Model
from owltui.modes.acp.main import serve, streams
from owltui.session.runtime.options import Options

Chooser = Callable[[ToolCallUpdate, list[PermissionOption]], str | None]


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "HOME": str(tmp_path / "home"),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    }


@dataclass
class Recorder:
    """An ACP client that keeps everything it is sent."""

    choose: Chooser = lambda _call, _options: "allow"
    updates: list[tuple[str, Any]] = field(default_factory=list)
    asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    notices: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    hold_permission: anyio.Event | None = None  # answer permission requests only once set
    changed: anyio.Event = field(default_factory=anyio.Event)
    incoming: list[dict[str, Any]] = field(default_factory=list)  # every message, in arrival order

    def observe(self, event: Any) -> None:
        if event.direction.value == "incoming":
            self.incoming.append(event.message)

    def _poke(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def wait_for(self, test: Callable[[], Any], limit: float = 10) -> Any:
        with anyio.fail_after(limit):
            while True:
                got = test()
                if got:
                    return got
                await self.changed.wait()

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for sid, u in self.updates if session_id in (None, sid)]

    def of(self, kind: str, session_id: str | None = None) -> list[Any]:
        return [u for sid, u in self.updates if u.session_update == kind and session_id in (None, sid)]

    def text(self, session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk", session_id))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self._poke()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self._poke()
        if self.hold_permission is not None:
            await self.hold_permission.wait()
        choice = self.choose(tool_call, options)
        if choice is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice))

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        await anyio.Path(path).write_text(content)
        self._poke()
        return WriteTextFileResponse()

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notices.append((method, params))
        self._poke()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def on_connect(self, conn: Any) -> None:
        pass


async def _client_streams(fd_in: int, fd_out: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=50 * 1024 * 1024)
    protocol = asyncio.StreamReaderProtocol(reader)
    await loop.connect_read_pipe(lambda: protocol, os.fdopen(fd_in, "rb", buffering=0))
    transport, flow = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", buffering=0)
    )
    return reader, asyncio.StreamWriter(transport, flow, None, loop)


@asynccontextmanager
async def connected(
    tmp_path: Path,
    model_for: Callable[[Path], Model | None] | None = None,
    *,
    client: Recorder | None = None,
    options: Options | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, Recorder]]:
    """``serve`` in this process, the SDK's client connected to it over two pipes."""
    client = client or Recorder()
    to_agent_r, to_agent_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    reader, writer = await streams(to_agent_r, to_client_w)
    creader, cwriter = await _client_streams(to_client_r, to_agent_w)
    options = options or Options(workspace=tmp_path)
    done = anyio.Event()
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            try:
                await serve(options, reader, writer, env=env_for(tmp_path), model_for=model_for)
            finally:
                done.set()

        tg.start_soon(run)
        conn = connect_to_agent(cast(Any, client), cwriter, creader, observers=[client.observe])
        try:
            yield conn, client
        finally:
            cwriter.close()  # end of input: the agent closes its sessions
            with anyio.fail_after(10):
                await done.wait()
            with contextlib.suppress(ConnectionError):  # a late answer to a closed pipe
                await conn.close()
            writer.close()
            for fd in (to_agent_r, to_client_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
