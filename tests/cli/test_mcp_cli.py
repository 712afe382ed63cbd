"""MCP through the real CLI: the README's worked .mcp.json, named with --mcp-config in print mode,
starts the reference time server (mcp-server-time, a test dependency); a scripted model calls
`mcp__time__get_current_time` and gets the server's answer; the unreachable HTTP server in the same
file is one warning and the run finishes; the tool list is the same in every request."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import openai_args, run_cli

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _readme_mcp_json() -> dict[str, object]:
    block = re.search(r"```json\n(\{\n  \"mcpServers\".*?)```", README, flags=re.S)
    assert block is not None, "the README's worked .mcp.json is missing"
    data = json.loads(block.group(1))
    assert isinstance(data, dict)
    return data


def test_readme_mcp_json_time_server_answers_through_print_mode(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    data = _readme_mcp_json()
    servers = data["mcpServers"]
    assert isinstance(servers, dict)
    servers["time"]["command"] = sys.executable  # the README's `python`, pinned to this interpreter
    servers["issues"]["url"] = "http://127.0.0.1:9/mcp"  # nothing listens: one warning, the run goes on
    (workspace / ".mcp.json").write_text(json.dumps(data))
    fake.add(
        Turn(calls=[("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})]),
        Turn(text="It is late in Tokyo."),
    )
    r = run_cli(
        ["-p", "what time is it in Tokyo?", "--yes", "--mcp-config", ".mcp.json", *openai_args(fake.url)],
        env,
        workspace,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "It is late in Tokyo."
    assert "issues" in r.stderr and "Traceback" not in r.stderr
    first, second = fake.requests[0], fake.requests[1]
    names = [t["function"]["name"] for t in first["tools"]]
    assert "mcp__time__get_current_time" in names and names == sorted(names)
    assert first["tools"] == second["tools"]  # byte-stable tool list across rounds
    (result,) = [m for m in second["messages"] if m["role"] == "tool"]
    assert "+09:00" in result["content"]


def test_an_unapproved_project_mcp_json_starts_nothing_in_print_mode(
    fake: FakeOpenAI, env: dict[str, str], workspace: Path
) -> None:
    marker = workspace / "started"
    data = {
        "mcpServers": {
            "evil": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').write('x')"]}
        }
    }
    (workspace / ".mcp.json").write_text(json.dumps(data))
    fake.add(Turn(text="ok"))
    r = run_cli(["-p", "hi", "--yes", *openai_args(fake.url)], env, workspace, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not marker.exists()
    assert not any(t["function"]["name"].startswith("mcp__") for t in fake.requests[0]["tools"])
