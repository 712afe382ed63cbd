"""The real ``owltui --acp`` process: every byte on stdout is JSON-RPC, with a broken config file, a
warning at start and an MCP server that fails to start; descriptor 1 itself goes to stderr (a child
process or a C extension writing to it cannot reach the protocol stream); usage errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.modes.acp.harness import env_for

OWLTUI = str(Path(sys.executable).parent / "owltui")


class Raw:
    """A JSON-RPC client on the process's pipes that keeps every stdout line as it came."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.lines: list[bytes] = []
        self.buf = b""
        self.next_id = 0

    async def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        await self.proc.stdin.send(json.dumps(msg).encode() + b"\n")
        return self.next_id

    async def line(self) -> dict[str, Any] | None:
        while b"\n" not in self.buf:
            try:
                data = await self.proc.stdout.receive()
            except anyio.EndOfStream:
                return None
            self.buf += data
        raw, self.buf = self.buf.split(b"\n", 1)
        self.lines.append(raw)
        msg: dict[str, Any] = json.loads(raw)  # not JSON: the test fails here
        assert msg.get("jsonrpc") == "2.0"
        return msg

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid = await self.send(method, params)
        while True:
            msg = await self.line()
            assert msg is not None, f"stdout ended before the answer to {method}"
            if msg.get("id") == rid and "method" not in msg:
                return msg
            if "method" in msg and "id" in msg:  # a request of the agent: decline it
                answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": {"outcome": "cancelled"}}}
                await self.proc.stdin.send(json.dumps(answer).encode() + b"\n")

    async def finish(self) -> bytes:
        await self.proc.stdin.aclose()
        while await self.line() is not None:
            pass
        assert self.buf == b""  # nothing after the last newline either
        await self.proc.wait()
        err = b""
        async for chunk in self.proc.stderr:
            err += chunk
        return err


def _env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, **env_for(tmp_path)}
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return env


@pytest.mark.anyio
async def test_stdout_is_only_json_rpc(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".owltui" / "commands").mkdir(parents=True)
    (ws / ".owltui" / "commands" / "help.md").write_text("named like a built-in\n")  # a warning
    cfg = tmp_path / "cfg" / "owltui"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text("bogus = [\n")  # not TOML
    env = _env(tmp_path)
    argv = [OWLTUI, "--acp", "--provider", "demo", "--yes"]
    async with await anyio.open_process(argv, cwd=ws, env=env) as proc:
        raw = Raw(proc)
        with anyio.fail_after(60):
            init = await raw.call("initialize", {"protocolVersion": 1})
            assert init["result"]["protocolVersion"] == 1
            bad = await raw.call("session/new", {"cwd": str(ws), "mcpServers": []})
            assert "config.toml" in json.dumps(bad["error"])  # told to the client, in one sentence
            await raw.finish()
    assert proc.returncode == 0 and raw.lines

    (cfg / "config.toml").write_text("")
    broken = {"name": "broken", "command": str(tmp_path / "no-such-server"), "args": [], "env": []}
    async with await anyio.open_process(argv, cwd=ws, env=env) as proc:
        raw = Raw(proc)
        with anyio.fail_after(60):
            await raw.call("initialize", {"protocolVersion": 1})
            new = await raw.call("session/new", {"cwd": str(ws), "mcpServers": [broken]})
            sid = new["result"]["sessionId"]
            done = await raw.call(
                "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}
            )
            assert done["result"]["stopReason"] == "end_turn"
            err = await raw.finish()
    assert proc.returncode == 0
    assert b"broken" in err and b"help" in err  # the failed server and the warning went to stderr
    assert any(b"session/update" in line for line in raw.lines)


def test_descriptor_one_goes_to_stderr() -> None:
    code = (
        "import os, subprocess, sys\n"
        "from owltui.modes.acp.main import protect_stdout\n"
        "fd_in, fd_out = protect_stdout()\n"
        "print('printed'); sys.stdout.flush()\n"
        "os.write(1, b'raw-fd-one\\n')\n"
        "subprocess.run(['sh', '-c', 'echo from-a-child; cat'], check=True)\n"
        'os.write(fd_out, b\'{"jsonrpc": "2.0"}\\n\')\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=b"never read by the child\n", capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b'{"jsonrpc": "2.0"}\n'
    for text in (b"printed", b"raw-fd-one", b"from-a-child"):
        assert text in done.stderr
    assert b"never read" not in done.stderr  # stdin is not a child's either


@pytest.mark.parametrize("flag", [["-c"], ["--resume", "abc"], ["--no-session"], ["a prompt"]])
def test_usage_errors(flag: list[str], tmp_path: Path) -> None:
    done = subprocess.run([OWLTUI, "--acp", *flag], capture_output=True, timeout=60, env=_env(tmp_path))
    assert done.returncode == 2 and done.stdout == b""
    assert b"--acp" in done.stderr
