"""Print mode, the real CLI against server-everything and the fake OpenAI server: ``-p`` with an MCP
prompt command sends the prompt's messages (its embedded resource inlined); ``-p`` with an
``@everything:uri`` mention sends the resource with the prompt; a required argument left out is one
line and exit code 1, nothing sent. These are the README's examples (its MCP resources section)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, openai_args, run_cli
from tests.cli.test_rpc_rewind_queue import _users
from tests.tools.mcp_resources.helpers import mcp_file

DOC = "demo://resource/static/document/features.md"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()


def cli(tmp_path: Path, fake: FakeOpenAI, prompt: str) -> tuple[int, str, str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    args = ["-p", prompt, "--yes", "--mcp-config", str(mcp_file(tmp_path)), *openai_args(fake.url)]
    r = run_cli(args, cli_env(tmp_path), ws, timeout=120)
    return r.returncode, r.stdout, r.stderr


def test_a_prompt_command_in_print_mode(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.add(Turn(text="analysed"))
    code, out, err = cli(tmp_path, fake, "/mcp__everything__resource-prompt Text 2")
    assert code == 0, err
    assert out.strip() == "analysed"
    (user,) = _users(fake.requests[0])
    assert user.startswith("This prompt includes the Text resource with id: 2.")
    assert '<resource uri="demo://resource/dynamic/text/2" mimeType="text/plain">' in user


def test_a_resource_mention_in_print_mode(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.add(Turn(text="summarised"))
    code, out, err = cli(tmp_path, fake, f"summarise @everything:{DOC}")
    assert code == 0, err
    assert f"attached @everything:{DOC}" in err
    (user,) = _users(fake.requests[0])
    assert user.startswith(f'summarise @everything:{DOC}\n\n<resource uri="{DOC}" mimeType="text/markdown">')


def test_a_missing_required_argument_is_one_line(tmp_path: Path, fake: FakeOpenAI) -> None:
    code, _out, err = cli(tmp_path, fake, "/mcp__everything__args-prompt")
    assert code == 1
    assert "owltui: /mcp__everything__args-prompt: missing required argument: city" in err
    assert fake.requests == []
