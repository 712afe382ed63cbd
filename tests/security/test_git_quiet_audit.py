"""The git look after a command runs on the event loop only when nothing in the workspace changed
(``SandboxPolicy.audit_git_now``); anything queued sends it to a worker thread, and what a command
planted is renamed either way."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from owltui.policy.sandbox.dirwatch import DirWatch
from owltui.policy.sandbox.kernel import SandboxPolicy

pytestmark = pytest.mark.skipif(DirWatch.open() is None, reason="no inotify here")


def test_a_quiet_workspace_is_looked_at_now_and_a_changed_one_is_not(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    policy = SandboxPolicy("workspace-write", ws)
    policy.refresh_git()  # the first look: the user's repository, accepted
    assert policy.audit_git_now() == []
    (ws / "sub").mkdir()
    subprocess.run(["git", "init", "-q", str(ws / "sub")], check=True)  # as a command would
    assert policy.audit_git_now() is None  # events are queued: not for the event loop
    notes = policy.audit_git()
    assert any("sub/.git" in note for note in notes), notes
    assert not (ws / "sub" / ".git").exists()
    policy.refresh_git()  # the next command's look reads the rename (the audit's own change)
    assert policy.audit_git_now() == []


def test_off_and_read_only_have_nothing_to_look_at(tmp_path: Path) -> None:
    assert SandboxPolicy("off", tmp_path).audit_git_now() == []
    assert SandboxPolicy("read-only", tmp_path).audit_git_now() == []
