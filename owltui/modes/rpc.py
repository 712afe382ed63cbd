"""RPC mode (``--rpc``): JSON commands on stdin, responses and events on stdout (docs/rpc.md).

One JSON object a line each way. A command names itself with ``type`` (``command`` is accepted
too) and may carry ``id``, echoed in its response. Malformed or unknown commands are answered with
``ok: false`` and a reason; the process keeps serving. ``quit`` ends it after aborting the run;
end of input does the same. stdin is read by a daemon thread so the event loop never blocks.
"""

from __future__ import annotations

import json
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
from owltui.session.runtime import Options, Runtime, build_runtime

from .output import JsonLines

LANES = ("steer", "follow_up", "aside")


class CommandError(Exception):
    """A command that cannot be carried out; the message is the response's ``error``."""


def _text(cmd: Mapping[str, Any], key: str = "text") -> str:
    value = cmd.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CommandError(f"'{key}' must be a non-empty string")
    return value


class RpcServer:
    """Carries out commands against one runtime; ``handle(line)`` returns False on quit."""

    def __init__(self, runtime: Runtime, write: Callable[[dict[str, Any]], None]) -> None:
        self.runtime = runtime
        self.write = write
        self.handlers: dict[str, Callable[[Mapping[str, Any]], dict[str, Any] | None]] = {
            "prompt": self.prompt, "steer": self.lane, "follow_up": self.lane, "aside": self.lane,
            "abort": self.abort, "pause": self.pause, "resume": self.resume,
            "require_tool": self.require_tool, "clear_requirement": self.clear_requirement,
            "approve": self.approve, "get_state": self.get_state, "quit": self.quit,
        }

    def respond(self, command: str | None, cid: Any, ok: bool, error: str | None = None,
                **extra: Any) -> None:
        msg: dict[str, Any] = {"type": "response", "command": command}
        if cid is not None:
            msg["id"] = cid
        msg["ok"] = ok
        if error is not None:
            msg["error"] = error
        msg.update(extra)
        self.write(msg)

    def handle(self, line: str) -> bool:
        if not line.strip():
            return True
        try:
            cmd = json.loads(line)
        except ValueError as exc:
            self.respond(None, None, False, f"invalid JSON: {exc}")
            return True
        if not isinstance(cmd, dict):
            self.respond(None, None, False, "a command must be a JSON object")
            return True
        cid = cmd.get("id")
        name = cmd.get("type", cmd.get("command"))
        if not isinstance(name, str):
            self.respond(None, cid, False, "missing command: give \"type\", e.g. {\"type\": \"get_state\"}")
            return True
        handler = self.handlers.get(name)
        if handler is None:
            self.respond(name, cid, False, f"unknown command {name!r}; known: {', '.join(self.handlers)}")
            return True
        try:
            extra = handler(cmd) or {}
        except CommandError as exc:
            self.respond(name, cid, False, str(exc))
            return True
        self.respond(name, cid, True, **extra)
        return name != "quit"

    # ---- commands ------------------------------------------------------------------------
    def prompt(self, cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        text = _text(cmd)
        agent = self.runtime.agent
        lane = cmd.get("as")
        if lane not in (None, "steer", "follow_up"):
            raise CommandError("'as' must be \"steer\" or \"follow_up\"")
        if agent.running:
            if lane is None:
                raise CommandError("a run is in progress: send it with \"as\": \"steer\" or \"follow_up\", "
                                   "or abort first")
            agent.inbox.push(lane, text)
            return {"queued": lane}
        if not agent.prompt(text):
            raise CommandError("a run is starting: send it with \"as\": \"steer\" or \"follow_up\"")
        return None

    def lane(self, cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        lane = cmd.get("type", cmd.get("command"))
        self.runtime.agent.inbox.push(lane, _text(cmd))
        return None

    def abort(self, cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        clear = cmd.get("clear_queue", False)
        if not isinstance(clear, bool):
            raise CommandError("'clear_queue' must be true or false")
        return {"aborted": self.runtime.agent.abort(clear_queue=clear)}

    def pause(self, _cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        return {"changed": self.runtime.gate.pause()}

    def resume(self, _cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        seconds = self.runtime.gate.resume()
        return {"changed": seconds is not None}

    def require_tool(self, cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        tool = _text(cmd, "tool")
        reason = cmd.get("reason", "")
        if not isinstance(reason, str):
            raise CommandError("'reason' must be a string")
        if tool not in self.runtime.tool_names():
            raise CommandError(f"unknown tool {tool!r}; tools: {', '.join(self.runtime.tool_names())}")
        self.runtime.require(tool, reason)
        return None

    def clear_requirement(self, _cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        self.runtime.requirement.clear()
        return None

    def approve(self, cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        call_id = _text(cmd, "call_id")
        decision = cmd.get("decision")
        if decision not in ("allow", "deny", "always"):
            raise CommandError("'decision' must be \"allow\", \"deny\" or \"always\"")
        if not self.runtime.approvals.answer(call_id, decision):
            raise CommandError(f"no approval request {call_id!r} is waiting")
        return None

    def get_state(self, _cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        return self.runtime.state()

    def quit(self, _cmd: Mapping[str, Any]) -> dict[str, Any] | None:
        self.runtime.agent.abort()
        return None


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


async def serve(runtime: Runtime, lines: ObjectReceiveStream[str | None], out: JsonLines) -> int:
    """Serve until ``quit`` or end of input; the caller owns the runtime's context."""
    server = RpcServer(runtime, out.write)
    runtime.emitter.subscribe(lambda ev: out.write(ev.wire()))
    async for line in lines:
        if line is None or not server.handle(line):
            break
    return 0


async def rpc_main(options: Options, *, model: Model | None = None, env: Mapping[str, str] | None = None,
                   stdin_fd: int | None = None, stdout: BinaryIO | None = None) -> int:
    runtime = build_runtime(options, model=model, env=env)
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
            code = await serve(runtime, receive, out)
    send.close()
    return code


def run_rpc(options: Options) -> int:
    return anyio.run(rpc_main, options)
