"""Checkpoints and rewind (issue 14, item 3): real files, real git, real subprocesses."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from owltui.session.checkpoints.checkpoints import CheckpointStore
from owltui.session.checkpoints.records import CheckpointError, Skipped


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


def git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
    }


def git(repo: Path, home: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=git_env(home), check=True, capture_output=True, text=True
    ).stdout


def make_repo(path: Path, home: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, home, "init", "-q", "-b", "main")
    write(path, files)
    git(path, home, "add", "-A")
    git(path, home, "commit", "-q", "-m", "initial")
    return path


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def store_for(ws: Path, tmp_path: Path, home: Path, **kw: object) -> CheckpointStore:
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    return CheckpointStore(ws, tmp_path / "session" / "abc123" / "checkpoints.git", env=env, **kw)  # type: ignore[arg-type]


def listing(root: Path) -> dict[str, bytes]:
    """Every file (and symlink target) under root except .git, by relative path."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            out[rel] = os.readlink(full).encode() if os.path.islink(full) else Path(full).read_bytes()
    return out


def tree_digest(root: Path) -> str:
    """Names, modes and bytes of everything under root (a .git directory, say)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            h.update(f"{os.path.relpath(full, root)}\0{st.st_mode}\0{st.st_mtime_ns}\0".encode())
            if stat.S_ISREG(st.st_mode):
                h.update(Path(full).read_bytes())
    return h.hexdigest()


def shell(ws: Path, command: str) -> None:
    subprocess.run(command, shell=True, cwd=ws, check=True)


# ---- the turn of the issue -------------------------------------------------------------------
@pytest.mark.parametrize("g_existed", [False, True])
def test_turn_with_edit_write_and_shell_command_is_rewound(
    tmp_path: Path, home: Path, g_existed: bool
) -> None:
    files = {"src/app.py": "print('hello')\n", "README.md": "# app\n"}
    if g_existed:
        files["g.txt"] = "old g\n"
    ws = make_repo(tmp_path / "ws", home, files)
    store = store_for(ws, tmp_path, home)
    before = listing(ws)
    cp = store.checkpoint("turn1", "add a greeting")
    # the turn: an edit, a write, and a shell command
    (ws / "src" / "app.py").write_text("print('hello, world')\n")
    (ws / "src" / "greet.py").write_text("def greet(): ...\n")
    shell(ws, "echo x > g.txt")
    assert (ws / "g.txt").read_text() == "x\n"

    restored = store.restore(cp.id)

    assert restored == ["g.txt", "src/app.py", "src/greet.py"]
    assert listing(ws) == before
    assert (ws / "g.txt").exists() == g_existed


def test_user_repository_is_never_touched(tmp_path: Path, home: Path) -> None:
    ws = make_repo(tmp_path / "ws", home, {"a.txt": "a\n", "b.txt": "b\n", "staged.txt": "s\n"})
    # a stash entry, a staged change, an unstaged change and an untracked file
    (ws / "a.txt").write_text("stashed\n")
    git(ws, home, "stash", "-q")
    (ws / "staged.txt").write_text("staged change\n")
    git(ws, home, "add", "staged.txt")
    (ws / "b.txt").write_text("unstaged change\n")
    (ws / "untracked.txt").write_text("u\n")
    status = git(ws, home, "status", "--porcelain")
    stash = git(ws, home, "stash", "list")
    head = git(ws, home, "rev-parse", "HEAD")
    index = (ws / ".git" / "index").read_bytes()
    dotgit = tree_digest(ws / ".git")
    before = listing(ws)

    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "change things")
    assert tree_digest(ws / ".git") == dotgit
    (ws / "b.txt").write_text("turn\n")
    (ws / "staged.txt").unlink()
    shell(ws, "echo new > c.txt && mkdir -p deep/er && echo z > deep/er/z.txt")
    store.checkpoint("t2", "more")
    assert store.changed_since(cp.id) == ["b.txt", "c.txt", "deep/er/z.txt", "staged.txt"]
    assert store.restore(cp.id) == ["b.txt", "c.txt", "deep/er/z.txt", "staged.txt"]
    store.list()
    store.skipped(cp.id)

    assert listing(ws) == before
    assert not (ws / "deep").exists()
    assert tree_digest(ws / ".git") == dotgit
    assert (ws / ".git" / "index").read_bytes() == index
    assert git(ws, home, "status", "--porcelain") == status
    assert git(ws, home, "stash", "list") == stash
    assert git(ws, home, "rev-parse", "HEAD") == head


def test_environment_git_variables_do_not_leak_in(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = make_repo(tmp_path / "ws", home, {"a.txt": "a\n"})
    dotgit = tree_digest(ws / ".git")
    monkeypatch.setenv("GIT_DIR", str(ws / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(ws / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/nonexistent'")
    store = CheckpointStore(ws, tmp_path / "cp.git")
    cp = store.checkpoint("t1", "x")
    (ws / "a.txt").write_text("b\n")
    assert store.restore(cp.id) == ["a.txt"]
    assert (ws / "a.txt").read_text() == "a\n"
    assert tree_digest(ws / ".git") == dotgit


def test_hostile_attributes_config_and_hooks_never_run(tmp_path: Path, home: Path) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\ntouch {markers}/$(basename "$0")-$$\ncat\n')
    script.chmod(0o755)
    ws = make_repo(tmp_path / "ws", home, {"a.txt": "plain\n"})
    crlf = b"line one\r\nline two\r\n$Id$\r\n"
    (ws / "crlf.txt").write_bytes(crlf)
    (ws / "lf.txt").write_bytes(b"one\ntwo\n$Id$\n")
    (ws / ".gitattributes").write_text(
        "* filter=evil ident\n*.txt text eol=crlf working-tree-encoding=UTF-16\n"
    )
    # the user's repository config and hooks, and their global config, all try to run evil.sh
    evil = (
        f'[core]\n\tfsmonitor = {script}\n[filter "evil"]\n\tclean = {script}\n\tsmudge = {script}\n'
        f'\trequired = true\n[diff "evil"]\n\ttextconv = {script}\n'
    )
    with open(ws / ".git" / "config", "a") as fh:
        fh.write(evil)
    (home / ".gitconfig").write_text(evil + f"[core]\n\thooksPath = {ws / '.git' / 'hooks'}\n")
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "config").write_text(evil)
    hooks = ws / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in (
        "post-index-change",
        "post-checkout",
        "pre-commit",
        "post-commit",
        "reference-transaction",
        "pre-auto-gc",
        "fsmonitor-watchman",
    ):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {markers}/hook-{name}\n")
        (hooks / name).chmod(0o755)
    before = listing(ws)

    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    (ws / "crlf.txt").write_bytes(b"changed\n")
    (ws / "lf.txt").unlink()
    (ws / "new.txt").write_text("new\n")
    store.checkpoint("t2", "y")
    restored = store.restore(cp.id)
    store.list()
    store.skipped(cp.id)

    assert restored == ["crlf.txt", "lf.txt", "new.txt"]
    assert listing(ws) == before  # byte for byte: no eol conversion, no $Id$ expansion, no re-encoding
    assert (ws / "crlf.txt").read_bytes() == crlf
    assert list(markers.iterdir()) == []


# ---- what is left out ------------------------------------------------------------------------
def test_ignored_files_are_left_alone(tmp_path: Path, home: Path) -> None:
    ws = make_repo(tmp_path / "ws", home, {".gitignore": "*.log\nbuild/\n", "a.txt": "a\n"})
    write(ws, {"old.log": "old log\n", "build/out.o": "object\n"})
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "build it")
    shell(ws, "echo more >> old.log && echo new > new.log && echo rebuilt > build/out.o && echo a2 > a.txt")

    assert store.changed_since(cp.id) == ["a.txt"]
    assert store.restore(cp.id) == ["a.txt"]
    assert (ws / "old.log").read_text() == "old log\nmore\n"
    assert (ws / "new.log").read_text() == "new\n"
    assert (ws / "build" / "out.o").read_text() == "rebuilt\n"
    skipped = store.skipped(cp.id)
    assert {s.path for s in skipped} == {"build/", "new.log", "old.log"}
    assert {s.reason for s in skipped} == {"ignored"}


def test_files_ignored_by_the_checkpoints_rules_survive_a_rule_change(tmp_path: Path, home: Path) -> None:
    ws = make_repo(tmp_path / "ws", home, {".gitignore": "cache/\n", "a.txt": "a\n"})
    write(ws, {"cache/data.bin": "cached\n"})
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "drop the ignore file")
    (ws / ".gitignore").unlink()
    (ws / "a.txt").write_text("b\n")
    (ws / "fresh.txt").write_text("made by the turn\n")

    restored = store.restore(cp.id)

    assert restored == [".gitignore", "a.txt", "fresh.txt"]
    assert (ws / ".gitignore").read_text() == "cache/\n"
    assert (ws / "cache" / "data.bin").read_text() == "cached\n"  # existed before: kept
    assert not (ws / "fresh.txt").exists()


def test_large_files_are_left_out_and_reported(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"small.txt": "s" * 100, "notes.txt": "n\n"})
    (ws / "big.bin").write_bytes(b"B" * 5000)
    store = store_for(ws, tmp_path, home, max_file_bytes=1000)
    cp = store.checkpoint("t1", "grow things")
    assert store.skipped(cp.id) == [Skipped("big.bin", "too large", 5000)]
    assert cp.skipped == (Skipped("big.bin", "too large", 5000),)
    (ws / "big.bin").write_bytes(b"C" * 6000)  # not recorded: cannot be rewound
    (ws / "small.txt").write_text("S" * 2000)  # grew past the limit: rewound to the small version
    (ws / "notes.txt").write_text("changed\n")
    (ws / "huge.dat").write_bytes(b"H" * 3000)
    cp2 = store.checkpoint("t2", "next")
    assert [s.path for s in cp2.skipped] == ["big.bin", "huge.dat", "small.txt"]

    restored = store.restore(cp.id)

    assert restored == ["notes.txt", "small.txt"]
    assert (ws / "small.txt").read_text() == "s" * 100
    assert (ws / "notes.txt").read_text() == "n\n"
    assert (ws / "big.bin").read_bytes() == b"C" * 6000
    assert (ws / "huge.dat").exists()  # never recorded, so never deleted
    assert store.restore(cp2.id) == ["notes.txt"]  # small.txt was too large at t2: left alone
    assert (ws / "small.txt").read_text() == "s" * 100


def test_nested_repository_is_left_out_whole(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"a.txt": "a\n"})
    make_repo(ws / "vendor" / "lib", home, {"lib.py": "v1\n"})
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    assert cp.skipped == (Skipped("vendor/lib/", "repository"),)
    (ws / "vendor" / "lib" / "lib.py").write_text("v2\n")
    (ws / "a.txt").write_text("b\n")
    assert store.restore(cp.id) == ["a.txt"]
    assert (ws / "vendor" / "lib" / "lib.py").read_text() == "v2\n"


# ---- workspaces ------------------------------------------------------------------------------
def test_non_git_workspace(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "plain"
    write(ws, {"a.txt": "a\n", "sub/b.txt": "b\n"})
    (ws / "run.sh").write_text("#!/bin/sh\n")
    (ws / "run.sh").chmod(0o755)
    os.symlink("a.txt", ws / "link")
    before = listing(ws)
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    shell(ws, "rm -r sub && chmod -x run.sh && ln -sfn sub/b.txt link && echo c > c.txt")

    assert store.restore(cp.id) == ["c.txt", "link", "run.sh", "sub/b.txt"]
    assert listing(ws) == before
    assert os.readlink(ws / "link") == "a.txt"
    assert os.access(ws / "run.sh", os.X_OK)
    assert not (ws / ".git").exists()


def test_workspace_inside_a_repository_honours_its_rules_and_stays_inside(tmp_path: Path, home: Path) -> None:
    repo = make_repo(
        tmp_path / "repo", home, {".gitignore": "pkg/secret*\n", "top.txt": "top\n", "pkg/a.txt": "a\n"}
    )
    ws = repo / "pkg"
    (ws / "secret.env").write_text("KEY=1\n")
    (repo / ".git" / "info" / "exclude").write_text("*.tmp\n")
    (ws / "scratch.tmp").write_text("t\n")
    dotgit = tree_digest(repo / ".git")
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    shell(
        ws,
        "echo b > a.txt && echo S > secret.env && echo T > scratch.tmp && echo new > n.txt "
        "&& echo changed > ../top.txt",
    )

    assert store.changed_since(cp.id) == ["a.txt", "n.txt"]
    assert store.restore(cp.id) == ["a.txt", "n.txt"]
    assert (ws / "a.txt").read_text() == "a\n"
    assert (ws / "secret.env").read_text() == "S\n"
    assert (ws / "scratch.tmp").read_text() == "T\n"
    assert (repo / "top.txt").read_text() == "changed\n"  # outside the workspace: never touched
    assert tree_digest(repo / ".git") == dotgit
    assert {s.path for s in store.skipped(cp.id)} == {"scratch.tmp", "secret.env"}


def test_workspace_in_an_ignored_directory_is_still_recorded(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "repo", home, {".gitignore": "build/\n", "top.txt": "t\n"})
    ws = repo / "build" / "work"
    write(ws, {"a.txt": "a\n"})
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    (ws / "a.txt").write_text("b\n")
    assert store.restore(cp.id) == ["a.txt"]
    assert (ws / "a.txt").read_text() == "a\n"


# ---- restoring -------------------------------------------------------------------------------
def test_empty_directories_left_by_deleted_files_go_but_others_stay(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"keep/a.txt": "a\n"})
    (ws / "empty-before").mkdir()
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    write(ws, {"new/deep/er/f.txt": "f\n", "keep/b.txt": "b\n"})
    (ws / "new" / "also-empty").mkdir()
    assert store.restore(cp.id) == ["keep/b.txt", "new/deep/er/f.txt"]
    assert (ws / "empty-before").is_dir()
    assert (ws / "keep").is_dir()
    assert sorted(p.name for p in (ws / "new").iterdir()) == ["also-empty"]


def test_file_and_directory_swap_places(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"x": "file x\n", "y/inner.txt": "inner\n"})
    before = listing(ws)
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    shell(ws, "rm x && mkdir x && echo in > x/in.txt && rm -r y && echo file > y")
    assert store.restore(cp.id) == ["x", "x/in.txt", "y", "y/inner.txt"]
    assert listing(ws) == before


def test_restore_never_writes_or_deletes_through_a_symlink(tmp_path: Path, home: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, {"f.txt": "outside\n", "extra.txt": "outside extra\n"})
    ws = tmp_path / "ws"
    write(ws, {"d/f.txt": "inside\n"})
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    shell(ws, f"rm -r d && ln -s {outside} d")
    assert store.changed_since(cp.id) == ["d", "d/f.txt"]
    store.restore(cp.id)
    assert (outside / "f.txt").read_text() == "outside\n"
    assert (outside / "extra.txt").read_text() == "outside extra\n"
    assert not (ws / "d").is_symlink()
    assert (ws / "d" / "f.txt").read_text() == "inside\n"


def test_a_directory_where_a_file_was_is_not_swept_away(tmp_path: Path, home: Path) -> None:
    ws = make_repo(tmp_path / "ws", home, {".gitignore": "*.log\n", "x": "file\n"})
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    shell(ws, "rm x && mkdir x && echo keep > x/important.log")
    assert store.restore(cp.id) == []
    assert (ws / "x" / "important.log").read_text() == "keep\n"


def test_non_utf8_file_names(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    name = os.fsdecode(b"caf\xe9.txt")
    (ws / name).write_text("v1\n")
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "x")
    (ws / name).write_text("v2\n")
    new = os.fsdecode(b"n\xffw.txt")
    (ws / new).write_text("new\n")
    assert store.restore(cp.id) == sorted([name, new])
    assert (ws / name).read_text() == "v1\n"
    assert not (ws / new).exists()


def test_several_turns_backwards_and_forwards(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"a.txt": "1\n"})
    store = store_for(ws, tmp_path, home)
    store.checkpoint("t1", "one")
    (ws / "a.txt").write_text("2\n")
    (ws / "b.txt").write_text("b\n")
    store.checkpoint("t2", "two")
    (ws / "a.txt").write_text("3\n")
    store.checkpoint("t3", "three")
    (ws / "c.txt").write_text("c\n")
    (ws / "b.txt").unlink()

    assert [c.files for c in store.list(current=False)] == [2, 1, None]
    assert [c.files for c in store.list()] == [2, 1, 2]
    assert store.changed_since("t1") == ["a.txt", "c.txt"]
    assert store.restore("t1") == ["a.txt", "c.txt"]
    assert listing(ws) == {"a.txt": b"1\n"}
    assert store.list()[-1].files == 2  # fixed at the restore: what the last turn changed
    assert store.restore("t3") == ["a.txt", "b.txt"]  # and forward again
    assert listing(ws) == {"a.txt": b"3\n", "b.txt": b"b\n"}
    assert store.restore("t3") == []


def test_undo_rewinds_the_last_turn(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"a.txt": "1\n"})
    store = store_for(ws, tmp_path, home)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        store.undo()
    store.checkpoint("t1", "one")
    (ws / "a.txt").write_text("2\n")
    store.checkpoint("t2", "two")
    (ws / "a.txt").write_text("3\n")
    assert store.undo() == ["a.txt"]
    assert (ws / "a.txt").read_text() == "2\n"


# ---- the list ---------------------------------------------------------------------------------
def test_checkpoints_survive_reopening_the_store(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"a.txt": "1\n"})
    store = store_for(ws, tmp_path, home)
    first = store.checkpoint("t1", "first prompt", leaf="entry-7")
    (ws / "a.txt").write_text("2\n")
    store.checkpoint("t2", "second prompt")
    (ws / "b.txt").write_text("b\n")
    listed = store.list()

    again = store_for(ws, tmp_path, home)
    assert again.list() == listed
    assert again.get("t1").leaf == "entry-7"
    assert [c.wire() for c in again.list()] == [
        {"id": "t1", "prompt": "first prompt", "at": first.at, "files": 1},
        {"id": "t2", "prompt": "second prompt", "at": listed[1].at, "files": 1},
    ]
    assert again.restore("t1") == ["a.txt", "b.txt"]
    assert listing(ws) == {"a.txt": b"1\n"}

    # the JSON list lost: rebuilt from the commits in the shadow store
    (tmp_path / "session" / "abc123" / "checkpoints.git" / "checkpoints.json").unlink()
    rebuilt = store_for(ws, tmp_path, home)
    assert [(c.id, c.prompt, c.at, c.tree, c.leaf) for c in rebuilt.list()] == [
        (c.id, c.prompt, c.at, c.tree, c.leaf) for c in listed
    ]
    assert rebuilt.restore("t2") == ["a.txt"]


def test_store_layout_and_json(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"a.txt": "1\n"})
    store = store_for(ws, tmp_path, home)
    store.checkpoint("t1", "p")
    directory = tmp_path / "session" / "abc123" / "checkpoints.git"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    data = json.loads((directory / "checkpoints.json").read_text())
    assert [c["id"] for c in data["checkpoints"]] == ["t1"]
    assert not (ws / ".git").exists()


def test_ids_prompts_and_errors(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    store = store_for(ws, tmp_path, home)
    cp = store.checkpoint("t1", "key sk-" + "a" * 30)
    assert cp.at.endswith("+00:00")
    with pytest.raises(CheckpointError, match="already"):
        store.checkpoint("t1", "again")
    with pytest.raises(CheckpointError, match="no checkpoint nope"):
        store.restore("nope")
    assert store.list()[0].files == 0

    scrubbed = CheckpointStore(ws, tmp_path / "other.git", scrub=lambda t: t.replace("secret", "[REDACTED]"))
    long = scrubbed.checkpoint("t1", "my secret " + "x" * 10_000)
    assert long.prompt.startswith("my [REDACTED] ")
    assert len(long.prompt) == 4000


def test_missing_git_is_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="git program"):
        CheckpointStore(tmp_path, tmp_path / "cp.git", env={"PATH": str(tmp_path / "nothing")})


def test_warm_records_no_checkpoint(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, {"a.txt": "1\n"})
    store = store_for(ws, tmp_path, home)
    store.warm()
    assert store.list() == []
    assert store.latest() is None
    cp = store.checkpoint("t1", "one")
    (ws / "a.txt").write_text("2\n")
    assert store.restore(cp.id) == ["a.txt"]
