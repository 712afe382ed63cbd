"""The client program the conformance suite runs: ``python -m tests.mcp_conformance.adapter URL``.

It writes an ``--mcp-config`` file naming the scenario's server (``URL``, the suite's last
argument) in a fresh temporary workspace, starts a scripted model that calls every MCP tool it
is offered, and runs the real ``owltui -p`` against both; it exits with owltui's status. The
scenario's name and context come from ``MCP_CONFORMANCE_SCENARIO`` / ``MCP_CONFORMANCE_CONTEXT``.
With no user in print mode, elicitation forms are accepted with their schema's defaults (the user
config's ``[mcp] elicitation``), OAuth scenarios log in through a ``$BROWSER`` script that follows
the authorization redirects, and pre-registered or client-credentials clients get their id and
secret from the context.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.mcp_conformance.scripted_model import ToolCallingModel

SERVER = "conformance"
NO_CALLS = "OWLTUI_CONFORMANCE_NO_TOOL_CALLS"  # "1": the model calls nothing (proves a test can fail)
BROWSER = """#!{python}
import sys, urllib.request
urllib.request.urlopen(sys.argv[1].replace("%s", ""), timeout=20).read()
"""
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
USER_CONFIG = """[mcp]
elicitation = "accept-defaults"  # no user in print mode: a form is answered with its schema's defaults
"""
SECRET_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL")
OWLTUI_VARS = ("OWLTUI_PROVIDER", "OWLTUI_MODEL", "OWLTUI_PERMISSION_MODE", "OWLTUI_MAX_ROUNDS")


def oauth_entry(scenario: str, context: dict[str, Any]) -> dict[str, Any] | None:
    """The server entry's ``oauth`` table for a scenario: a client-credentials grant, the
    enterprise-managed ``identity_assertion`` grant (the IdP's ID token and endpoint) or a
    pre-registered client from its context; otherwise (any ``auth/`` scenario) the client metadata
    document URL the suite's servers know, used when a server supports those documents."""
    creds = {k: v for k, v in context.items() if k != "name" and isinstance(v, str)}
    if scenario.startswith("auth/client-credentials"):
        return {"grant": "client_credentials", **creds}
    if scenario.startswith("auth/cross-app-access"):
        keys = ("idp_client_id", "idp_id_token", "idp_token_endpoint", "client_id", "client_secret")
        return {"grant": "identity_assertion", **{k: creds[k] for k in keys if k in creds}}
    if "client_id" in creds:
        return {k: creds[k] for k in ("client_id", "client_secret") if k in creds}
    if scenario.startswith("auth/"):
        return {"client_metadata_url": CLIENT_METADATA_URL}
    return None


def server_entry(url: str, scenario: str, context: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "http", "url": url, "timeout": 25}
    oauth = oauth_entry(scenario, context)
    if oauth is not None:
        entry["oauth"] = oauth
    return entry


def environment(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SECRET_VARS + OWLTUI_VARS}
    browser = tmp / "browser"
    browser.write_text(BROWSER.format(python=sys.executable))
    browser.chmod(0o755)
    config = tmp / "config" / "owltui"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(USER_CONFIG)
    env.update(
        HOME=str(tmp),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_DATA_HOME=str(tmp / "data"),
        OPENAI_API_KEY="test",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
        BROWSER=str(browser),
        OWLTUI_MCP_AUTO_LOGIN="1",
        OWLTUI_MCP_KEYRING="0",
    )
    return env


def run(url: str, scenario: str, context: dict[str, Any]) -> int:
    with tempfile.TemporaryDirectory(prefix="owltui-conformance-") as raw:
        tmp = Path(raw)
        workspace = tmp / "ws"
        workspace.mkdir()
        config = tmp / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {SERVER: server_entry(url, scenario, context)}}))
        model = ToolCallingModel(call_tools=os.environ.get(NO_CALLS) != "1")
        try:
            argv = [sys.executable, "-m", "owltui.cli", "-p", "Call every MCP tool you have.", "--yes"]
            argv += ["--mcp-config", str(config), "--no-session"]
            argv += ["--provider", "openai", "--model", "fake-model", "--base-url", model.url]
            done = subprocess.run(argv, env=environment(tmp), cwd=workspace, capture_output=True, text=True)
        finally:
            model.close()
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        sys.stderr.write(f"[adapter] scenario={scenario} tools called: {model.called}\n")
        return done.returncode


def main(argv: list[str]) -> int:
    if len(argv) < 1:
        sys.stderr.write("usage: python -m tests.mcp_conformance.adapter SERVER_URL\n")
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return run(argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), context)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
