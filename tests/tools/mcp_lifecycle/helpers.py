"""What the life-cycle tests share: the lifecycle server's entry, a started source, a tool context,
an agent wired the way the runtime wires MCP (the tools taken once ready, later changes followed at
turn boundaries)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from owltui.agent.agent import Agent
from owltui.agent.cancel import CancelToken
from owltui.agent.pause import PauseGate
from owltui.agent.results import ResultStore
from owltui.agent.services import Services
from owltui.agent.tool import ToolContext, ToolOutput
from owltui.features.chat import chat_config
from owltui.policy.permissions.policy import PermissionPolicy
from owltui.session.runtime.sources import StaticSource, ToolSource, collect_tools, follow_mcp
from owltui.testing.scripted import ScriptedModel
from owltui.tools.mcp.config import ServerSpec
from owltui.tools.mcp.selection import load_mcp_servers
from owltui.tools.mcp.source import McpSource
from owltui.tools.registry import builtin_tools

SERVER = [sys.executable, str(Path(__file__).with_name("lifecycle_server.py"))]


def entry(**extra: Any) -> dict[str, Any]:
    return {"command": SERVER[0], "args": SERVER[1:], **extra}


def specs(ws: Path, servers: dict[str, Any], env: dict[str, str] | None = None) -> list[ServerSpec]:
    """The servers of a file named on the command line (approved by being named)."""
    path = ws / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    found, notices = load_mcp_servers(ws, {}, path, None, env or dict(os.environ))
    assert notices == []
    return found


@asynccontextmanager
async def running(
    servers: Sequence[ServerSpec], ws: Path, **options: Any
) -> AsyncIterator[tuple[McpSource, list[str]]]:
    """A started, ready source and the warnings it gave."""
    warnings: list[str] = []
    src = McpSource(servers, workspace=ws, warn=warnings.append, **options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(src.start)
        try:
            assert await src.wait_ready()
            yield src, warnings
        finally:
            with anyio.fail_after(10):
                await src.aclose()
            tg.cancel_scope.cancel()


class Refusing:
    """An image service for a model that takes no images."""

    def image_refusal(self) -> str | None:
        return "this model cannot see images (model text-only)"


def ctx(ws: Path, progress: list[str] | None = None, images: Any = None) -> ToolContext:
    c = ToolContext(workspace=ws, cancel=CancelToken(), services=Services(images=images))
    if progress is not None:
        c.progress = progress.append
    return c


async def call(src: McpSource, name: str, args: dict[str, Any], ws: Path, **kw: Any) -> ToolOutput:
    (tool,) = [t for t in src.tools() if t.name == name]
    out = await tool.run(tool.params.model_validate(args), ctx(ws, **kw))
    assert isinstance(out, ToolOutput)
    return out


async def session(ws: Path, model: ScriptedModel, src: McpSource) -> Agent:
    """An agent whose tools are taken once the source is ready, then follow it at turn boundaries
    (``follow_mcp``, as ``Runtime.fix_tools`` does)."""
    sources: list[ToolSource] = [StaticSource("builtin", builtin_tools()), src]
    policy = PermissionPolicy(ws, "yolo", None)
    cfg = chat_config(model, [], workspace=ws, permission=policy.check, results=ResultStore(ws / ".results"))
    agent = Agent(cfg, gate=PauseGate())
    assert await src.wait_ready()
    follow_mcp(agent, src, sources)
    cfg.set_tools(collect_tools(sources))
    return agent
