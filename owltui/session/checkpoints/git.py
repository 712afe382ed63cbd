"""The shadow git store's plumbing: git with a private environment, ``-c`` options and config.

``ShadowGit`` runs the ``git`` program on the store directory with its own ``GIT_DIR``, a private
``GIT_INDEX_FILE``, ``GIT_WORK_TREE`` at the enclosing repository's top level (or the workspace),
no system or global config, ``HOME`` inside the store, and the safe settings both in the store's
config file and as ``-c`` options: no fsmonitor, hooks, gpg signing, gc, or content filters. It
also keeps the store's ``info/exclude`` in step with the user's repository-level and global
excludes. A failing git call raises ``CheckpointError`` with one sentence for the user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from owltui.session.checkpoints.records import CheckpointError

INDEX_FILE = "owltui-index"
BORROWED_FILE = "owltui-borrowed"  # the user's objects directory, while the store borrows from it
RESTORE_INDEX = "owltui-restore-index"
REF = "refs/heads/checkpoints"

# Passed as -c to every git call (and written to the store's config): nothing of the user's runs.
SAFE_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.bare", "false"),
    ("core.symlinks", "true"),
    ("core.filemode", "true"),
    ("core.ignorecase", "false"),
    ("core.quotepath", "false"),
    ("core.sparseCheckout", "false"),
    ("core.splitIndex", "true"),  # a checkpoint rewrites the few changed entries, not all 100k
    ("core.untrackedCache", "false"),
    ("core.attributesFile", os.devnull),
    ("commit.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("advice.addEmbeddedRepo", "false"),
    ("advice.addIgnoredFile", "false"),
    ("index.version", "4"),
    ("user.name", "OwlTUI checkpoints"),
    ("user.email", "checkpoints@owltui.invalid"),
)
# Highest-precedence attributes (GIT_DIR/info/attributes): content goes in and out byte for byte.
ATTRIBUTES = "* -text -crlf -eol -filter -ident -working-tree-encoding -diff -merge\n"


def enclosing_repo(workspace: Path) -> tuple[Path, Path | None]:
    """The work tree git should use (the nearest directory at or above the workspace holding a
    ``.git``, else the workspace) and the user's git directory there, if any."""
    for directory in (workspace, *workspace.parents):
        dotgit = directory / ".git"
        if dotgit.is_dir():
            return directory, dotgit
        if dotgit.is_file():
            return directory, _gitfile_target(dotgit)
    return workspace, None


def _gitfile_target(dotgit: Path) -> Path | None:
    try:
        text = dotgit.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("gitdir:"):
            target = Path(line[len("gitdir:") :].strip())
            return target if target.is_absolute() else (dotgit.parent / target)
    return None


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ""


def _user_excludes(user_gitdir: Path | None, env: dict[str, str]) -> str:
    """The user's exclude patterns git would apply at the repository level: the repository's
    ``info/exclude`` (a linked worktree's common directory too) and the default global ignore file."""
    parts: list[str] = []
    if user_gitdir is not None:
        parts.append(_read(user_gitdir / "info" / "exclude"))
        common = _read(user_gitdir / "commondir").strip()
        if common:
            base = Path(common) if os.path.isabs(common) else user_gitdir / common
            parts.append(_read(base / "info" / "exclude"))
    xdg = env.get("XDG_CONFIG_HOME", "")
    home = env.get("HOME", "")
    if xdg and os.path.isabs(xdg):
        parts.append(_read(Path(xdg) / "git" / "ignore"))
    elif home:
        parts.append(_read(Path(home) / ".config" / "git" / "ignore"))
    return "\n".join(p for p in parts if p.strip())


def split_z(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def z(paths: Iterable[str]) -> bytes:
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


class ShadowGit:
    """git for the checkpoints of ``workspace`` kept in ``directory``; ``source_env`` gives ``PATH``
    (to find git) and ``HOME``/``XDG_CONFIG_HOME`` (the user's global ignore file). CheckpointError
    when git is not installed."""

    def __init__(self, workspace: Path, directory: Path, source_env: dict[str, str]) -> None:
        git = shutil.which("git", path=source_env.get("PATH") or os.defpath)
        if git is None:
            raise CheckpointError("Checkpoints need the git program, which is not installed (not on PATH).")
        self.exe = git
        self.workspace = workspace
        self.directory = directory
        self.source_env = source_env
        self.index = self.directory / INDEX_FILE
        self._neutral = self.directory / "home"
        self._hooks = self.directory / "no-hooks"
        self.env = {
            "PATH": source_env.get("PATH") or os.defpath,
            "GIT_DIR": str(self.directory),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "OwlTUI checkpoints",
            "GIT_AUTHOR_EMAIL": "checkpoints@owltui.invalid",
            "GIT_COMMITTER_NAME": "OwlTUI checkpoints",
            "GIT_COMMITTER_EMAIL": "checkpoints@owltui.invalid",
            "HOME": str(self._neutral),
            "XDG_CONFIG_HOME": str(self._neutral / ".config"),
            "LC_ALL": "C",
        }
        self._config_args: list[str] = []
        for key, value in (*SAFE_CONFIG, ("core.hooksPath", str(self._hooks))):
            self._config_args += ["-c", f"{key}={value}"]
        self.root = workspace
        self.user_gitdir: Path | None = None
        self.prefix = ""

    def set_root(self, root: Path, user_gitdir: Path | None) -> None:
        """Run git from ``root`` (the enclosing repository's top level, or the workspace)."""
        self.root, self.user_gitdir = root, user_gitdir
        rel = self.workspace.relative_to(root).as_posix()
        self.prefix = "" if rel == "." else rel + "/"
        self.env["GIT_WORK_TREE"] = str(root)

    def init_store(self) -> None:
        """Create the store (a bare repository) if needed, and write its config and attributes."""
        fresh = not (self.directory / "objects").is_dir()
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            if fresh:
                env = {k: v for k, v in self.env.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
                self.run(
                    ["init", "--quiet", "--bare", "--template=", str(self.directory)],
                    env=env,
                    cwd=self.directory,
                )
            for sub in ("info", "no-hooks", "home"):
                (self.directory / sub).mkdir(exist_ok=True, mode=0o700)
            sections: dict[str, list[str]] = {
                "core": [
                    "repositoryformatversion = 0",
                    "logallrefupdates = false",
                    f"hooksPath = {self._hooks}",
                ]
            }
            for key, value in SAFE_CONFIG:
                section, name = key.split(".", 1)
                sections.setdefault(section, []).append(f"{name} = {value}")
            text = "".join(
                f"[{section}]\n" + "".join(f"\t{line}\n" for line in lines)
                for section, lines in sections.items()
            )
            self._write_if_changed(self.directory / "config", text)
            self._write_if_changed(self.directory / "info" / "attributes", ATTRIBUTES)
        except OSError as exc:
            raise CheckpointError(
                f"Cannot keep checkpoints in {self.directory}: {(exc.strerror or str(exc)).lower()}."
            ) from None

    @staticmethod
    def _write_if_changed(path: Path, text: str) -> None:
        data = text.encode("utf-8", "surrogateescape")
        try:
            if path.read_bytes() == data:
                return
        except OSError:
            pass
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def sync_excludes(self) -> None:
        """The store's ``info/exclude``: the user's repository-level and global excludes (kept
        current; reading them runs nothing)."""
        text = "# maintained by OwlTUI: the user's exclude rules\n/.git\n"
        text += _user_excludes(self.user_gitdir, self.source_env)
        self._write_if_changed(self.directory / "info" / "exclude", text + "\n")

    def run(
        self,
        args: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        input: bytes | None = None,
        cwd: Path | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run git on the store; CheckpointError when it cannot start or (with ``check``) fails."""
        try:
            proc = subprocess.run(
                [self.exe, *self._config_args, *args],
                cwd=cwd or self.workspace,
                env=env or self.env,
                input=input,
                capture_output=True,
                stdin=None if input is not None else subprocess.DEVNULL,
            )
        except OSError as exc:
            raise CheckpointError(f"Cannot run git for checkpoints: {exc.strerror or exc}.") from None
        if check and proc.returncode != 0:
            detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            why = (
                detail[-1].removeprefix("fatal: ").removeprefix("error: ")
                if detail
                else f"exit status {proc.returncode}"
            )
            raise CheckpointError(f"Checkpoint git {args[0]} failed: {why}")
        return proc

    def borrowed(self) -> Path | None:
        """The user's objects directory whose blobs the index refers to but the store does not hold
        yet (only ever read, never given to a command that writes objects); None: none."""
        try:
            text = (self.directory / BORROWED_FILE).read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            return None
        return Path(text.strip()) if text.strip() else None

    def git(self, *args: str, input: bytes | None = None) -> bytes:
        """The output of a git call that must succeed."""
        return self.run(args, input=input).stdout
