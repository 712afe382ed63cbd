"""The git audit learns which directories changed from the kernel's change queue, and falls back to
``stat``-ing them when the queue cannot tell (overflow, directories the kernel will not watch)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from owltui.policy.sandbox import dirwatch, git_guard
from owltui.policy.sandbox.dirwatch import Changes, DirWatch
from owltui.policy.sandbox.git_guard import GitAudit

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


def tree(ws: Path, dirs: int = 200) -> Path:
    for d in range(dirs):
        (ws / f"d{d // 20}" / f"e{d}").mkdir(parents=True)
    return ws


def plant(where: Path) -> Path:
    (where / ".git").mkdir(parents=True)
    (where / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/owned\n")
    return where / ".git"


@linux
def test_a_look_at_an_unchanged_workspace_stats_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    calls: list[object] = []
    real_stat = os.stat

    def counting(path: object, *a: object, **kw: object) -> os.stat_result:
        calls.append(path)
        return real_stat(path, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(git_guard.os, "stat", counting)
    assert audit.look(judge=False) == [] and audit.look(judge=True) == []
    assert calls == []  # the old audit stat-ed all 211 directories twice
    (ws / "d3" / "e61" / "new").mkdir()
    assert audit.look(judge=True) == []
    assert len(calls) <= 3  # the changed directory and the new one


def test_a_repository_planted_deep_is_still_found(tmp_path: Path) -> None:
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    planted = plant(ws / "d7" / "e140" / "x" / "y")
    notes = audit.look(judge=True)
    assert len(notes) == 1 and not planted.exists()


def test_a_moved_directory_is_followed_under_its_new_name(tmp_path: Path) -> None:
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    os.rename(ws / "d1", ws / "moved")
    (ws / "d1").mkdir()  # a new directory at the old name
    assert audit.look(judge=True) == []
    later = [plant(ws / "moved" / "e21"), plant(ws / "d1"), plant(ws / "moved" / "e22" / "sub")]
    notes = audit.look(judge=True)
    assert len(notes) == 3 and not any(p.exists() for p in later), notes


def test_a_directory_moved_out_and_back_in_is_read_again(tmp_path: Path) -> None:
    ws = tree(tmp_path / "ws")
    outside = tmp_path / "outside"
    audit = GitAudit(ws)
    audit.look(judge=False)
    os.rename(ws / "d2", outside)
    plant(outside / "e40")
    os.rename(outside, ws / "back")
    notes = audit.look(judge=True)
    assert len(notes) == 1 and not (ws / "back" / "e40" / ".git").exists()


def test_an_overflowed_queue_falls_back_to_stat_ing_every_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    monkeypatch.setattr(DirWatch, "drain", lambda self: Changes(overflow=True))
    planted = plant(ws / "d5" / "e100")
    assert len(audit.look(judge=True)) == 1 and not planted.exists()


@pytest.mark.parametrize("limit", ["no watches", "no inotify"])
def test_directories_the_kernel_will_not_watch_are_stat_ed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str
) -> None:
    if limit == "no watches":
        monkeypatch.setattr(DirWatch, "add", lambda self, path: False)
    else:
        monkeypatch.setattr(DirWatch, "open", classmethod(lambda cls: None))
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    planted = plant(ws / "d9" / "e180")
    assert len(audit.look(judge=True)) == 1 and not planted.exists()


def test_what_the_user_did_between_looks_is_accepted(tmp_path: Path) -> None:
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    mine = plant(ws / "d4" / "e80")
    assert audit.look(judge=False) == []  # before a command: the user's own repository
    assert audit.look(judge=True) == [] and mine.exists()


@linux
def test_the_audit_leaves_most_of_the_users_watch_limit_to_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = tmp_path / "max_user_watches"
    limit.write_text("400\n")
    monkeypatch.setattr(dirwatch, "_WATCHES_FILE", str(limit))
    ws = tree(tmp_path / "ws")
    audit = GitAudit(ws)
    audit.look(judge=False)
    watch = audit._watch
    assert watch is not None and len(watch._wds) == 100  # a quarter; the other 111 are stat-ed
    planted = [plant(ws / "d9" / f"e{n}") for n in range(180, 200)]
    assert len(audit.look(judge=True)) == 20 and not any(p.exists() for p in planted)
