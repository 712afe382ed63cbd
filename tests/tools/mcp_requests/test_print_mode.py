"""Print mode (``owltui -p``, the real process) with the README's ``[mcp] elicitation`` setting and
without it, against a server of the official SDK: a form is declined when nobody can answer, and
accepted with its defaults under ``accept-defaults``; sampling is refused with OwlTUI's reason and
not advertised; elicitation (form, url) and roots are."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, openai_args, run_cli

SERVER = Path(__file__).with_name("asking_server.py")
README_CONFIG = '[mcp]\nelicitation = "accept-defaults"   # "ask" (default) | "decline" | "accept-defaults"\n'
ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_shows_this_config() -> None:
    assert README_CONFIG in (ROOT / "README.md").read_text()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


def run(tmp_path: Path, fake: FakeOpenAI, config: str | None) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"asking": {"command": sys.executable, "args": [str(SERVER)]}}}))
    if config is not None:
        (tmp_path / "config" / "owltui").mkdir(parents=True)
        (tmp_path / "config" / "owltui" / "config.toml").write_text(config)
    calls = [("mcp__asking__ask", {}), ("mcp__asking__sample", {}), ("mcp__asking__capabilities", {})]
    fake.add(Turn(calls=calls), Turn(text="done"))
    args = ["-p", "go", "--yes", "--mcp-config", str(mcp), "--no-session", *openai_args(fake.url)]
    done = run_cli(args, cli_env(tmp_path), ws, timeout=90)
    assert done.returncode == 0, done.stderr
    messages: list[dict[str, Any]] = fake.requests[-1]["messages"]
    return {m["tool_call_id"]: str(m["content"]) for m in messages if m.get("role") == "tool"}


def by_tool(results: dict[str, str], fake: FakeOpenAI) -> dict[str, str]:
    names = {}
    for m in fake.requests[-1]["messages"]:
        for call in m.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"].split("__")[-1]
    return {names[k]: v for k, v in results.items()}


def test_print_mode_declines_without_the_setting(tmp_path: Path, fake: FakeOpenAI) -> None:
    got = by_tool(run(tmp_path, fake, None), fake)
    assert json.loads(got["ask"]) == {"action": "decline", "content": None}
    assert got["sample"].endswith("OwlTUI does not let MCP servers sample the model")
    caps = json.loads(got["capabilities"])
    assert "sampling" not in caps and caps["roots"] == {"listChanged": True}
    assert set(caps["elicitation"]) == {"form", "url"}


def test_accept_defaults_from_the_readme_config(tmp_path: Path, fake: FakeOpenAI) -> None:
    got = by_tool(run(tmp_path, fake, README_CONFIG), fake)
    answer = json.loads(got["ask"])
    assert answer == {
        "action": "accept",
        "content": {"name": "John Doe", "age": 30, "status": "active", "verified": True},
    }
