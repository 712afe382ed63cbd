"""RPC mode (``--rpc``): JSON commands on stdin, responses and events on stdout (docs/rpc.md).

One JSON object a line each way. A command names itself with ``type`` (``command`` is accepted
too) and may carry ``id``, echoed in its response. Malformed or unknown commands are answered with
``ok: false`` and a reason; the process keeps serving. ``quit`` ends it after aborting the run;
end of input does the same. stdin is read by a daemon thread so the event loop never blocks.

The commands themselves are the session layer's (``owltui.session.commands``): this module reads a
line into a command name and fields (``parse_line``), runs it, and writes the reply as a response.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO

import anyio
import anyio.from_thread
from anyio.abc import ObjectReceiveStream

from owltui.agent.model import Model
from owltui.modes.event_text import wire_event
from owltui.modes.output import JsonLines
from owltui.session.commands.host import Host, LineFront
from owltui.session.commands.layer import Commands
from owltui.session.custom_commands.offer import CustomCommands, load_at_start
from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options


class BadLine(Exception):
    """A line that names no command; its ``id`` is echoed when it could be read."""

    def __init__(self, reason: str, cid: Any = None) -> None:
        super().__init__(reason)
        self.cid = cid


def parse_line(line: str) -> tuple[str, Any, dict[str, Any]]:
    """One stdin line -> (command name, id, the object's fields); raises BadLine."""
    from owltui.modes.rpc_input import parse_line as read_line
    from owltui.modes.rpc_input import request_id

    cmd = read_line(line)  # undecodable, too deep, non-finite numbers, not an object: the reason
    if isinstance(cmd, str):
        raise BadLine(cmd, cid=request_id(line))
    cid = cmd.get("id")
    name = cmd.get("type", cmd.get("command"))
    if not isinstance(name, str):
        raise BadLine('missing command: give "type", e.g. {"type": "get_state"}', cid=cid)
    return name, cid, cmd


class RpcFront(LineFront):
    """RPC mode as the command layer sees it (``Frontend``)."""

    label = "RPC mode"
    abort_key = "abort"


class RpcServer:
    """Answers command lines against one runtime; ``handle(line)`` returns False on quit."""

    def __init__(
        self, runtime: Host, write: Callable[[dict[str, Any]], None], custom: CustomCommands | None = None
    ) -> None:
        self.front = RpcFront()
        self.commands = Commands(runtime, self.front, custom)
        self.write = write

    def respond(
        self, command: str | None, cid: Any, ok: bool, error: str | None = None, **extra: Any
    ) -> None:
        msg: dict[str, Any] = {"type": "response", "command": command}
        if cid is not None:
            msg["id"] = cid
        msg["ok"] = ok
        if error is not None:
            msg["error"] = error
        msg.update(extra)
        self.write(msg)

    async def handle(self, line: str) -> bool:
        if not line.strip():
            return True
        try:
            name, cid, fields = parse_line(line)
        except BadLine as exc:
            self.respond(None, exc.cid, False, str(exc))
            return True
        reply = self.commands.rpc(name, fields)
        if reply.then is not None:
            reply = await reply.then
        if reply.ok:
            self.respond(name, cid, True, **reply.data)
        else:
            self.respond(name, cid, False, reply.text)
        return not self.front.done


def _reader(fd: int, send: Callable[[str | None], None]) -> None:
    """Daemon thread: every stdin line to the event loop; ``None`` at end of input.

    Reads the raw descriptor (not ``sys.stdin``): a daemon thread blocked inside a buffered reader
    would abort the interpreter at exit."""
    buf = b""
    try:
        while True:
            data = os.read(fd, 65536)
            if not data:
                break
            buf += data
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                send(raw.decode("utf-8", "replace"))
    except OSError:
        pass
    if buf.strip():
        send(buf.decode("utf-8", "replace"))
    send(None)


async def serve(
    runtime: Host,
    lines: ObjectReceiveStream[str | None],
    out: JsonLines,
    custom: CustomCommands | None = None,
) -> int:
    """Serve until ``quit`` or end of input; the caller owns the runtime's context."""
    server = RpcServer(runtime, out.write, custom)
    runtime.emitter.subscribe(lambda ev: out.write(wire_event(ev)))  # the text the TUI would draw
    async for line in lines:
        if line is None or not await server.handle(line):
            break
    return 0


async def rpc_main(
    options: Options,
    *,
    model: Model | None = None,
    env: Mapping[str, str] | None = None,
    stdin_fd: int | None = None,
    stdout: BinaryIO | None = None,
) -> int:
    runtime = build_runtime(options, model=model, env=env)
    # the workspace's custom commands; one named like a built-in command stops the mode here
    custom = load_at_start(options.workspace, env, lambda line: print(f"owltui: {line}", file=sys.stderr))
    out = JsonLines(stdout if stdout is not None else sys.stdout.buffer)
    send, receive = anyio.create_memory_object_stream[str | None](math.inf)
    token = anyio.lowlevel.current_token()

    def push(line: str | None) -> None:
        try:
            anyio.from_thread.run_sync(send.send_nowait, line, token=token)
        except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the loop is gone (we are exiting)

    fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    thread = threading.Thread(target=_reader, args=(fd, push), daemon=True, name="owltui-rpc-stdin")
    async with runtime:
        thread.start()
        with receive:
            code = await serve(runtime, receive, out, custom)
    send.close()
    return code


def run_rpc(options: Options) -> int:
    return anyio.run(rpc_main, options)
