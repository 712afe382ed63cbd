"""``Options``: what the command line chose for a runtime (``build_runtime``). A module of its own so
that the CLI and the TUI's first frame can make one without importing the runtime."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Options:
    """What the command line chose; ``None`` means "use the config file / environment"."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    yes: bool = False
    max_rounds: int | None = None
    continue_session: bool = False
    resume: str | None = None
    no_session: bool = False
    workspace: Path = field(default_factory=Path.cwd)
    interactive: bool = True  # False for print mode: nobody can approve
    permission_mode: str | None = None
    sandbox: str | None = None  # --sandbox: workspace-write | read-only | off
    mcp_config: Path | None = None  # --mcp-config FILE: MCP servers (.mcp.json format), approved
    context_window: int | None = None  # --context-window N: the model's window, over the catalog's
