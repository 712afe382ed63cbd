"""A workspace too large to copy: files recorded by name and hash only, and what rewind then can do.

When one snapshot would record more new files than the store's limit (a plain directory of
120,000 files, a data dump, a repository with a huge untracked tree), checkpoints stay on but
those files are put into the private index with ``git update-index --info-only``: git reads them
for their hash and keeps their stat data, so later snapshots still cost only what changed, but
their bytes are not copied into the store (seconds and no disk instead of minutes and a copy of
the workspace). The store is marked (``owltui-unread``, the count and when): its trees may name
blobs it does not hold, so ``write-tree`` runs with ``--missing-ok``, a prune does not repack, and
the objects the user's repository was lending are copied without the unread ones.

What rewind can restore in such a store: every file whose bytes were recorded — whatever a turn
created, and every later version of a file once it changed. A file left unread that a turn changes
or deletes for the first time cannot be put back: ``unreadable`` finds those among the files a
restore would write, and the restore names them instead of writing them. Files created since the
checkpoint are still deleted (that needs no bytes).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime

from owltui.session.checkpoints.git import ShadowGit

UNREAD_FILE = "owltui-unread"


def has_unread(g: ShadowGit) -> bool:
    """Some checkpoint or the private index of this store names blobs it never copied."""
    return (g.directory / UNREAD_FILE).exists()


def mark_unread(g: ShadowGit, count: int) -> None:
    """Note in the store that ``count`` more files were recorded by hash only."""
    path = g.directory / UNREAD_FILE
    try:
        before = int(path.read_text(encoding="utf-8").split()[0])
    except (OSError, ValueError, IndexError):
        before = 0
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{before + count} {datetime.now(UTC).isoformat(timespec='seconds')}\n", encoding="utf-8")
    os.replace(tmp, path)


def absent(g: ShadowGit, oids: Iterable[str], env: dict[str, str] | None = None) -> set[str]:
    """Which of ``oids`` the store (with ``env``'s alternates) does not hold."""
    wanted = sorted(set(oids))
    if not wanted:
        return set()
    proc = g.run(
        ["cat-file", "--batch-check=%(objectname)"],
        input="".join(f"{oid}\n" for oid in wanted).encode(),
        env=env,
        check=False,
    )
    found = {line.split()[0] for line in proc.stdout.decode().splitlines() if line and "missing" not in line}
    return {oid for oid in wanted if oid not in found}


def notice(count: int, limit: int) -> str:
    """The one line a session shows when a snapshot records files by hash only."""
    return (
        f"checkpoints: {count:,} new files here (more than {limit:,}) are recorded by hash only, "
        "not copied; rewind restores what turns create and what they change after that, but a "
        "file's bytes from before its first change are not kept (rewind names such files)"
    )
