"""Where logins are kept: per server URL, its tokens (with their absolute expiry) and the client
registered for it. Outside the workspace and the session files: the OS keyring when the optional
``keyring`` library is installed and has a real backend (``OWLTUI_MCP_KEYRING=0`` turns it off),
else ``mcp-oauth.json`` in OwlTUI's data directory, mode 0600 in a 0700 directory. Nothing here
logs or prints a value. No SDK import: entries are plain JSON objects.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

FILE_NAME = "mcp-oauth.json"
KEYRING_SERVICE = "owltui-mcp-oauth"
KEYRING_ENV = "OWLTUI_MCP_KEYRING"
Entry = dict[str, Any]


def data_dir(env: Mapping[str, str]) -> Path:
    """OwlTUI's data directory by the XDG rule (the same rule as ``owltui.session.paths``)."""
    value = env.get("XDG_DATA_HOME", "")
    if value and os.path.isabs(value):
        return Path(value) / "owltui"
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".local/share/owltui"


class Backend(Protocol):
    where: str

    def get(self, url: str) -> Entry | None: ...
    def put(self, url: str, entry: Entry) -> None: ...
    def delete(self, url: str) -> bool: ...


class FileBackend:
    """One JSON file ``{"servers": {URL: entry}}``, replaced atomically, never readable by others."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def _read(self) -> dict[str, Entry]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return {k: v for k, v in servers.items() if isinstance(v, dict)} if isinstance(servers, dict) else {}

    def _write(self, servers: dict[str, Entry]) -> None:
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".mcp-oauth-", dir=folder)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"version": 1, "servers": servers}, out)
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, url: str) -> Entry | None:
        return self._read().get(url)

    def put(self, url: str, entry: Entry) -> None:
        servers = self._read()
        servers[url] = entry
        self._write(servers)

    def delete(self, url: str) -> bool:
        servers = self._read()
        if servers.pop(url, None) is None:
            return False
        self._write(servers)
        return True


class KeyringBackend:
    """The OS keyring through ``keyring``: one secret per server URL."""

    def __init__(self, module: Any) -> None:
        self._keyring = module
        self.where = f"the OS keyring ({type(module.get_keyring()).__name__})"

    def get(self, url: str) -> Entry | None:
        try:
            raw = self._keyring.get_password(KEYRING_SERVICE, url)
            value = json.loads(raw) if raw else None
        except Exception:
            return None
        return value if isinstance(value, dict) else None

    def put(self, url: str, entry: Entry) -> None:
        self._keyring.set_password(KEYRING_SERVICE, url, json.dumps(entry))

    def delete(self, url: str) -> bool:
        try:
            self._keyring.delete_password(KEYRING_SERVICE, url)
        except Exception:
            return False
        return True


def _keyring(env: Mapping[str, str]) -> KeyringBackend | None:
    """The keyring when installed with a real backend (not the fail/null/plaintext ones)."""
    if env.get(KEYRING_ENV, "").strip().lower() in ("0", "false", "no", "off"):
        return None
    try:
        import keyring  # type: ignore[import-not-found,unused-ignore]

        backend = keyring.get_keyring()
        module = type(backend).__module__
        if module.startswith(("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")):
            return None
        if float(getattr(backend, "priority", 1)) <= 0:
            return None
    except Exception:
        return None
    return KeyringBackend(keyring)


def open_store(env: Mapping[str, str]) -> Backend:
    """The keyring if usable, else the 0600 file in the data directory."""
    return _keyring(env) or FileBackend(data_dir(env) / FILE_NAME)
