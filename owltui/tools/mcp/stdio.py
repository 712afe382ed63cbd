"""The stdio transport: the server as a child process in its own process group.

Like the SDK's ``stdio_client`` (newline-delimited JSON-RPC over the child's stdin and stdout), with
what a host needs on top: the process group is known, so closing is "stdin closed, a short grace,
SIGTERM to the group, SIGKILL to the group" and always ends with whatever is left of the group
killed (a server that exits at once but leaves a child behind, as ``npx`` or ``uvx`` wrappers can);
the last lines of the server's stderr are kept (the reason a failed server gives); a line on stdout
that is not JSON-RPC is skipped (noted in that tail) instead of reaching the session; ``exited`` is
set when the server goes away on its own.

The process is a ``subprocess.Popen`` (its pipes non-blocking, awaited with ``anyio.wait_readable``)
rather than ``anyio.open_process``, which cannot run a function in the child before ``exec``: a
server a workspace file defines gets the sandbox's ``preexec`` there, as commands do.

Imports the MCP SDK: only ``source`` imports this module, in the background.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import suppress
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from owltui.tools.exec.signals import group_alive, signal_group

GRACE = 1.0  # after stdin closes, before SIGTERM (the spec's "wait for the server to exit")
TERM_GRACE = 1.0  # after SIGTERM, before SIGKILL
TAIL_LINES = 20
TAIL_CHARS = 400  # per line
CHUNK = 65536


class _Pipe:
    """One end of a child's pipe, non-blocking, read or written as anyio awaits it."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while not self.closed:
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                return
            yield chunk

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self.closed:
                raise anyio.ClosedResourceError
            await anyio.wait_writable(self.fd)
            try:
                view = view[os.write(self.fd, view) :]
            except BlockingIOError:
                continue

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with suppress(OSError):
                anyio.notify_closing(self.fd)
            with suppress(OSError):
                os.close(self.fd)


class _Process:
    """A ``subprocess.Popen`` as the transport uses it: pipes, pid and (polled) return code."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self.popen = popen
        self.pid = popen.pid
        # the pipes are ours from here on: Popen must not close them again
        self.stdin = _Pipe(os.dup(popen.stdin.fileno()))
        self.stdout = _Pipe(os.dup(popen.stdout.fileno()))
        self.stderr = _Pipe(os.dup(popen.stderr.fileno()))
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            stream.close()

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def close(self) -> None:
        for pipe in (self.stdin, self.stdout, self.stderr):
            pipe.close()


class StdioTransport:
    """An ``mcp.client.Transport``: enter to start the process, exit to stop it (and its group).

    ``cwd`` is where the server starts (the caller picks a place the model cannot write unless the
    entry names one); ``preexec`` runs in the child before ``exec`` (the sandbox's setup), or None.
    """

    def __init__(
        self,
        argv: list[str],
        env: Mapping[str, str],
        cwd: Path | None = None,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.argv = argv
        self.env = dict(env)
        self.cwd = cwd
        self.preexec = preexec
        self.pid: int | None = None
        self.returncode: int | None = None
        self.exited = anyio.Event()
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._process: _Process | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._streams: list[Any] = []

    # ---- what a failed server said -------------------------------------------------------------
    def stderr_tail(self, lines: int = 3) -> str:
        kept = [line for line in self._tail if line.strip()]
        return " | ".join(kept[-lines:])

    def _note(self, line: str) -> None:
        line = line.rstrip("\r\n")
        if line.strip():
            self._tail.append(line[:TAIL_CHARS])

    # ---- the life cycle ------------------------------------------------------------------------
    def _spawn(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=self.env,
            start_new_session=True,
            preexec_fn=self.preexec,
        )

    async def __aenter__(
        self,
    ) -> tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]:
        popen = await anyio.to_thread.run_sync(self._spawn)  # fork and exec, off the event loop
        process = self._process = _Process(popen)
        self.pid = process.pid
        read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        self._streams = [read_writer, read_stream, write_stream, write_reader]
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._stdout, process, read_writer)
        tg.start_soon(self._stdin, process, write_reader, read_writer)
        tg.start_soon(self._stderr, process)
        return read_stream, write_stream

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        with anyio.CancelScope(shield=True):
            await self.stop()
        tg, self._tg = self._tg, None
        try:
            if tg is not None:  # exited here, outside the shield: it must be the current scope
                tg.cancel_scope.cancel()
                await tg.__aexit__(None, None, None)
        finally:
            for stream in self._streams:
                stream.close()
            if self._process is not None:
                self._process.close()
        return None

    async def stop(self) -> None:
        """Close stdin, wait ``GRACE``, TERM the group, wait, KILL it; kill what is left of it."""
        process = self._process
        if process is None:
            return
        with suppress(Exception):
            await process.stdin.aclose()
        if not await self._wait(GRACE):
            self._signal(signal.SIGTERM)
            if not await self._wait(TERM_GRACE):
                self._signal(signal.SIGKILL)
                await self._wait(TERM_GRACE)
        if self.pid is not None and group_alive(self.pid):
            self._signal(signal.SIGKILL)  # children the server left behind

    def _signal(self, sig: int) -> None:
        if self.pid is not None:
            signal_group(self.pid, sig)

    async def _wait(self, within: float) -> bool:
        """Did the process exit within ``within`` seconds? (polls: a left-behind child may hold the
        pipes open, so their end says nothing)"""
        process = self._process
        assert process is not None
        with anyio.move_on_after(within):
            while process.returncode is None:  # noqa: ASYNC110 (nothing to wait on but the code)
                await anyio.sleep(0.01)
        if process.returncode is not None:
            self._exited(process.returncode)
            return True
        return False

    def _exited(self, code: int) -> None:
        if self.returncode is None:
            self.returncode = code
        self.exited.set()

    # ---- the pipes -----------------------------------------------------------------------------
    async def _stdout(
        self, process: _Process, out: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        parts: list[bytes] = []  # the line so far (a long result arrives in many chunks)
        try:
            async with out:
                async for chunk in process.stdout:
                    while (end := chunk.find(b"\n")) >= 0:
                        parts.append(chunk[:end])
                        chunk = chunk[end + 1 :]
                        message = self._parse(b"".join(parts))
                        parts = []
                        if message is not None:
                            await out.send(message)
                    if chunk:
                        parts.append(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(GRACE):
                while process.returncode is None:  # noqa: ASYNC110 (as in _wait)
                    await anyio.sleep(0.01)
            if process.returncode is not None:
                self._exited(process.returncode)
            else:
                self.exited.set()  # its stdout is closed: as good as gone for us

    def _parse(self, line: bytes) -> SessionMessage | None:
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValueError:
            self._note(f"(stdout, not JSON-RPC) {text}")
            return None
        return SessionMessage(message)

    async def _stdin(
        self,
        process: _Process,
        messages: MemoryObjectReceiveStream[SessionMessage],
        reads: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        try:
            async with messages:
                async for message in messages:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode("utf-8") + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await reads.aclose()  # the session sees the connection end instead of waiting forever

    async def _stderr(self, process: _Process) -> None:
        buffer = b""
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                lines = (buffer + chunk).split(b"\n")
                buffer = lines.pop()[-4 * TAIL_CHARS :]
                for line in lines:
                    self._note(line.decode("utf-8", "replace"))
        if buffer:
            self._note(buffer.decode("utf-8", "replace"))
