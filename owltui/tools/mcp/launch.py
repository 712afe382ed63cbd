"""Where and how a stdio MCP server starts (``Launch``): never from a place the model can write.

- **Working directory**: the entry's ``cwd`` when it names one (relative to the workspace), else a
  neutral empty directory (``<data dir>/mcp-cwd`` in a session; a fresh temporary one otherwise), so
  ``python -m NAME``, ``npx`` and ``uv run`` do not pick up a package, ``node_modules`` or project
  file planted in the workspace.
- **Environment**: the entry's ``ServerSpec.process_env`` (a few inherited variables, no
  ``PYTHONPATH``/``NODE_PATH``, ``PYTHONSAFEPATH=1``).
- **Sandbox**: a server a workspace file defines (``ServerSpec.confined``: the workspace's
  ``.mcp.json``, or any ``--mcp-config`` file inside the workspace) runs under the same kernel sandbox
  as commands, with the network allowed: whatever the model wrote that such a server runs can do no
  more than a command the model runs. Servers of the user's own configuration run as the user.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from owltui.agent.services import Sandbox
from owltui.tools.mcp.config import ServerSpec

RUN_DIR = "mcp-cwd"  # under OwlTUI's data directory


@dataclass
class Started:
    """What the transport needs to start one server."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    preexec: Callable[[], None] | None


def neutral_dir(data_dir: Path | None) -> Path:
    """An empty directory the model cannot write: ``<data dir>/mcp-cwd``, else a fresh temporary one."""
    if data_dir is not None:
        path = data_dir / RUN_DIR
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
            return path
        except OSError:
            pass
    return Path(tempfile.mkdtemp(prefix="owltui-mcp-cwd-"))


@dataclass
class Launch:
    """How the servers of one session start. ``sandbox``: the policy confined servers run under
    (None: a default workspace-write policy with the network allowed, made when first needed)."""

    workspace: Path
    run_dir: Path | None = None
    sandbox: Sandbox | None = None
    _default_sandbox: Sandbox | None = field(default=None, repr=False)

    def cwd_for(self, spec: ServerSpec) -> Path:
        if spec.cwd is not None:
            return spec.cwd
        if self.run_dir is None:
            self.run_dir = neutral_dir(None)
        return self.run_dir

    def sandbox_for(self, spec: ServerSpec) -> Sandbox | None:
        """The sandbox a server runs under (None: it runs as the user)."""
        if not spec.confined:
            return None
        if self.sandbox is not None:
            return self.sandbox
        if self._default_sandbox is None:
            from owltui.policy.sandbox.kernel import SandboxPolicy

            self._default_sandbox = SandboxPolicy("workspace-write", self.workspace, network=True)
        return self._default_sandbox

    def start(self, spec: ServerSpec, base_env: Mapping[str, str]) -> Started:
        cwd = self.cwd_for(spec)
        sandbox = self.sandbox_for(spec)
        preexec = sandbox.preexec(cwd) if sandbox is not None and sandbox.enforced else None
        command = spec.command
        if os.sep in command and not os.path.isabs(command):  # ./tools/mcp.sh: in the workspace
            command = os.path.normpath(os.path.join(spec.cwd or self.workspace, command))
        return Started([command, *spec.args], spec.process_env(base_env), cwd, preexec)
