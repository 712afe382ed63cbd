"""The environment a command gets: the caller's, without credentials and without the user's desktop sockets.

``child_env`` drops the provider keys, every variable whose name contains KEY, SECRET, TOKEN or
PASSWORD (any case), ``*_URL`` values that carry credentials, and the variables that point at a
server that runs or signs what it is told (``SOCKET_VARS``: tmux, the ssh agent, the session bus,
VS Code, the display, editors' remote control) — unless config ``env_keep`` names them.
``SandboxPolicy.child_env`` applies the session's ``env_keep``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

PROVIDER_KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]*@")
# names or shell globs: each names a socket (or the key to one) whose server acts for the user
SOCKET_VARS = (
    "TMUX",
    "TMUX_PANE",
    "STY",  # GNU screen
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "VSCODE_IPC_HOOK*",
    "WAYLAND_DISPLAY",
    "DISPLAY",
    "XAUTHORITY",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "SWAYSOCK",
    "I3SOCK",
)
_SOCKET_NAME = re.compile("|".join(fnmatch.translate(name) for name in SOCKET_VARS))


def child_env(base: Mapping[str, str], keep: Iterable[str] = ()) -> dict[str, str]:
    """``base`` without the provider keys and any variable whose name contains KEY, SECRET, TOKEN
    or PASSWORD (any case), nor a base URL that carries credentials, nor ``SOCKET_VARS`` — unless
    its name matches one of ``keep`` (names or shell globs, from config ``env_keep``)."""
    keep = tuple(keep)

    def kept(name: str) -> bool:
        return any(name == k or fnmatch.fnmatchcase(name, k) for k in keep)

    out: dict[str, str] = {}
    for name, value in base.items():
        secret = (
            name in PROVIDER_KEY_VARS
            or SECRET_NAME.search(name) is not None
            or (name.endswith("_URL") and _URL_CREDENTIALS.search(value) is not None)
            or _SOCKET_NAME.match(name) is not None
        )
        if not secret or kept(name):
            out[name] = value
    return out
