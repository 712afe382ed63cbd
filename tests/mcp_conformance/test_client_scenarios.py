"""Every client scenario of the official MCP conformance suite (@modelcontextprotocol/conformance,
pinned in ``.ci/node-tools``) against the real ``owltui -p``: one test per scenario, passing only
when the suite's verdict is a pass (no failed or warning check, the client exited 0).

The scenario list is pinned here so the ids are stable and collectable without node; a test
checks it still equals ``conformance list --client``. A scenario whose feature is missing fails.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp_conformance.adapter import NO_CALLS
from tests.mcp_conformance.suite import ROOT, client_scenarios, run_scenario
from tests.tools.mcp_node import node_tools_dir, require_node_tools

SCENARIOS = [
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
]


def test_the_pinned_scenario_list_is_the_suites() -> None:
    require_node_tools()
    assert client_scenarios() == SCENARIOS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=SCENARIOS)
def test_client_scenario(scenario: str) -> None:
    require_node_tools()
    verdict = run_scenario(scenario)
    assert verdict.passed, verdict.report()


def test_a_client_that_calls_no_tool_fails_tools_call() -> None:
    """The verdict is read, not assumed: the same adapter whose model calls nothing fails."""
    require_node_tools()
    verdict = run_scenario("tools_call", extra_env={NO_CALLS: "1"})
    assert not verdict.passed
    assert any(c.get("id") == "tool-add-numbers" for c in verdict.bad), verdict.report()


BY_HAND = (
    "PATH=~/.cache/owltui-ci/node-tools/node_modules/.bin:$PATH conformance client --scenario tools_call"
    ' --command "python -m tests.mcp_conformance.adapter"'
)


def test_the_readme_by_hand_command_passes_tools_call() -> None:
    """The README's one-scenario command, run literally by bash (``python`` is this interpreter,
    ``~/.cache/owltui-ci/node-tools`` is ``$OWLTUI_NODE_TOOLS``)."""
    require_node_tools()
    readme = (ROOT / "README.md").read_text()
    assert BY_HAND in readme
    command = BY_HAND.replace("~/.cache/owltui-ci/node-tools", shlex.quote(str(node_tools_dir())))
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OVERALL: PASSED" in done.stdout + done.stderr
