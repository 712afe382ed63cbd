"""server-everything located through the CI node-tools directory, its ``mcpServers`` entry over
stdio or Streamable HTTP, an ``.mcp.json`` for it, and a runtime built the way front ends build it."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from owltui.session.runtime.build import build_runtime
from owltui.session.runtime.options import Options
from owltui.session.runtime.runtime import Runtime
from owltui.testing.scripted import ScriptedModel
from tests.tools.mcp_node import everything_http

ENTRY = Path("node_modules/@modelcontextprotocol/server-everything/dist/index.js")


def everything_argv() -> list[str]:
    """``node …/server-everything/dist/index.js stdio``; skips (fails when CI requires it) when the
    node tools are not installed."""
    base = Path(os.environ.get("OWLTUI_NODE_TOOLS") or Path.home() / ".cache/owltui-ci/node-tools")
    node, entry = base / "node_modules/.bin/node", base / ENTRY
    if not (node.exists() and entry.is_file()):
        why = f"server-everything is not installed under {base} (OWLTUI_NODE_TOOLS)"
        if os.environ.get("OWLTUI_REQUIRE_NODE_TOOLS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return [str(node), str(entry), "stdio"]


TRANSPORTS = ["stdio", "http"]


def everything_over(transport: str) -> Iterator[dict[str, Any]]:
    """The ``mcpServers`` mapping naming server-everything ``everything`` over ``transport``; for
    ``http`` one server on a free port, alive until the generator is closed."""
    if transport == "stdio":
        argv = everything_argv()
        yield {"everything": {"command": argv[0], "args": argv[1:]}}
        return
    with everything_http() as url:
        yield {"everything": {"type": "http", "url": url}}


@pytest.fixture(scope="module", params=TRANSPORTS)
def everything(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """server-everything over each transport in turn, one HTTP server per test module (import this
    fixture into the module or its conftest)."""
    yield from everything_over(request.param)


def env_for(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PATH": "/usr/bin:/bin",
        "OPENAI_API_KEY": "sk-test",
    }


def mcp_file(tmp_path: Path, servers: dict[str, Any] | None = None) -> Path:
    if servers is None:
        argv = everything_argv()
        servers = {"everything": {"command": argv[0], "args": argv[1:]}}
    cfg = tmp_path / "mcp.json"
    cfg.write_text(json.dumps({"mcpServers": servers}))
    return cfg


def runtime(tmp_path: Path, model: ScriptedModel, servers: dict[str, Any] | None = None) -> Runtime:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    options = Options(workspace=ws, no_session=True, yes=True, mcp_config=mcp_file(tmp_path, servers))
    return build_runtime(options, model=model, env=env_for(tmp_path), warn=print)


async def ready(rt: Runtime) -> None:
    """The servers connected and the catalog's lists gathered."""
    from owltui.tools.mcp.catalog.index import catalog_of

    assert rt.mcp is not None
    await rt.mcp.wait_ready()
    states = {s.name: (s.spec.transport, s.state) for s in rt.mcp.servers}
    assert all(state == "connected" for _transport, state in states.values()), states
    await catalog_of(rt.mcp).gathered.wait()
