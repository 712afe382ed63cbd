"""OAuth through the real CLI in print mode: without a login the server is the one line naming
``/mcp login`` and the run goes on; with ``oauth.auto_login`` the login runs through ``$BROWSER``
(the stand-in) and a scripted model's call reaches the server. The access and refresh tokens then
appear nowhere but the token store: not in stdout, stderr, the session JSONL or any other file
under the data, config and workspace directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.fake_openai import FakeOpenAI, Turn
from tests.cli.helpers import cli_env, openai_args, run_cli, session_files
from tests.tools.mcp_oauth.conftest import AuthServer


def _config(ws: Path, url: str, **oauth: Any) -> None:
    entry: dict[str, Any] = {"type": "http", "url": url}
    if oauth:
        entry["oauth"] = oauth
    (ws / "mcp.json").write_text(json.dumps({"mcpServers": {"hosted": entry}}))


def _run(fake: FakeOpenAI, ws: Path, env: dict[str, str]) -> Any:
    args = ["-p", "echo hi", "--yes", "--mcp-config", "mcp.json", *openai_args(fake.url)]
    return run_cli(args, env, ws, timeout=120)


def test_print_mode_without_a_login_says_to_log_in_and_goes_on(
    auth_server: AuthServer, tmp_path: Path, browser: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = cli_env(tmp_path, BROWSER=browser, OWLTUI_MCP_KEYRING="0")
    _config(ws, auth_server.url)
    fake = FakeOpenAI()
    try:
        fake.add(Turn(text="no tools today"))
        r = _run(fake, ws, env)
    finally:
        fake.close()
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        "owltui: warning: MCP server 'hosted' needs login: run /mcp login hosted"
    ]
    assert "Traceback" not in r.stderr
    assert auth_server.admin("stats")["authorize"] == 0  # no browser was sent anywhere


def test_print_mode_auto_login_calls_the_tool_and_no_token_leaks(
    auth_server: AuthServer, tmp_path: Path, browser: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = cli_env(tmp_path, BROWSER=browser, OWLTUI_MCP_KEYRING="0")
    _config(ws, auth_server.url, auto_login=True)
    fake = FakeOpenAI()
    try:
        fake.add(Turn(calls=[("mcp__hosted__echo", {"text": "through oauth"})]), Turn(text="done"))
        r = _run(fake, ws, env)
        requests = json.dumps(fake.requests)
    finally:
        fake.close()
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done"
    assert "echo: through oauth" in requests
    assert "MCP server 'hosted': log in at http://127.0.0.1:" in r.stderr

    store = tmp_path / "data" / "owltui" / "mcp-oauth.json"
    entry = json.loads(store.read_text())["servers"][auth_server.url]
    secrets = [entry["tokens"]["access_token"], entry["tokens"]["refresh_token"]]
    assert all(s.startswith(("at-", "rt-")) for s in secrets)
    sessions = session_files(ws, env)
    assert sessions, "the run wrote no session file"
    for secret in secrets:
        assert secret not in r.stdout and secret not in r.stderr
        assert secret not in requests  # nor in what the model saw
        for path in [*tmp_path.rglob("*")]:
            if path.is_file() and path != store:
                assert secret.encode() not in path.read_bytes(), f"a token is in {path}"
