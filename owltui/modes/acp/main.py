"""``owltui --acp``: the connection over stdio, with stdout kept for protocol bytes alone.

Before anything else runs, the protocol's two descriptors are moved out of the way: the real stdout
is duplicated to a private descriptor the connection writes to, and descriptor 1 becomes a copy of
stderr, so ``print``, ``warnings``, logging, a C extension and every child process that inherits
descriptor 1 write to stderr; stdin is duplicated likewise and descriptor 0 becomes ``/dev/null``,
so no child reads the client's requests. The private descriptors are not inherited (``os.dup``).

``serve(options, reader, writer)`` runs the agent on any pair of asyncio streams (the tests' pipes);
end of input closes every session (their runs aborted, their files closed) and ends with status 0.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from typing import Any

import anyio
from acp import AgentSideConnection

from owltui.modes.acp.agent import ModelFor, OwlAgent
from owltui.session.runtime.options import Options

STREAM_LIMIT = 50 * 1024 * 1024  # one message may carry a file's content


def protect_stdout() -> tuple[int, int]:
    """Move the protocol's stdin and stdout to private descriptors; (input fd, output fd)."""
    sys.stdout.flush()
    proto_out = os.dup(1)
    proto_in = os.dup(0)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    return proto_in, proto_out


class _FdTransport(asyncio.WriteTransport):
    """Writes to a descriptor that is not a pipe (a file stdout was redirected to), at once."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd
        self.closing = False

    def write(self, data: Any) -> None:
        view = memoryview(bytes(data))
        while view and not self.closing:
            try:
                view = view[os.write(self.fd, view) :]
            except OSError:
                self.closing = True

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    def get_write_buffer_size(self) -> int:
        return 0


async def streams(fd_in: int, fd_out: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams on two descriptors (pipes, sockets, terminals; files read by a thread)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STREAM_LIMIT)
    protocol = asyncio.StreamReaderProtocol(reader)
    try:
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(fd_in, "rb", buffering=0, closefd=False))
    except ValueError:  # a regular file: read it in a thread
        import threading

        def feed() -> None:
            while data := os.read(fd_in, 65536):
                loop.call_soon_threadsafe(reader.feed_data, data)
            loop.call_soon_threadsafe(reader.feed_eof)

        threading.Thread(target=feed, daemon=True, name="owltui-acp-stdin").start()
    flow = asyncio.streams.FlowControlMixin()
    transport: asyncio.WriteTransport
    try:
        transport, flow = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", buffering=0, closefd=False)
        )
    except ValueError:
        transport = _FdTransport(fd_out)
    return reader, asyncio.StreamWriter(transport, flow, None, loop)


async def serve(
    options: Options,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    env: Mapping[str, str] | None = None,
    model_for: ModelFor | None = None,
) -> int:
    """Serve ACP on ``reader``/``writer`` until end of input."""
    async with anyio.create_task_group() as tg:
        agent = OwlAgent(options, tg, env=env, model_for=model_for)
        conn = AgentSideConnection(
            agent, writer, reader, listening=False, use_unstable_protocol=True, observers=[agent.observe]
        )
        try:
            await conn.listen()
        finally:
            agent.close_all()
    await conn.close()
    return 0


async def _main(options: Options, fd_in: int, fd_out: int) -> int:
    reader, writer = await streams(fd_in, fd_out)
    return await serve(options, reader, writer)


def acp_main(options: Options) -> int:
    """``owltui --acp``: ACP v1 on stdin/stdout until the client closes stdin."""
    fd_in, fd_out = protect_stdout()
    return anyio.run(_main, options, fd_in, fd_out)
