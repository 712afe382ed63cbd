"""Writes through the editor (``fs/write_text_file``): a real runtime's ``write`` and ``edit`` with a
client that records what it is asked; the policy decides first; a failed or unfaithful editor write
falls back to writing locally; and bytes the editor would not keep are written locally. (The
protocol tests carry the same writes over a real connection.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from owltui.modes.acp.editor_fs import EditorFiles, install_editor_files
from owltui.testing.scripted import Call, Step
from tests.modes.acp.kit import runtime

pytestmark = pytest.mark.anyio


class Recorder:
    """The client side of ``fs/write_text_file``: records each request, then writes (``mode``
    ``write``), fails (``fail``), writes other bytes (``other``) or never answers (``hang``)."""

    def __init__(self, mode: str = "write") -> None:
        self.mode = mode
        self.asked: list[tuple[str, str, str]] = []

    async def write_text_file(self, session_id: str, path: str, content: str, **_kw: Any) -> None:
        self.asked.append((session_id, path, content))
        if self.mode == "fail":
            raise RuntimeError("the editor refused")
        if self.mode == "hang":
            await anyio.sleep_forever()
        await anyio.Path(path).write_text(content.upper() if self.mode == "other" else content)


async def run_calls(tmp_path: Path, calls: list[Call], client: Recorder, **opts: Any) -> list[Any]:
    rt = runtime(tmp_path, [Step(calls=calls), Step(text="done")], yes=True, interactive=False, **opts)
    ws = rt.workspace
    (ws / "a.txt").write_text("one\ntwo\n")
    install_editor_files(rt, EditorFiles(client, "sess-1", timeout=2))  # type: ignore[arg-type]
    ends: list[Any] = []
    rt.emitter.subscribe(lambda ev: ends.append(ev) if ev.type == "tool_end" else None)
    async with rt:
        assert rt.agent.prompt("go")
        with anyio.fail_after(30):
            await rt.wait_settled()
    return ends


async def test_write_and_edit_go_through_the_editor(tmp_path: Path) -> None:
    client = Recorder()
    calls = [
        Call("write", {"path": "new/b.txt", "content": "hello\n"}),
        Call("edit", {"path": "a.txt", "old_text": "two", "new_text": "2"}),
    ]
    ends = await run_calls(tmp_path, calls, client)
    ws = tmp_path / "ws"
    assert [e.status for e in ends] == ["ok", "ok"]
    assert client.asked == [
        ("sess-1", str((ws / "new/b.txt").resolve()), "hello\n"),
        ("sess-1", str((ws / "a.txt").resolve()), "one\n2\n"),
    ]
    assert (ws / "a.txt").read_bytes() == b"one\n2\n"


async def test_a_protected_path_is_refused_before_the_editor_is_asked(tmp_path: Path) -> None:
    client = Recorder()
    calls = [Call("write", {"path": ".owltui/permissions.toml", "content": "[allow]\nbash = ['*']\n"})]
    ends = await run_calls(tmp_path, calls, client)
    assert [e.status for e in ends] == ["refused"]
    assert client.asked == []
    assert not (tmp_path / "ws" / ".owltui" / "permissions.toml").exists()


@pytest.mark.parametrize("mode", ["fail", "other", "hang"])
async def test_an_editor_that_fails_or_writes_other_bytes_is_replaced_by_a_local_write(
    tmp_path: Path, mode: str
) -> None:
    client = Recorder(mode)
    ends = await run_calls(
        tmp_path, [Call("edit", {"path": "a.txt", "old_text": "two", "new_text": "2"})], client
    )
    assert len(client.asked) == 1
    assert [e.status for e in ends] == ["ok"]
    assert (tmp_path / "ws" / "a.txt").read_bytes() == b"one\n2\n"


async def test_bytes_the_editor_would_not_keep_are_written_locally(tmp_path: Path) -> None:
    client = Recorder()
    rt_ws = tmp_path / "ws"
    rt_ws.mkdir()
    (rt_ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (rt_ws / "bom.txt").write_bytes(b"\xef\xbb\xbfone\n")
    (rt_ws / "latin.txt").write_bytes("caf\xe9\n".encode("cp1252"))
    calls = [
        Call("edit", {"path": "crlf.txt", "old_text": "two", "new_text": "2"}),
        Call("edit", {"path": "bom.txt", "old_text": "one", "new_text": "1"}),
        Call("edit", {"path": "latin.txt", "old_text": "caf", "new_text": "CAF"}),
    ]
    ends = await run_calls(tmp_path, calls, client)
    assert [e.status for e in ends] == ["ok", "ok", "ok"]
    assert client.asked == []
    assert (rt_ws / "crlf.txt").read_bytes() == b"one\r\n2\r\n"
    assert (rt_ws / "bom.txt").read_bytes() == b"\xef\xbb\xbf1\n"
    assert (rt_ws / "latin.txt").read_bytes() == "CAF\xe9\n".encode("cp1252")
