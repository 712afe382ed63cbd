"""The editor's file system: writes go through the client's ``fs/write_text_file`` when it offered
``fs.writeTextFile``, so the editor's review (its diff, its undo) sees what the agent changed; reads
stay local, and the client's ``terminal/*`` is never used.

``install_editor_files`` lends an ``EditorFiles`` to a runtime's tools (``Services.editor``). What
OwlTUI decides stays where it is: the permission policy, its rules and protected paths have decided
a call before the tool runs, exactly as without an editor. The tools' write step
(``owltui.tools.files.put``) hands the editor only text it keeps byte for byte, checks the bytes
on disk after the editor's write and writes the file itself when the call failed, timed out or left
other bytes.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import anyio
from acp.interfaces import Client

from owltui.session.commands.host import Host

log = logging.getLogger(__name__)

WRITE_TIMEOUT = 30.0  # seconds the editor has to answer a write; then the tool writes the file itself


class EditorFiles:
    """Writes through the client's fs/write_text_file (when it offered fs.writeTextFile)."""

    def __init__(self, conn: Client, session_id: str, *, timeout: float = WRITE_TIMEOUT) -> None:
        self.conn = conn
        self.session_id = session_id
        self.timeout = timeout

    async def write(self, path: Path, text: str) -> bool:
        """Ask the editor to write ``text`` to ``path``; False when it failed or did not answer."""
        try:
            with anyio.move_on_after(self.timeout) as scope:
                await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except Exception as exc:  # the client's error (or a dropped connection): the tool writes
            log.warning("fs/write_text_file %s failed: %s", path, exc)
            return False
        if scope.cancelled_caught:
            log.warning("fs/write_text_file %s: no answer in %g s", path, self.timeout)
            return False
        return True


def install_editor_files(host: Host, files: EditorFiles) -> None:
    """From the next tool call on, ``host``'s ``write`` and ``edit`` write through ``files``."""
    config = host.agent.config
    config.services = dataclasses.replace(config.services, editor=files)
