"""The vocabulary of the shell analysis: ``Word``, ``Command``, ``Analysis``, the program tables.

Shared by the tree walk (``shell_walk``), the word reader (``shell_words``) and the wrapper handlers
(``shell_wrappers``); ``Walker`` is the part of the walk the wrapper handlers call back into, so
they need not import the walk itself.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Protocol

MAX_DEPTH = 8  # nested bash -c / eval strings


@dataclass(frozen=True)
class Word:
    """One word after quote removal; ``static`` is False when the shell would still change it."""

    value: str
    static: bool = True


@dataclass
class Command:
    words: tuple[Word, ...]
    needs_allow: bool = True  # allow rules must match this layer (False for transparent wrappers)
    more_args: bool = False  # xargs: more arguments come from its input
    via: str | None = None  # the wrapper it was unwrapped from

    @property
    def program(self) -> str:
        """The program's name (basename; the word as written when it ends in ``/``)."""
        value = self.words[0].value if self.words else ""
        return os.path.basename(value) or value

    @property
    def text(self) -> str:
        return " ".join(w.value for w in self.words) + (" …" if self.more_args else "")


@dataclass
class Analysis:
    source: str
    commands: list[Command] = field(default_factory=list)
    possible: list[Command] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    writes: list[Word] = field(default_factory=list)
    cwds: list[Word | None] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    error: str | None = None


SHELLS = frozenset(
    {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh", "fish", "csh", "tcsh"}
)
# Setting these changes what later commands run (PATH, preloads, startup files, configuration).
_DANGEROUS_VARS = re.compile(
    r"PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|BASH_FUNC_\w*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|"
    r"GLOBIGNORE|CDPATH|HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|"
    r"PYTHONUSERBASE|PYTHONEXECUTABLE|NODE_OPTIONS|NODE_PATH|PERL5LIB|PERL5OPT|PERLLIB|RUBYOPT|"
    r"RUBYLIB|GIT_\w*|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|SSH_ASKPASS|SUDO_ASKPASS|"
    r"BROWSER|npm_config_\w*|NPM_CONFIG_\w*|PIP_\w*|CARGO_\w*|RUSTC_WRAPPER|RUSTC|CC|CXX|MAKEFLAGS|"
    r"MAKE|SHELL|TMPDIR|ZDOTDIR|INPUTRC|TERMINFO"
)
NAME_VALUE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=(.*)", re.S)
# Programs that never run their arguments as commands: no "possible" commands from their words.
SAFE_ARGS = frozenset(
    {
        "echo",
        "printf",
        "cat",
        "tac",
        "head",
        "tail",
        "less",
        "more",
        "wc",
        "sort",
        "uniq",
        "cut",
        "paste",
        "tr",
        "nl",
        "fold",
        "fmt",
        "column",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "ls",
        "tree",
        "du",
        "df",
        "stat",
        "file",
        "which",
        "whereis",
        "type",
        "pwd",
        "basename",
        "dirname",
        "readlink",
        "realpath",
        "mkdir",
        "rmdir",
        "rm",
        "cp",
        "mv",
        "ln",
        "chmod",
        "chown",
        "chgrp",
        "touch",
        "truncate",
        "diff",
        "cmp",
        "comm",
        "md5sum",
        "sha1sum",
        "sha256sum",
        "sha512sum",
        "base64",
        "jq",
        "yq",
        "date",
        "id",
        "whoami",
        "uname",
        "hostname",
        "printenv",
        "true",
        "false",
        "test",
        "[",
        ":",
        "cd",
        "pushd",
        "popd",
        "export",
        "unset",
        "read",
        "wait",
        "kill",
        "tee",
        "sleep",
        "seq",
        "yes",
        "man",
        "help",
        "history",
        "shift",
        "exit",
        "return",
        "break",
        "continue",
        "set",
        "shopt",
        "umask",
        "ulimit",
        "jobs",
        "fg",
        "bg",
        "disown",
    }
)
# git subcommands that take no command to run (the others, e.g. bisect run, rebase -x, submodule
# foreach, or a global -c, may).
GIT_SAFE = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "add",
        "commit",
        "branch",
        "checkout",
        "switch",
        "restore",
        "fetch",
        "pull",
        "push",
        "merge",
        "tag",
        "stash",
        "reset",
        "remote",
        "init",
        "clone",
        "blame",
        "grep",
        "ls-files",
        "ls-tree",
        "rev-parse",
        "rev-list",
        "describe",
        "shortlog",
        "cherry-pick",
        "revert",
        "mv",
        "rm",
        "clean",
        "reflog",
        "apply",
        "am",
        "format-patch",
        "archive",
        "cat-file",
        "show-ref",
        "for-each-ref",
        "name-rev",
        "range-diff",
        "notes",
        "fsck",
        "gc",
        "count-objects",
        "version",
        "help",
        "worktree",
        "sparse-checkout",
        "whatchanged",
    }
)


def is_dangerous_var(name: str) -> bool:
    return _DANGEROUS_VARS.fullmatch(name) is not None


class Walker(Protocol):
    """What a wrapper handler may do with the walk it is part of (``shell_walk.TreeWalker``)."""

    out: Analysis

    def hide(self, why: str, opaque: bool = False) -> None: ...

    def record(self, words: list[Word], needs_allow: bool, via: str | None, more: bool = False) -> None: ...

    def simple(
        self,
        words: list[Word],
        stdin: Word | None = None,
        stdin_file: bool = False,
        needs_allow: bool = True,
        via: str | None = None,
        more: bool = False,
    ) -> None: ...

    def unwrap(
        self,
        name: str,
        words: list[Word],
        inner: list[Word] | None,
        needs_allow: bool,
        via: str | None,
        transparent: bool,
        more: bool = False,
        check_vars: bool = False,
    ) -> None: ...

    def nested(self, text: str, what: str, transparent: bool = True) -> None: ...
