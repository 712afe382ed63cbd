"""Configuration: ``$XDG_CONFIG_HOME/owltui/config.toml``, then environment, then flags.

``load_config`` returns a validated ``Config`` or raises ``ConfigError`` with one line naming the
file, the line and the key. ``save_config_value`` rewrites one key (the UI remembers ``/theme``).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from owltui.providers.table import ProviderName
from owltui.session.paths import config_file

PermissionMode = Literal["ask", "edits", "yolo", "read-only", "plan"]  # owltui.policy.permissions.policy.Mode
SandboxMode = Literal["workspace-write", "read-only", "off"]  # owltui.policy.sandbox.kernel.SandboxMode


class ConfigError(Exception):
    """Bad configuration: the message is one sentence fit for stderr."""


class Config(BaseModel):
    """Every setting. Unknown keys are errors (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    provider: ProviderName | None = None
    model: str | None = None
    base_url: str | None = None
    permission_mode: PermissionMode = "ask"
    max_rounds: int = Field(40, ge=1, le=10_000)
    # forced turns of a soft requirement (/require) and a Stop hook's refusals per turn, then the run ends
    max_escalations: int = Field(3, ge=0, le=100)
    steering: Literal["batch", "immediate"] = "batch"
    pause_freeze: bool = True  # closing the pause gate also stops tool processes (owltui.tools.exec.freeze)
    follow_up_mode: Literal["one", "all"] = "one"  # follow-ups per stop: the first, or all merged
    # a checkpoint of the workspace's files before each user turn (/rewind, /undo); larger files are
    # left out
    checkpoints: bool = True
    checkpoint_max_file_bytes: int = Field(5 * 1024 * 1024, ge=0)
    # more new files than this in one snapshot are recorded by hash only, not copied (a rewind names
    # those it then cannot put back)
    checkpoint_max_files: int = Field(100_000, ge=1)
    # the workspace's checkpoint store is kept under this size: past it, the checkpoints of its least
    # recently used sessions go (checked once a day; owltui --gc now)
    checkpoint_budget_mb: int = Field(2048, ge=1)
    stream_idle_timeout: float = Field(120.0, gt=0)
    # the model's context window in tokens (over the catalog's; local models): automatic compaction
    # triggers at 80 % of it. compaction_confirm: close the pause gate first, so the user can look
    context_window: int | None = Field(None, ge=1000)
    compaction_confirm: bool = False
    theme: str = "owl-dark"
    # the edit tool offered to the model, over the catalog's choice for its family (apply_patch for
    # OpenAI's reasoning and coding models, edit for the others); fixed for the session
    edit_tool: Literal["edit", "apply_patch"] | None = None
    # the first lines of a finished bash call's output, drawn under its folded block (0: folded away)
    bash_output_lines: int = Field(5, ge=0, le=1000)
    keys: dict[str, str] = Field(default_factory=dict)
    # the kernel sandbox of every command a tool starts (owltui.policy.sandbox.kernel)
    sandbox: SandboxMode = "workspace-write"
    sandbox_writable: list[str] = Field(default_factory=list)  # more places commands may write
    sandbox_network: bool = True  # false: commands may not open TCP connections (Landlock ABI 4) nor UDP
    # Unix sockets commands may use (e.g. /var/run/docker.sock); any entry allows all of them again
    sandbox_unix_sockets: list[str] = Field(default_factory=list)
    env_keep: list[str] = Field(default_factory=list)  # secret-looking variables commands still get
    # MCP servers and settings (the [mcp] table; validated by owltui.tools.mcp.McpSettings when the
    # runtime is built, so reading the config never imports the MCP package)
    mcp: dict[str, Any] = Field(default_factory=dict)
    # user hooks in Claude Code's shape ([[hooks.PreToolUse]] tables; owltui.features.hooks, checked
    # when the runtime is built); with hooks_from_claude also those of ~/.claude/settings.json and
    # the project's .claude/settings.json (+ settings.local.json), with Claude Code's tool names
    hooks: dict[str, Any] = Field(default_factory=dict)
    # also read Claude Code's files: hooks from .claude/settings.json, .claude/skills/ folders
    hooks_from_claude: bool = False

    @field_validator("keys")
    @classmethod
    def _known_keys(cls, keys: dict[str, str]) -> dict[str, str]:
        """``[keys]``: known binding ids, real keys, none taken twice (owltui.session.commands.keys)."""
        if not keys:
            return keys
        from pydantic_core import PydanticCustomError

        from owltui.session.commands.keys import KeysError, check_keys

        try:
            check_keys(keys)
        except KeysError as exc:
            raise PydanticCustomError("keys", "{reason}", {"reason": str(exc)}) from None
        return keys


# environment variable -> config key (API keys and base URLs are read by the provider resolver)
ENV_KEYS: dict[str, str] = {
    "OWLTUI_PROVIDER": "provider",
    "OWLTUI_MODEL": "model",
    "OWLTUI_PERMISSION_MODE": "permission_mode",
    "OWLTUI_MAX_ROUNDS": "max_rounds",
    "OWLTUI_STEERING": "steering",
    "OWLTUI_STREAM_IDLE_TIMEOUT": "stream_idle_timeout",
    "OWLTUI_THEME": "theme",
    "OWLTUI_SANDBOX": "sandbox",
}


def _line_of(text: str, key: str) -> int | None:
    """The 1-based line where ``key`` is assigned in TOML ``text`` (best effort)."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    for n, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return n
    return None


def _explain(err: ValidationError, path: Path | None, text: str, source: str) -> ConfigError:
    first = err.errors()[0]
    loc = [str(p) for p in first["loc"]]
    key = ".".join(loc) or "?"
    if first["type"] == "extra_forbidden":
        what = f"unknown key '{key}'"
    else:
        what = f"bad value for '{key}': {first['msg']}"
    if path is None:
        return ConfigError(f"Invalid configuration from {source}: {what}.")
    line = _line_of(text, loc[-1]) if loc else None
    where = f"{path}, line {line}" if line else str(path)
    return ConfigError(f"Invalid config file {where}: {what}.")


def read_file(path: Path) -> tuple[dict[str, Any], str]:
    """Parse a config file (missing file: empty). Raises ConfigError on bad TOML."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, ""
    except OSError as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc.strerror or exc}.") from None
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg).rstrip(".")
        line = m.group(1) if m else "?"
        bad = text.splitlines()[int(line) - 1].strip() if m and int(line) <= len(text.splitlines()) else ""
        key = bad.split("=", 1)[0].strip() if "=" in bad else bad
        named = f", key '{key}'" if key else ""
        raise ConfigError(f"Invalid TOML in config file {path}, line {line}{named}: {reason}.") from None


def env_values(env: Mapping[str, str]) -> dict[str, Any]:
    return {key: env[var] for var, key in ENV_KEYS.items() if env.get(var)}


def load_config(
    env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None, path: Path | None = None
) -> Config:
    """File, then environment, then ``overrides`` (flags; ``None`` values are ignored)."""
    env = os.environ if env is None else env
    path = path or config_file(env)
    data, text = read_file(path)
    try:
        base = Config.model_validate(data)
    except ValidationError as err:
        raise _explain(err, path, text, str(path)) from None
    merged = base.model_dump(exclude_unset=True)
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    for source, values in (("the environment", env_values(env)), ("the command line", flags)):
        merged.update(values)
        try:
            Config.model_validate(merged)
        except ValidationError as err:
            raise _explain(err, None, "", source) from None
    return Config.model_validate(merged)


def save_config_value(
    key: str, value: Any, env: Mapping[str, str] | None = None, path: Path | None = None
) -> Path:
    """Set one top-level key in the config file (creating it), keeping the other keys."""
    import tomli_w

    if key not in Config.model_fields:
        raise ConfigError(f"Unknown config key '{key}'.")
    path = path or config_file(os.environ if env is None else env)
    data, _ = read_file(path)
    data[key] = value
    try:
        Config.model_validate(data)
    except ValidationError as err:
        raise _explain(err, None, "", "save_config_value") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomli_w.dumps(data), encoding="utf-8")
    tmp.replace(path)
    return path
