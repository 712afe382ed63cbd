"""What an "always" answer saves for a bash command: one allow rule per simple command.

Program + subcommand for tools with subcommands (``git status *``, ``npm run test *``), program +
script or module for interpreters (``python -m pytest *``), the exact command for destructive
programs and subcommands (``rm``, ``find``, ``git push``...), the program otherwise (``pytest *``);
nothing at all when some part of the command cannot be vouched for.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from owltui.policy.permissions.rules import escape_glob, program_forms, rule_matches, subjects
from owltui.policy.shell.model import Analysis, Command

SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "helm",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "pipx",
        "gh",
        "apt",
        "apt-get",
        "brew",
        "systemctl",
        "make",
        "dotnet",
        "mvn",
        "gradle",
        "terraform",
        "conda",
        "rustup",
        "deno",
        "nix",
        "just",
        "tox",
        "nox",
        "hatch",
        "pdm",
        "bundle",
        "rake",
        "mix",
        "composer",
        "swift",
        "zig",
        "ruff",
        "cmake",
        "ctest",
        "meson",
        "ninja",
        "rye",
        "pixi",
        "task",
        "turbo",
        "nx",
        "lerna",
    }
)
RUNNER_SUBCOMMANDS = frozenset({"run", "run-script", "exec", "x", "dlx", "tool"})
RUNNER_PROGRAMS = frozenset({"npx", "bunx", "pnpx", "uvx"})
INTERPRETERS = re.compile(r"python[0-9.]*|pypy[0-9.]*|node|ruby|perl|php|Rscript|julia|lua|java")
# Programs whose "always" rule is the exact command: a wildcard would allow other, destructive calls.
EXACT_PROGRAMS = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "dd",
        "shred",
        "truncate",
        "chmod",
        "chown",
        "chgrp",
        "ln",
        "unlink",
        "kill",
        "pkill",
        "killall",
        "find",
        "xargs",
        "curl",
        "wget",
        "ssh",
        "scp",
        "rsync",
        "sftp",
        "nc",
        "ncat",
        "socat",
        "tee",
        "sed",
        "awk",
        "gawk",
        "mount",
        "umount",
        "mkfs",
        "reboot",
        "shutdown",
        "crontab",
        "at",
        "install",
        "sudo",
        "doas",
        "su",
        "eval",
        "exec",
        "env",
        "watch",
        "strace",
        "docker",
        "podman",
        "kubectl",
        "systemctl",
        "terraform",
        "helm",
    }
)
EXACT_SUBCOMMANDS = frozenset(
    {
        "push",
        "publish",
        "reset",
        "clean",
        "rm",
        "config",
        "install",
        "add",
        "uninstall",
        "remove",
        "update-ref",
        "filter-branch",
        "filter-repo",
        "submodule",
        "rebase",
        "bisect",
        "delete",
        "prune",
        "gc",
        "apply",
        "destroy",
        "login",
        "logout",
        "unpublish",
        "deprecate",
        "owner",
        "token",
        "link",
        "global",
        "self",
    }
)
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/+-]*")


def bash_rule(cmd: Command) -> str | None:
    """The "always" rule for one simple command; None when no safe rule exists."""
    words = [w.value for w in cmd.words]
    if not words or not all(w.static for w in cmd.words):
        return None
    prog = program_forms(cmd.words[0], for_deny=False)[-1]  # the basename in a system directory
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


def proposed_bash(a: Analysis, problems: list[str], allowed: Callable[[Command], str | None]) -> list[str]:
    """The rules for the commands of ``a`` no allow rule (``allowed``) covers yet; empty when the
    command has ``problems`` or hides code, or when some part has no safe rule."""
    if a.error or a.unsafe or a.opaque or problems:
        return []
    rules: list[str] = []
    for cmd in a.commands:
        if not cmd.needs_allow or allowed(cmd) is not None:
            continue
        rule = bash_rule(cmd)
        if rule is None or not any(rule_matches(rule, s) for s in subjects(cmd, for_deny=False)):
            return []
        rules.append(rule)
    return list(dict.fromkeys(rules))
