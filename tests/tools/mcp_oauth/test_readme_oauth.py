"""The README's OAuth examples: every ``mcpServers`` JSON block of the OAuth section parses into an HTTP server with
the settings the table describes, and the lines it quotes are the ones the code writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from owltui.tools.mcp.auth.provider import login_line
from owltui.tools.mcp.auth.settings import OAuthSettings
from owltui.tools.mcp.config import parse_servers

ROOT = Path(__file__).resolve().parents[3]


def _section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.find("### Logging in to hosted MCP servers (OAuth)")
    assert start >= 0, "the README has no OAuth section"
    end = readme.find("\n#", start + 10)
    return readme[start : end if end > 0 else None]


def test_the_readme_oauth_examples_parse_as_documented(tmp_path: Path) -> None:
    text = _section()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, flags=re.S)]
    assert len(blocks) == 2
    notices: list[str] = []
    env = {"INTERNAL_SECRET": "s3cret"}
    (linear,) = parse_servers(blocks[0], "README", tmp_path, env, notices)
    (internal,) = parse_servers(blocks[1], "README", tmp_path, env, notices)
    assert notices == []
    assert linear.transport == "http" and linear.oauth is not None and linear.oauth.enabled
    oauth = internal.oauth
    assert oauth is not None
    assert (oauth.client_id, oauth.client_secret, oauth.scope, oauth.redirect_port) == (
        "owltui-cli",
        "s3cret",
        "read write",
        8976,
    )
    assert login_line("linear") in text
    assert login_line("NAME", again=True).split("' ", 1)[1] in text


def test_the_readme_lists_every_oauth_key() -> None:
    table = "\n".join(line for line in _section().splitlines() if line.startswith("| `"))
    missing = [k for k in OAuthSettings.model_fields if k != "enabled" and f"`{k}`" not in table]
    assert missing == []
