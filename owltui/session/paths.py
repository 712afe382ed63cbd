"""Where OwlTUI keeps its files (XDG): the config file and the sessions directory.

The XDG rules are applied here, not by platformdirs: every function takes the environment it reads
as a mapping (tests pass their own), and the layout is the same on every system (platformdirs would
move it to ``~/Library`` on macOS).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path


def _xdg(env: Mapping[str, str], name: str, fallback: str) -> Path:
    value = env.get(name, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path(env.get("HOME") or os.path.expanduser("~")) / fallback


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    return _xdg(os.environ if env is None else env, "XDG_CONFIG_HOME", ".config") / "owltui"


def config_file(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "config.toml"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    return _xdg(os.environ if env is None else env, "XDG_DATA_HOME", ".local/share") / "owltui"


def sessions_root(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "sessions"


def workspace_key(workspace: Path) -> str:
    """A directory name for a workspace: readable path plus a short hash (no collisions)."""
    text = str(workspace.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[-80:] or "root"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{slug}-{digest}"


def sessions_dir(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    return sessions_root(env) / workspace_key(workspace)
