"""The per-call MCP timeout through the real CLI: ``owltui -p`` with a scripted model (a loopback
server speaking Chat Completions) that calls a tool which never answers ends at the server's
``tool_timeout`` with a result naming the server, the tool and the limit, and the server sees the
call cancelled; a tool that reports progress past the limit still completes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, run_cli

SERVER = Path(__file__).resolve().parents[1] / "tools" / "mcp_lifecycle" / "lifecycle_server.py"


def _config(workspace: Path, **extra: object) -> None:
    entry = {"command": sys.executable, "args": [str(SERVER)], **extra}
    (workspace / "servers.json").write_text(json.dumps({"mcpServers": {"life": entry}}))


def _tool_result(fake: FakeOpenAI) -> str:
    (result,) = [m for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    return str(result["content"])


def test_a_hanging_tool_ends_at_the_timeout_in_print_mode(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    _config(workspace, tool_timeout=1, env={"MCP_TEST_MARKER": str(marker)})
    fake.add(Turn(calls=[("mcp__life__hang", {})]), Turn(text="It timed out."))
    start = time.monotonic()
    r = run_cli(
        ["-p", "call hang", "--yes", "--mcp-config", "servers.json", *openai_args(fake.url)],
        env,
        workspace,
        timeout=60,
    )
    took = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "It timed out."
    text = _tool_result(fake)
    assert "The MCP server 'life' did not answer the tool hang within 1 s" in text
    assert "cancelled on the server" in text and "tool_timeout" in text
    assert took < 30  # not the 60 s default, nor forever
    assert marker.read_text() == "cancelled\n"  # notifications/cancelled reached the server
    assert "Traceback" not in r.stderr


def test_a_tool_reporting_progress_past_the_limit_completes_in_print_mode(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    _config(workspace, tool_timeout_sec=1)
    fake.add(Turn(calls=[("mcp__life__ticking", {"seconds": 3, "every": 0.25})]), Turn(text="Done."))
    r = run_cli(
        ["-p", "tick", "--yes", "--mcp-config", "servers.json", *openai_args(fake.url)],
        env,
        workspace,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Done."
    assert _tool_result(fake) == "ticked"
