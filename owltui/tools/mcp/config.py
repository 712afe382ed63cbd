"""The MCP server entry format: ``mcpServers`` entries (``.mcp.json``, ``[mcp.servers.NAME]``)
parsed and expanded into ``ServerSpec``s, and the user config's ``[mcp]`` table (``McpSettings``).

The format is the ecosystem's (Claude Code, Cursor, ...)::

    {"mcpServers": {
        "time":   {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "issues": {"type": "http", "url": "https://mcp.example.com/mcp",
                   "headers": {"Authorization": "Bearer ${ISSUES_TOKEN}"}}}}

``${VAR}`` and ``${VAR:-default}`` are expanded from the environment in ``command``, ``args``,
``env``, ``url`` and ``headers``; an unset variable without a default is a notice naming it (and
the server) and expands to nothing. Optional per-server keys: ``cwd`` (relative to the workspace;
without it a stdio server starts in a neutral empty directory, see ``launch``), ``timeout``
(seconds to connect and list tools), ``tool_timeout`` or Codex's ``tool_timeout_sec`` (seconds a
call may go without an answer or a progress notification; default ``[mcp] tool_timeout``, 60 s),
``disabled``, and for an
HTTP server ``oauth`` (its login: ``auth.settings``; ``${VAR}`` expanded in it too).

Which files a session reads and in what order is ``selection``; which workspace files the user
approved is ``approvals``. Nothing here imports the MCP SDK (it costs about a second): this runs on
the start-up path.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from owltui.policy.permissions.mcp_names import server_key
from owltui.tools.mcp.auth.settings import OAuthSettings, parse_oauth

DEFAULT_STARTUP_TIMEOUT = 15.0
DEFAULT_TOOL_TIMEOUT = 60.0  # seconds a call may go silent (no answer, no progress): Codex's default
# what a stdio server inherits of OwlTUI's environment (the SDK's list plus locale, time zone,
# temp dir); everything else, API keys above all, only if its entry names it in "env"
INHERITED_ENV = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TMPDIR",
    "XDG_CACHE_HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_RUNTIME_DIR",
)
# set for every stdio server (its entry's "env" may override): Python does not put the working
# directory or the script's directory in front of sys.path, so "python -m NAME" cannot import a
# package of that name planted where it starts
SAFE_ENV = {"PYTHONSAFEPATH": "1"}
_KNOWN_KEYS = frozenset(
    {
        "type",
        "command",
        "args",
        "env",
        "cwd",
        "url",
        "headers",
        "timeout",
        "tool_timeout",
        "tool_timeout_sec",
        "disabled",
        "enabled",
        "description",
        "oauth",
    }
)
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(Exception):
    """A file named on the command line that cannot be used: one sentence naming it."""


class McpSettings(BaseModel):
    """The user config's ``[mcp]`` table (``Config.mcp``)::

    [mcp]
    trust_read_only_hints = false   # true: tools the server marks readOnlyHint run without asking
    startup_timeout = 15            # seconds each server has to start and list its tools
    tool_timeout = 60               # seconds a call may go without an answer or a progress notice
    elicitation = "ask"             # a server's question: "ask" | "decline" | "accept-defaults"
    [mcp.servers.time]
    command = "uvx"
    args = ["mcp-server-time"]
    """

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    trust_read_only_hints: bool = False
    startup_timeout: float = Field(default=DEFAULT_STARTUP_TIMEOUT, gt=0)
    tool_timeout: float = Field(default=DEFAULT_TOOL_TIMEOUT, gt=0)
    elicitation: Literal["ask", "decline", "accept-defaults"] = "ask"


@dataclass
class ServerSpec:
    """One server, expanded and checked. ``key`` is its name as it appears in tool names."""

    name: str
    key: str
    origin: str  # "user config", or the file it came from
    transport: Literal["stdio", "http"]
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # only the entry's own variables
    cwd: Path | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    startup_timeout: float | None = None  # None: the source's default
    tool_timeout: float | None = None
    shown: str = ""  # command and args, or the URL, as written (before ${VAR} expansion: no secrets)
    confined: bool = False  # defined by a file in the workspace: runs under the sandbox (``launch``)
    oauth: OAuthSettings | None = None  # an HTTP server's login settings (``auth.settings``)

    def describe(self) -> str:
        return self.shown or (" ".join([self.command, *self.args]) if self.transport == "stdio" else self.url)

    def process_env(self, base: Mapping[str, str]) -> dict[str, str]:
        """The stdio server's environment: the inherited few from ``base``, ``SAFE_ENV``, then its own
        ``env``."""
        env = {k: base[k] for k in INHERITED_ENV if k in base and not base[k].startswith("()")}
        env.update(SAFE_ENV)
        env.update(self.env)
        return env


# ---- expansion -----------------------------------------------------------------------------------
def expand(text: str, env: Mapping[str, str], missing: list[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` from ``env``; names of unset variables go to ``missing``."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is not None:
                return default
            missing.append(name)
            return ""
        return value

    return _VAR.sub(sub, text)


# ---- parsing ---------------------------------------------------------------------------------------
def _expanded(value: Any, env: Mapping[str, str], missing: list[str]) -> Any:
    """``value`` with ``${VAR}`` expanded in its strings (the ``oauth`` object's secrets)."""
    if isinstance(value, str):
        return expand(value, env, missing)
    if isinstance(value, dict):
        return {k: _expanded(v, env, missing) for k, v in value.items()}
    if isinstance(value, list):
        return [_expanded(v, env, missing) for v in value]
    return value


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise ValueError(f"{what} must be a list of strings")
    return [str(v) for v in value]


def _table(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str | int | float) for v in value.values()):
        raise ValueError(f"{what} must be an object of strings")
    return {str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items()}


def _seconds(value: Any, what: str) -> float | None:
    if value is None:
        return None
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{what} must be a positive number of seconds")
    return float(value)


def parse_server(
    name: str,
    raw: Any,
    origin: str,
    workspace: Path,
    env: Mapping[str, str],
    notices: list[str],
    confined: bool = False,
) -> ServerSpec | None:
    """One entry of ``mcpServers``; None (with a notice) when it cannot be used or is disabled.
    ``confined``: the entry comes from a file in the workspace (its server runs sandboxed)."""
    label = f"MCP server '{name}' ({origin})"
    if not isinstance(raw, dict):
        notices.append(f"{label} is not used: its entry must be an object")
        return None
    if raw.get("disabled") is True or raw.get("enabled") is False:
        return None
    unknown = sorted(set(raw) - _KNOWN_KEYS)
    if unknown:
        notices.append(f"{label}: ignoring unknown key(s) {', '.join(unknown)}")
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    missing: list[str] = []
    try:
        timeout = _seconds(raw.get("timeout"), "timeout")
        tool_timeout = _seconds(raw.get("tool_timeout"), "tool_timeout")
        if tool_timeout is None:
            tool_timeout = _seconds(raw.get("tool_timeout_sec"), "tool_timeout_sec")
        if kind == "stdio":
            command = raw.get("command")
            if not isinstance(command, str) or not command.strip():
                raise ValueError('a stdio server needs "command"')
            cwd_raw = raw.get("cwd")
            if cwd_raw is not None and not isinstance(cwd_raw, str):
                raise ValueError("cwd must be a string")
            spec = ServerSpec(
                name=name,
                key=server_key(name),
                origin=origin,
                transport="stdio",
                command=expand(command, env, missing),
                args=[expand(a, env, missing) for a in _strings(raw.get("args", []), "args")],
                env={k: expand(v, env, missing) for k, v in _table(raw.get("env", {}), "env").items()},
                cwd=(workspace / os.path.expanduser(cwd_raw)) if cwd_raw else None,
                startup_timeout=timeout,
                tool_timeout=tool_timeout,
                shown=" ".join([command, *_strings(raw.get("args", []), "args")]),
                confined=confined,
            )
        elif kind in _HTTP_TYPES:
            url = raw.get("url")
            if not isinstance(url, str) or not url.strip():
                raise ValueError('an http server needs "url"')
            shown = url
            url = expand(url, env, missing)
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"url must start with http:// or https:// (got {url[:40]!r})")
            spec = ServerSpec(
                name=name,
                key=server_key(name),
                origin=origin,
                transport="http",
                url=url,
                headers={
                    k: expand(v, env, missing) for k, v in _table(raw.get("headers", {}), "headers").items()
                },
                startup_timeout=timeout,
                tool_timeout=tool_timeout,
                shown=shown,
                oauth=parse_oauth(_expanded(raw.get("oauth"), env, missing)),
            )
        elif kind == "sse":
            raise ValueError(
                'type "sse" (the deprecated HTTP+SSE transport) is not supported: use the '
                'server\'s Streamable HTTP endpoint with "type": "http"'
            )
        else:
            raise ValueError(f'unknown type {kind!r} (use "stdio" or "http")')
    except ValueError as exc:
        notices.append(f"{label} is not used: {exc}")
        return None
    for var in dict.fromkeys(missing):
        notices.append(f"{label}: the environment variable {var} is not set; ${{{var}}} expands to nothing")
    return spec


def parse_servers(
    data: Any,
    origin: str,
    workspace: Path,
    env: Mapping[str, str],
    notices: list[str],
    confined: bool = False,
) -> list[ServerSpec]:
    """The servers of a parsed ``.mcp.json`` document (``{"mcpServers": {...}}``); ``confined`` as
    for ``parse_server``."""
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ValueError('expected an object with "mcpServers": {NAME: {...}}')
    servers = data.get("mcpServers", {})
    found = [parse_server(str(n), v, origin, workspace, env, notices, confined) for n, v in servers.items()]
    return [s for s in found if s is not None]


def read_file(path: Path) -> tuple[bytes, Any]:
    """The file's bytes and parsed JSON; raises ValueError with the reason."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read it ({exc.strerror or exc})") from None
    try:
        return raw, json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"it is not valid JSON ({exc})") from None
