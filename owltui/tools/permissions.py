"""Permission modes and rules: which tool calls run freely, which ask the user, which are refused.

Modes: ``ask`` (default; reading is free, write/edit/bash ask), ``edits`` (writes and edits inside
the workspace are free too), ``yolo`` (``--yes``: everything runs, except what always asks, below)
and ``read-only`` (write, edit, bash refused; ``--yes`` cannot widen it). Rules live in
``<workspace>/.owltui/permissions.toml``::

    [allow]
    bash = ["git status *", "pytest*"]
    write = ["src/**"]
    [deny]
    bash = ["rm -rf*"]
    read = [".env", "secrets/**"]

They are read once, when the policy is made, and again only when the user saves one ("always"):
a file a tool writes never changes the running policy.

**bash rules** are shell globs matched against each simple command of the parsed command line
(``owltui.tools.shell_parse``): its words after quote removal joined by spaces, NAME=value prefixes
and wrappers (``env``, ``command``, ``timeout``, ``xargs``, ``bash -c '…'``, ...) removed, e.g.
``FOO=1 \\git "status" -s`` is matched as ``git status -s``. A pattern ending in `` *`` also matches
the command with no further words (``"git status *"`` matches ``git status``). A command is allowed
by the rules only when every simple command in it is, and nothing in it runs code the text does
not show (command substitution, ``eval``, ``source``, a shell reading a pipe, ...) and no
redirection writes outside the workspace. Allow rules match a program given by a path only by that
path (``./ls`` is not ``ls``), except for the system directories.

**deny rules** win over everything, ``--yes`` included. A bash deny rule matches a simple command
anywhere in the tree by program name or path (``/usr/bin/touch``, ``\\touch``, ``"touch"``). When a
command could run a denied command without the text showing it (an expansion as the program, a
shell reading its input, a program that runs its arguments such as ``strace touch``), it asks,
even with ``--yes``; with nobody to ask it is refused. ``[deny] read`` patterns also apply to
``grep`` and ``find`` (denied files are left out of their results); they follow symlinks and hard
links, and a pattern without ``/`` matches that name at any depth.

**Protected configuration**: writing or editing ``.owltui/``, ``.git/config``, ``.git/hooks/`` or
the user config directory always asks, in every mode; with nobody to ask it is refused unless an
allow rule names the path exactly. A bash redirection into them asks in every mode too.

**"always"** saves the rules ``proposed_rules(call)`` returns (shown by the approval before it is
answered): program + subcommand for bash (``git status *``, ``npm run test *``, ``pytest *``), the exact
command for destructive programs (``rm``, ``find``, ``git push``...), one rule per simple command, or
none when some part cannot be vouched for; the exact path for write/edit.

Without a working sandbox (``sandbox_enforced`` False) every bash command asks, unless the sandbox
was set off explicitly (``sandbox_off``).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import time
import tomllib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

import tomli_w

from owltui.agent.messages import ToolCall

from .base import is_inside, resolve_path
from .fs import atomic_write
from .shell_parse import Analysis, Command, Word, analyze

log = logging.getLogger(__name__)

Mode = Literal["ask", "edits", "yolo", "read-only"]
MODES: tuple[str, ...] = get_args(Mode)
Answer = Literal["allow", "deny", "always"]
Ask = Callable[[ToolCall, str], Awaitable[Answer]]

RULES_FILE = ".owltui/permissions.toml"
FREE_TOOLS = frozenset({"read", "ls", "grep", "find", "read_result", "job_output", "job_kill"})
EDIT_TOOLS = frozenset({"write", "edit"})
READ_TOOLS = frozenset({"read", "grep", "find"})
SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
SAFE_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
GLOB_CHARS = "*?["
INODE_TTL = 2.0  # seconds a scan of the denied files' inodes is reused

# "always" granularity
SUBCOMMAND_PROGRAMS = frozenset({
    "git", "npm", "yarn", "pnpm", "bun", "cargo", "go", "docker", "podman", "kubectl", "helm", "pip",
    "pip3", "uv", "poetry", "pipx", "gh", "apt", "apt-get", "brew", "systemctl", "make", "dotnet",
    "mvn", "gradle", "terraform", "conda", "rustup", "deno", "nix", "just", "tox", "nox", "hatch",
    "pdm", "bundle", "rake", "mix", "composer", "swift", "zig", "ruff", "cmake", "ctest", "meson",
    "ninja", "rye", "pixi", "task", "turbo", "nx", "lerna",
})
RUNNER_SUBCOMMANDS = frozenset({"run", "run-script", "exec", "x", "dlx", "tool"})
RUNNER_PROGRAMS = frozenset({"npx", "bunx", "pnpx", "uvx"})
INTERPRETERS = re.compile(r"python[0-9.]*|pypy[0-9.]*|node|ruby|perl|php|Rscript|julia|lua|java")
# Programs whose "always" rule is the exact command: a wildcard would allow other, destructive calls.
EXACT_PROGRAMS = frozenset({
    "rm", "rmdir", "mv", "cp", "dd", "shred", "truncate", "chmod", "chown", "chgrp", "ln", "unlink",
    "kill", "pkill", "killall", "find", "xargs", "curl", "wget", "ssh", "scp", "rsync", "sftp", "nc",
    "ncat", "socat", "tee", "sed", "awk", "gawk", "mount", "umount", "mkfs", "reboot", "shutdown",
    "crontab", "at", "install", "sudo", "doas", "su", "eval", "exec", "env", "watch", "strace",
    "docker", "podman", "kubectl", "systemctl", "terraform", "helm",
})
EXACT_SUBCOMMANDS = frozenset({
    "push", "publish", "reset", "clean", "rm", "config", "install", "add", "uninstall", "remove",
    "update-ref", "filter-branch", "filter-repo", "submodule", "rebase", "bisect", "delete", "prune",
    "gc", "apply", "destroy", "login", "logout", "unpublish", "deprecate", "owner", "token",
    "link", "global", "self",
})
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]*")


@dataclass
class Rules:
    allow: dict[str, list[str]] = field(default_factory=dict)
    deny: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Review:
    """The policy's verdict on a call before anyone is asked.

    ``decision``: ``allow`` (runs), ``refuse`` (``reason`` is the refusal) or ``ask`` (``reason`` says
    what needs approval). ``forced``: it asks whatever the mode (protected path, possible denied
    command, no sandbox). ``notes``: why the rules could not decide. ``rules``: what "always" would
    save (empty: nothing can be saved; "always" then allows this call once). ``protected``: why the
    path is protected configuration, if it is."""

    decision: Literal["allow", "ask", "refuse"]
    reason: str = ""
    forced: bool = False
    notes: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    protected: str | None = None


def _patterns(table: Any) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        return {}
    out: dict[str, list[str]] = {}
    for tool, value in table.items():
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        out[str(tool)] = [str(p) for p in items]
    return out


def escape_glob(text: str) -> str:
    """``text`` as a pattern matching only itself: ``*?[`` become ``[*]``, ``[?]``, ``[[]``."""
    return "".join(f"[{c}]" if c in GLOB_CHARS else c for c in text)


def rule_matches(pattern: str, subject: str) -> bool:
    """Shell-glob match (``*`` crosses ``/`` and spaces); ``"P *"`` also matches ``P`` itself."""
    if fnmatch.fnmatchcase(subject, pattern):
        return True
    return pattern.endswith(" *") and fnmatch.fnmatchcase(subject, pattern[:-2])


def _literal_head(pattern: str) -> str:
    cut = min((i for i in (pattern.find(c) for c in GLOB_CHARS) if i >= 0), default=len(pattern))
    return pattern[:cut]


def _could_match(pattern: str, prefix: str) -> bool:
    """Could ``pattern`` match a command that starts with the words ``prefix`` and continues with
    words not known before it runs?"""
    if rule_matches(pattern, prefix):
        return True
    head = _literal_head(pattern)
    start = prefix + " " if prefix else ""
    return head.startswith(start) or start.startswith(head)


def _program_forms(word: Word, for_deny: bool) -> list[str]:
    """How a program word is matched: the name as written, and its basename for deny rules (or for
    allow rules when it lies in a system directory)."""
    value = word.value
    if "/" not in value:
        return [value]
    base = os.path.basename(value) or value
    if for_deny or os.path.dirname(os.path.normpath(value)) in SYSTEM_DIRS:
        return [value, base] if base != value else [value]
    return [value]


def _subjects(cmd: Command, for_deny: bool) -> list[str]:
    if not cmd.words:
        return []
    rest = " ".join(w.value for w in cmd.words[1:])
    tail = (" " + rest if rest else "") + (" \x00" if cmd.more_args and not for_deny else "")
    return [form + tail for form in _program_forms(cmd.words[0], for_deny)]


def _static_prefix(cmd: Command) -> list[str] | None:
    """The forms of the words before the first one not known statically; None if all are known."""
    if all(w.static for w in cmd.words) and not cmd.more_args:
        return None
    words: list[str] = []
    for w in cmd.words:
        if not w.static:
            break
        words.append(w.value)
    if not words:
        return [""]
    rest = words[1:]
    return [" ".join([form, *rest]) for form in _program_forms(Word(words[0]), True)]


def protected_paths(workspace: Path, config_dir: Path | None = None) -> list[Path]:
    """The protected configuration of ``workspace`` (for the sandbox: keep these read-only)."""
    paths = [workspace / ".owltui", workspace / ".git" / "config", workspace / ".git" / "config.worktree",
             workspace / ".git" / "hooks"]
    gitfile = workspace / ".git"
    if gitfile.is_file():  # a worktree or submodule: .git names the real git directory
        try:
            text = gitfile.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        if text.startswith("gitdir:"):
            gitdir = Path(text[7:].strip())
            gitdir = gitdir if gitdir.is_absolute() else workspace / gitdir
            paths += [gitdir / "config", gitdir / "config.worktree", gitdir / "hooks"]
            common = gitdir / "commondir"
            if common.is_file():
                try:
                    cd = Path(common.read_text(encoding="utf-8").strip())
                except OSError:
                    cd = None
                if cd is not None:
                    cd = cd if cd.is_absolute() else gitdir / cd
                    paths += [cd / "config", cd / "hooks"]
    if config_dir is not None:
        paths.append(config_dir)
    return paths


_PROTECTED_WHY = {
    "owltui": "OwlTUI's project configuration (.owltui/: permission rules, commands)",
    "config": "the repository's git configuration, which can make git run commands",
    "hooks": "git hooks, which git runs by itself",
}


def _protected_why(path: Path, config_dir: Path | None) -> str:
    if config_dir is not None and path == config_dir:
        return f"the OwlTUI user configuration ({config_dir})"
    if path.name == ".owltui":
        return _PROTECTED_WHY["owltui"]
    return _PROTECTED_WHY["hooks" if path.name == "hooks" else "config"]


def _default_config_dir() -> Path:
    """``$XDG_CONFIG_HOME/owltui`` as ``owltui.session.paths.config_dir`` has it (tools may not
    import session); the runtime passes the real one."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    base = Path(xdg) if xdg and os.path.isabs(xdg) else home / ".config"
    return base / "owltui"


class PermissionPolicy:
    """Decides each tool call: ``await check(call, read_only)`` is None to run it, else the refusal.

    ``review(call)`` gives the verdict without asking (what an approval should show), and
    ``proposed_rules(call)`` what an "always" answer would save."""

    def __init__(self, workspace: Path, mode: Mode | str = "ask", ask: Ask | None = None, *,
                 sandbox_enforced: bool | Callable[[], bool] = True, sandbox_off: bool = False,
                 config_dir: Path | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}; expected one of {', '.join(MODES)}")
        self.workspace = workspace
        self.mode: str = mode
        self.ask = ask
        self.sandbox_enforced = sandbox_enforced
        self.sandbox_off = sandbox_off
        self.config_dir = config_dir if config_dir is not None else _default_config_dir()
        self._real_ws = Path(os.path.realpath(workspace))
        self._protected = [(Path(os.path.realpath(p)), _protected_why(p, self.config_dir))
                           for p in protected_paths(workspace, self.config_dir)]
        self._inodes: tuple[float, frozenset[tuple[int, int]]] | None = None
        self.rules = self.load_rules()

    # ---- rules ---------------------------------------------------------------------------
    @property
    def rules_path(self) -> Path:
        return self.workspace / RULES_FILE

    def load_rules(self) -> Rules:
        """Read the rules file (the policy calls this at start and after saving a rule only)."""
        try:
            data = tomllib.loads(self.rules_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Rules()
        except (OSError, tomllib.TOMLDecodeError) as exc:
            log.warning("ignoring %s: %s", self.rules_path, exc)
            return Rules()
        return Rules(_patterns(data.get("allow")), _patterns(data.get("deny")))

    def save_rule(self, tool: str, pattern: str) -> None:
        self.save_rules(tool, [pattern])

    def save_rules(self, tool: str, patterns: Iterable[str]) -> None:
        """Add ``patterns`` to ``[allow] tool`` in the file (keeping whatever else it holds) and to
        the running policy."""
        patterns = list(patterns)
        try:
            data: dict[str, Any] = tomllib.loads(self.rules_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, tomllib.TOMLDecodeError) as exc:
            log.warning("not saving a rule to unreadable %s: %s", self.rules_path, exc)
            return
        allow = data.setdefault("allow", {})
        saved = allow.setdefault(tool, [])
        if isinstance(saved, str):
            saved = allow[tool] = [saved]
        for pattern in patterns:
            if pattern not in saved:
                saved.append(pattern)
        atomic_write(self.rules_path, tomli_w.dumps(data).encode("utf-8"))
        # The running policy gains exactly what the user approved: the file is not re-read, so
        # whatever a tool may have put into it meanwhile takes effect only at the next start.
        mine = self.rules.allow.setdefault(tool, [])
        mine.extend(p for p in patterns if p not in mine)

    # ---- sandbox ---------------------------------------------------------------------------
    def _sandboxed(self) -> bool:
        enforced = self.sandbox_enforced
        return bool(enforced() if callable(enforced) else enforced)

    # ---- paths -----------------------------------------------------------------------------
    def protected_reason(self, path: Path) -> str | None:
        """Why writing ``path`` needs an explicit approval (protected configuration), or None."""
        for cand in dict.fromkeys((Path(os.path.normpath(path)), Path(os.path.realpath(path)))):
            for prot, why in self._protected:
                if cand == prot or prot in cand.parents:
                    return why
            for root in (self._real_ws, self.workspace):  # case-insensitive filesystems too
                try:
                    low = [p.lower() for p in cand.relative_to(root).parts]
                except ValueError:
                    continue
                if low[:1] == [".owltui"]:
                    return _PROTECTED_WHY["owltui"]
                if low[:1] == [".git"] and len(low) > 1 and low[1].startswith("config"):
                    return _PROTECTED_WHY["config"]
                if low[:2] == [".git", "hooks"]:
                    return _PROTECTED_WHY["hooks"]
        return None

    def _target(self, call: ToolCall) -> tuple[str | None, bool, Path | None]:
        """The subject rules match (command or relative path), whether it lies outside, the path."""
        if call.name == "bash":
            command = call.arguments.get("command")
            return (command if isinstance(command, str) else None), False, None
        path = call.arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            return None, False, None
        resolved = resolve_path(self.workspace, path)
        if not is_inside(self.workspace, resolved):
            return str(resolved), True, resolved
        try:
            return resolved.relative_to(self.workspace).as_posix(), False, resolved
        except ValueError:  # a link from outside into the workspace: rules see where it leads
            return Path(os.path.realpath(resolved)).relative_to(self._real_ws).as_posix(), False, resolved

    def _path_forms(self, path: Path) -> list[str]:
        """How a path is matched by path rules: relative to the workspace (as given and with
        symlinks resolved), else absolute."""
        forms: list[str] = []
        for cand in (Path(os.path.normpath(path)), Path(os.path.realpath(path))):
            for root in (self.workspace, self._real_ws):
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

    def read_denied(self, path: Path | str) -> str | None:
        """The refusal when ``[deny] read`` covers ``path`` (by name, through symlinks, or as a hard
        link of a denied file); None when it may be read. Also the ``read_filter`` service."""
        patterns = self.rules.deny.get("read", [])
        if not patterns:
            return None
        path = Path(path)
        if not path.is_absolute():
            path = self.workspace / path
        for form in self._path_forms(path):
            for pattern in patterns:
                if self._read_pattern_hit(pattern, form):
                    return f"Refused: the deny rule read = {pattern!r} in {RULES_FILE} covers {form}."
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_nlink > 1 and (st.st_dev, st.st_ino) in self._denied_inodes(patterns):
            return (f"Refused: {path.name} is a hard link to a file the [deny] read rules in {RULES_FILE} "
                    "cover.")
        return None

    # ---- bash ------------------------------------------------------------------------------
    def _allowed(self, cmd: Command) -> str | None:
        for pattern in self.rules.allow.get("bash", []):
            if any(rule_matches(pattern, s) for s in _subjects(cmd, for_deny=False)):
                return pattern
        return None

    def _cwds(self, a: Analysis) -> set[Path] | None:
        """The directories the commands may run in (``cd`` followed statically); None: unknown."""
        cwds: set[Path] = {self.workspace}
        for target in a.cwds:
            if target is None or not target.static:
                return None
            dest = os.path.expanduser(target.value)
            cwds |= {Path(os.path.normpath(c / dest)) for c in cwds}
        return cwds

    def _redirect_problems(self, a: Analysis) -> tuple[list[str], list[str]]:
        """(writes outside the workspace or not known, writes into protected configuration)."""
        outside: list[str] = []
        protected: list[str] = []
        cwds = self._cwds(a)
        moved = cwds is None or any(not is_inside(self.workspace, c) for c in cwds)
        for cmd in a.commands:
            prog = cmd.words[0].value if cmd.words else ""
            if moved and cmd.needs_allow and "/" in prog and not os.path.isabs(os.path.expanduser(prog)):
                outside.append(f"runs {prog} after changing to a directory outside the workspace")
        for w in a.writes:
            if not w.static:
                outside.append(f"writes to a file named by an expansion ({w.value})")
                continue
            value = os.path.expanduser(w.value)
            if value in SAFE_DEVICES or value.startswith("/dev/fd/"):
                continue
            if os.path.isabs(value):
                places = [Path(os.path.normpath(value))]
            elif cwds is None:
                outside.append(f"writes {w.value} after changing to a directory not known in advance")
                continue
            else:
                places = [Path(os.path.normpath(c / value)) for c in cwds]
            for place in places:
                why = self.protected_reason(place)
                if why is not None:
                    protected.append(f"writes {w.value}: {why}")
                    break
                if not is_inside(self.workspace, place):
                    outside.append(f"writes outside the workspace: {place}")
                    break
        return outside, protected

    def _deny_bash(self, a: Analysis) -> tuple[str | None, list[str]]:
        """(the refusal from a matching deny rule, reasons a deny rule might match unseen)."""
        patterns = self.rules.deny.get("bash", [])
        if not patterns:
            return None, []
        if "*" in patterns:
            return f"Refused: the deny rule bash = '*' in {RULES_FILE} blocks this call.", []
        for cmd in a.commands:
            for pattern in patterns:
                if any(rule_matches(pattern, s) for s in _subjects(cmd, for_deny=True)):
                    return (f"Refused: the deny rule bash = {pattern!r} in {RULES_FILE} blocks "
                            f"`{cmd.text}`."), []
        doubts = list(a.opaque)
        if a.error and a.error not in doubts:
            doubts.append(a.error)
        for cmd in a.commands:
            prefixes = _static_prefix(cmd)
            if prefixes is None:
                continue
            hit = next((p for p in patterns for pre in prefixes if _could_match(p, pre)), None)
            if hit is not None:
                doubts.append(f"`{cmd.text}` may expand to a command the deny rule {hit!r} blocks")
        for cmd in a.possible:
            for pattern in patterns:
                if any(rule_matches(pattern, s) for s in _subjects(cmd, for_deny=True)):
                    doubts.append(f"may run `{cmd.text}`, which the deny rule {pattern!r} blocks")
                    break
        return None, list(dict.fromkeys(doubts))

    def _bash_rule(self, cmd: Command) -> str | None:
        """The "always" rule for one simple command; None when no safe rule exists."""
        words = [w.value for w in cmd.words]
        if not words or not all(w.static for w in cmd.words):
            return None
        forms = _program_forms(cmd.words[0], for_deny=False)
        prog = forms[-1] if len(forms) > 1 else forms[0]
        name = cmd.program
        args = words[1:]

        def exact() -> str | None:
            return None if cmd.more_args else escape_glob(" ".join([prog, *args]))

        def plain(i: int) -> bool:
            return i < len(args) and _PLAIN.fullmatch(args[i]) is not None and not args[i].startswith("-")

        if name in EXACT_PROGRAMS:
            return exact()
        if name in SUBCOMMAND_PROGRAMS:
            if not plain(0):
                return exact() if args else escape_glob(prog)
            sub = args[0]
            if sub in EXACT_SUBCOMMANDS:
                return exact()
            if sub in RUNNER_SUBCOMMANDS:
                return escape_glob(f"{prog} {sub} {args[1]}") + " *" if plain(1) else exact()
            return escape_glob(f"{prog} {sub}") + " *"
        if name in RUNNER_PROGRAMS:
            return escape_glob(f"{prog} {args[0]}") + " *" if plain(0) else exact()
        if INTERPRETERS.fullmatch(name):
            if len(args) >= 2 and args[0] == "-m" and plain(1):
                return escape_glob(f"{prog} -m {args[1]}") + " *"
            return escape_glob(f"{prog} {args[0]}") + " *" if plain(0) else exact()
        return escape_glob(prog) + " *"

    def _review_bash(self, call: ToolCall, command: str) -> Review:
        a = analyze(command)
        refusal, doubts = self._deny_bash(a)
        if refusal is not None:
            return Review("refuse", refusal)
        outside, protected = self._redirect_problems(a)
        forced = doubts + protected
        if not self._sandboxed() and not self.sandbox_off:
            forced.append("the sandbox is not available here, so the command would run unconfined")
        rules = self._proposed_bash(a, outside + protected)
        reason = f"run `{command}`"
        if forced:
            notes = list(dict.fromkeys(forced + outside + a.unsafe))
            return Review("ask", reason, forced=True, notes=notes, rules=rules)
        if self.mode == "yolo":
            return Review("allow")
        notes = list(outside)
        if a.error:
            notes.append(a.error)
        notes += [u for u in a.unsafe if u not in notes]
        must = [c for c in a.commands if c.needs_allow]
        unmatched = [c for c in must if self._allowed(c) is None]
        if not notes and must and not unmatched:
            return Review("allow")
        if not must and not notes:
            notes.append("nothing in it is covered by an allow rule")
        notes += [f"no allow rule matches `{c.text}`" for c in unmatched]
        return Review("ask", reason, notes=notes, rules=rules)

    def _proposed_bash(self, a: Analysis, problems: list[str]) -> list[str]:
        if a.error or a.unsafe or a.opaque or problems:
            return []
        rules: list[str] = []
        for cmd in a.commands:
            if not cmd.needs_allow or self._allowed(cmd) is not None:
                continue
            rule = self._bash_rule(cmd)
            if rule is None or not any(rule_matches(rule, s) for s in _subjects(cmd, for_deny=False)):
                return []
            rules.append(rule)
        return list(dict.fromkeys(rules))

    # ---- the verdict -----------------------------------------------------------------------
    def proposed_rules(self, call: ToolCall) -> list[str]:
        """The allow rules (for ``call.name``) an "always" answer would save; empty when none."""
        return self.review(call).rules

    def review(self, call: ToolCall, read_only: bool | None = None) -> Review:
        """The verdict on ``call`` before asking anyone (see ``Review``)."""
        name = call.name
        free = (name in FREE_TOOLS) if read_only is None else (read_only or name in FREE_TOOLS)
        if self.mode == "read-only" and (not free or name == "bash"):
            return Review("refuse", f"Refused: OwlTUI is in read-only mode, so {name} cannot run.")
        if name == "bash":
            command = call.arguments.get("command")
            if not isinstance(command, str):
                return Review("ask", "run bash", notes=["no command given"])
            return self._review_bash(call, command)
        subject, outside, path = self._target(call)
        forms = [subject] if subject is not None else []
        if path is not None:  # through symlinks too
            forms += [f for f in self._path_forms(path) if f != subject]
        for pattern in self.rules.deny.get(name, []):
            if pattern == "*" or any(fnmatch.fnmatchcase(f, pattern) for f in forms):
                return Review("refuse", f"Refused: the deny rule {name} = {pattern!r} in {RULES_FILE} "
                                        "blocks this call.")
        if name in READ_TOOLS and path is not None:
            why = self.read_denied(path)
            if why is not None:
                return Review("refuse", why)
        allow = self.rules.allow.get(name, [])
        if name in EDIT_TOOLS and path is not None:
            prot = self.protected_reason(path)
            if prot is not None:
                exact = any(p == subject or p in (str(path), os.path.realpath(path)) for p in allow)
                if exact:
                    return Review("allow")
                return Review("ask", f"{name} {subject}: {prot}", forced=True, protected=prot,
                              notes=[f"protected: {prot}"])
        if free or self.mode == "yolo":
            return Review("allow")
        if outside:
            return Review("ask", f"{name} outside the workspace: {subject}",
                          notes=["outside the workspace"])
        if "*" in allow or (subject is not None and any(fnmatch.fnmatchcase(subject, p) for p in allow)):
            return Review("allow")
        if self.mode == "edits" and name in EDIT_TOOLS:
            return Review("allow")
        rules = [escape_glob(subject)] if subject is not None and path is not None else ["*"]
        return Review("ask", f"{name} {subject}" if subject else f"run {name}", rules=rules)

    async def check(self, call: ToolCall, read_only: bool) -> str | None:
        verdict = self.review(call, read_only)
        if verdict.decision == "allow":
            return None
        if verdict.decision == "refuse":
            return verdict.reason
        reason = verdict.reason
        if self.ask is None:
            return self._nobody_to_ask(call, verdict)
        answer = await self.ask(call, reason)
        if answer == "deny":
            return f"Refused: the user denied this call ({reason})."
        if answer == "always" and verdict.rules:
            try:
                self.save_rules(call.name, verdict.rules)
            except OSError as exc:
                log.warning("could not save the permission rule: %s", exc)
        return None

    def _nobody_to_ask(self, call: ToolCall, verdict: Review) -> str:
        why = f" ({'; '.join(verdict.notes)})" if verdict.notes else ""
        if verdict.protected is not None:
            return (f"Refused: {verdict.reason} needs an explicit approval and nobody can approve it "
                    f"here. To allow it anyway, name the path exactly in {RULES_FILE}, e.g. "
                    f'[allow] {call.name} = ["{call.arguments.get("path")}"].')
        if verdict.forced:
            return (f"Refused: {call.name} needs approval even with --yes{why}, and nobody can "
                    "approve it here.")
        example = verdict.rules[0] if verdict.rules else "*"
        return (f"Refused: {call.name} needs approval ({verdict.reason}){why} and nobody can approve "
                f"it here. Run with --yes, or allow it with a rule in {RULES_FILE}, e.g. "
                f'[allow] {call.name} = ["{example}"].')
