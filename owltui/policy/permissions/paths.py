"""Paths as the permission policy sees them: protected configuration, and ``[deny] read``.

``protected_paths`` lists the configuration a command could use to run code or change the rules
(``.owltui/``, ``.git/config``, ``.git/hooks/``, ``.mcp.json``, ``.claude/settings.json`` and
``settings.local.json``, the user config directory; also for the sandbox), and every ``.git`` at
any depth for the file tools: the resolved git directory and its common one when ``.git`` is a
pointer file.
``PathGuard`` answers for one workspace: why a path is protected, the subject path rules match
(relative to the workspace, through symlinks too), and whether ``[deny] read`` covers a path (by
name, through symlinks, or as a hard link of a denied file).
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Sequence
from pathlib import Path

from owltui.agent.messages import ToolCall
from owltui.agent.tool import ToolError
from owltui.files.paths import PathError, is_inside, resolve_path
from owltui.policy.permissions.rules import RULES_FILE
from owltui.policy.sandbox.git_guard import git_surfaces

INODE_TTL = 2.0  # seconds a scan of the denied files' inodes is reused
MCP_FILE = ".mcp.json"  # the workspace's MCP servers: programs OwlTUI starts
CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")  # their hooks run commands


def protected_paths(workspace: Path, config_dir: Path | None = None) -> list[Path]:
    """The protected configuration of ``workspace`` (for the sandbox: keep these read-only)."""
    paths = [
        workspace / ".owltui",
        workspace / ".git" / "config",
        workspace / ".git" / "config.worktree",
        workspace / ".git" / "hooks",
        workspace / MCP_FILE,
        *(workspace / name for name in CLAUDE_SETTINGS),
    ]
    # a worktree or submodule: .git is a file naming the real git directory, which may share a
    # common one; the file tools never need to write any of them (git itself does)
    surf = git_surfaces(workspace)
    paths += [*surf.gitdirs, *([surf.pointer] if surf.pointer else [])]
    if config_dir is not None:
        paths.append(config_dir)
    return paths


_PROTECTED_WHY = {
    "owltui": "OwlTUI's project configuration (.owltui/: permission rules, commands)",
    "config": "the repository's git configuration, which can make git run commands",
    "hooks": "git hooks, which git runs by itself",
    "mcp": "the workspace's MCP servers (.mcp.json: programs OwlTUI starts)",
    "git": "git metadata (a repository's .git: configuration git reads, which can run commands)",
    "claude": "Claude Code's project settings (.claude/settings.json: hooks, commands it and OwlTUI run)",
    "skills": "the user's skills (SKILL.md folders and their scripts, which you run later)",
}


def protected_why(path: Path, config_dir: Path | None) -> str:
    if config_dir is not None and path == config_dir:
        return f"the OwlTUI user configuration ({config_dir})"
    if path.name == ".owltui":
        return _PROTECTED_WHY["owltui"]
    if path.name == MCP_FILE:
        return _PROTECTED_WHY["mcp"]
    if path.parent.name == ".claude":
        return _PROTECTED_WHY["claude"]
    if path.name in ("hooks", "config"):
        return _PROTECTED_WHY[path.name]
    return _PROTECTED_WHY["git"]


def default_config_dir() -> Path:
    """``$XDG_CONFIG_HOME/owltui`` as ``owltui.session.paths.config_dir`` has it (tools may not
    import session); the runtime passes the real one."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config"
    return base / "owltui"


class PathGuard:
    """The path questions of the policy for ``workspace`` (``config_dir``: the user configuration;
    ``skill_dirs``: the user's skill folders, which the model reads freely but writes only when approved)."""

    def __init__(self, workspace: Path, config_dir: Path, skill_dirs: Sequence[Path] = ()) -> None:
        self.workspace = workspace
        self.real_workspace = Path(os.path.realpath(workspace))
        self._protected = [
            (Path(os.path.realpath(p)), protected_why(p, config_dir))
            for p in protected_paths(workspace, config_dir)
        ]
        self._protected += [(Path(os.path.realpath(p)), _PROTECTED_WHY["skills"]) for p in skill_dirs]
        self._inodes: tuple[float, frozenset[tuple[int, int]]] | None = None

    def protected_reason(self, path: Path) -> str | None:
        """Why writing ``path`` needs an explicit approval (protected configuration), or None."""
        for cand in dict.fromkeys((Path(os.path.normpath(path)), Path(os.path.realpath(path)))):
            for prot, why in self._protected:
                if cand == prot or prot in cand.parents:
                    return why
            for root in (self.real_workspace, self.workspace):  # case-insensitive filesystems too
                try:
                    low = [p.lower() for p in cand.relative_to(root).parts]
                except ValueError:
                    continue
                if low[:1] == [".owltui"]:
                    return _PROTECTED_WHY["owltui"]
                if low == [MCP_FILE]:
                    return _PROTECTED_WHY["mcp"]
                if low[:1] == [".git"] and len(low) > 1 and low[1].startswith("config"):
                    return _PROTECTED_WHY["config"]
                if low[:2] == [".git", "hooks"]:
                    return _PROTECTED_WHY["hooks"]
                if ".git" in low:  # any repository's metadata, at any depth (planted ones too)
                    return _PROTECTED_WHY["git"]
        return None

    def target(self, call: ToolCall) -> tuple[str | None, bool, Path | None]:
        """The subject rules match (command or relative path), whether it lies outside, the path."""
        if call.name == "bash":
            command = call.arguments.get("command")
            return (command if isinstance(command, str) else None), False, None
        path = call.arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            return None, False, None
        try:
            resolved = resolve_path(self.workspace, path)
        except PathError as exc:
            raise ToolError(str(exc)) from None
        if not is_inside(self.workspace, resolved):
            return str(resolved), True, resolved
        try:
            return resolved.relative_to(self.workspace).as_posix(), False, resolved
        except ValueError:  # a link from outside into the workspace: rules see where it leads
            real = Path(os.path.realpath(resolved))
            return real.relative_to(self.real_workspace).as_posix(), False, resolved

    def path_forms(self, path: Path) -> list[str]:
        """How a path is matched by path rules: relative to the workspace (as given and with
        symlinks resolved), else absolute."""
        forms: list[str] = []
        for cand in (Path(os.path.normpath(path)), Path(os.path.realpath(path))):
            for root in (self.workspace, self.real_workspace):
                try:
                    forms.append(cand.relative_to(root).as_posix())
                    break
                except ValueError:
                    continue
            else:
                forms.append(str(cand))
        return list(dict.fromkeys(forms))

    @staticmethod
    def _read_pattern_hit(pattern: str, form: str) -> bool:
        pat = os.path.expanduser(pattern)
        if fnmatch.fnmatchcase(form, pat) or fnmatch.fnmatchcase(form, pat.rstrip("/") + "/*"):
            return True
        if pat.endswith("/**") and fnmatch.fnmatchcase(form, pat[:-3]):  # the directory itself
            return True
        if "/" not in pat.rstrip("/"):  # a bare name matches at any depth, like .gitignore
            parts = form.split("/")
            return any(fnmatch.fnmatchcase(p, pat.rstrip("/")) for p in parts)
        return False

    def _denied_inodes(self, patterns: list[str]) -> frozenset[tuple[int, int]]:
        now = time.monotonic()
        if self._inodes is not None and now - self._inodes[0] < INODE_TTL:
            return self._inodes[1]
        found: set[tuple[int, int]] = set()
        rel = [p for p in patterns if not os.path.isabs(os.path.expanduser(p))]
        absolute = [os.path.expanduser(p) for p in patterns if os.path.isabs(os.path.expanduser(p))]
        import glob

        for pat in absolute:
            for hit in glob.glob(pat, recursive=True):
                try:
                    st = os.stat(hit)
                    found.add((st.st_dev, st.st_ino))
                except OSError:
                    continue
        if rel:
            seen = 0
            for root, dirs, files in os.walk(self.workspace):
                seen += len(files) + len(dirs)
                if seen > 200_000:
                    break
                base = Path(root).relative_to(self.workspace)
                for name in files:
                    form = (base / name).as_posix()
                    if any(self._read_pattern_hit(p, form) for p in rel):
                        try:
                            st = os.stat(Path(root) / name)
                            found.add((st.st_dev, st.st_ino))
                        except OSError:
                            continue
        result = frozenset(found)
        self._inodes = (now, result)
        return result

    def read_denied(self, path: Path | str, patterns: list[str]) -> str | None:
        """The refusal when one of the ``[deny] read`` ``patterns`` covers ``path`` (by name, through
        symlinks, or as a hard link of a denied file); None when it may be read."""
        if not patterns:
            return None
        path = Path(path)
        if not path.is_absolute():
            path = self.workspace / path
        for form in self.path_forms(path):
            for pattern in patterns:
                if self._read_pattern_hit(pattern, form):
                    return f"Refused: the deny rule read = {pattern!r} in {RULES_FILE} covers {form}."
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_nlink > 1 and (st.st_dev, st.st_ino) in self._denied_inodes(patterns):
            return (
                f"Refused: {path.name} is a hard link to a file the [deny] read rules in {RULES_FILE} cover."
            )
        return None
