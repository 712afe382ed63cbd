"""Where logins are kept: the 0600 file (atomic replace, other servers' entries kept, a broken file
read as empty) and the keyring only when the ``keyring`` library has a real backend (its fail
backend, or ``OWLTUI_MCP_KEYRING=0``, mean the file). ``keyring`` is an optional extra: a stand-in
module plays it here."""

from __future__ import annotations

import stat
import sys
import types
from pathlib import Path

import pytest

from owltui.tools.mcp.auth.store import FileBackend, KeyringBackend, data_dir, open_store


def test_the_file_is_0600_keeps_other_servers_and_survives_garbage(tmp_path: Path) -> None:
    store = FileBackend(tmp_path / "owltui" / "mcp-oauth.json")
    store.put("https://a/mcp", {"tokens": {"access_token": "A"}})
    store.put("https://b/mcp", {"tokens": {"access_token": "B"}})
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.get("https://a/mcp") == {"tokens": {"access_token": "A"}}
    assert store.delete("https://a/mcp") and not store.delete("https://a/mcp")
    assert store.get("https://b/mcp") == {"tokens": {"access_token": "B"}}
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["mcp-oauth.json"]  # no temp left
    store.path.write_text("{not json")
    assert store.get("https://b/mcp") is None


def test_data_dir_follows_xdg(tmp_path: Path) -> None:
    assert data_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "owltui"
    assert data_dir({"XDG_DATA_HOME": "relative", "HOME": str(tmp_path)}) == tmp_path / ".local/share/owltui"


class _Memory:
    priority = 5


def _fake_keyring(backend: object) -> types.ModuleType:
    mod = types.ModuleType("keyring")
    mem: dict[tuple[str, str], str] = {}
    mod.get_keyring = lambda: backend  # type: ignore[attr-defined]
    mod.get_password = lambda s, u: mem.get((s, u))  # type: ignore[attr-defined]
    mod.set_password = lambda s, u, p: mem.__setitem__((s, u), p)  # type: ignore[attr-defined]

    def delete(s: str, u: str) -> None:
        del mem[(s, u)]

    mod.delete_password = delete  # type: ignore[attr-defined]
    return mod


def test_the_keyring_is_used_only_with_a_real_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path)}
    monkeypatch.setitem(sys.modules, "keyring", _fake_keyring(_Memory()))
    store = open_store(env)
    assert isinstance(store, KeyringBackend) and "_Memory" in store.where
    store.put("https://a/mcp", {"tokens": {"access_token": "A"}})
    assert store.get("https://a/mcp") == {"tokens": {"access_token": "A"}}
    assert store.delete("https://a/mcp") and store.get("https://a/mcp") is None
    assert not (tmp_path / "owltui").exists()  # nothing on disk
    assert isinstance(open_store({**env, "OWLTUI_MCP_KEYRING": "0"}), FileBackend)

    fail = type("Keyring", (), {"priority": 0})
    fail.__module__ = "keyring.backends.fail"
    monkeypatch.setitem(sys.modules, "keyring", _fake_keyring(fail()))
    assert isinstance(open_store(env), FileBackend)
