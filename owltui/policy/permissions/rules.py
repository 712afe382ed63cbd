"""The rules file (``.owltui/permissions.toml``) and how one rule matches a command or a path.

``read_rules``/``add_allow_rules`` read and extend the file; ``rule_matches`` is the shell-glob
match every rule uses; ``subjects``/``static_prefix`` turn a parsed bash command into the strings
rules are matched against (a program given by a path matches allow rules only by that path, except
in the system directories; deny rules also by its name).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from owltui.files.atomic import atomic_write
from owltui.policy.shell.model import Command, Word

log = logging.getLogger(__name__)

RULES_FILE = ".owltui/permissions.toml"
SYSTEM_DIRS = frozenset({"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin"})
GLOB_CHARS = "*?["


@dataclass
class Rules:
    allow: dict[str, list[str]] = field(default_factory=dict)
    deny: dict[str, list[str]] = field(default_factory=dict)


def _patterns(table: Any) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        return {}
    out: dict[str, list[str]] = {}
    for tool, value in table.items():
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        out[str(tool)] = [str(p) for p in items]
    return out


def read_rules(path: Path) -> Rules:
    """The rules in ``path`` (none when it is missing; a warning and none when it is unreadable)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Rules()
    except (OSError, tomllib.TOMLDecodeError) as exc:
        log.warning("ignoring %s: %s", path, exc)
        return Rules()
    return Rules(_patterns(data.get("allow")), _patterns(data.get("deny")))


def add_allow_rules(path: Path, tool: str, patterns: list[str]) -> bool:
    """Add ``patterns`` to ``[allow] tool`` in ``path``, keeping whatever else it holds; False (and
    a warning) when the file exists but cannot be read. OSError when it cannot be written."""
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        log.warning("not saving a rule to unreadable %s: %s", path, exc)
        return False
    allow = data.setdefault("allow", {})
    saved = allow.setdefault(tool, [])
    if isinstance(saved, str):
        saved = allow[tool] = [saved]
    for pattern in patterns:
        if pattern not in saved:
            saved.append(pattern)
    atomic_write(path, tomli_w.dumps(data).encode("utf-8"))
    return True


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


def could_match(pattern: str, prefix: str) -> bool:
    """Could ``pattern`` match a command that starts with the words ``prefix`` and continues with
    words not known before it runs?"""
    if rule_matches(pattern, prefix):
        return True
    head = _literal_head(pattern)
    start = prefix + " " if prefix else ""
    return head.startswith(start) or start.startswith(head)


def program_forms(word: Word, for_deny: bool) -> list[str]:
    """How a program word is matched: the name as written, and its basename for deny rules (or for
    allow rules when it lies in a system directory)."""
    value = word.value
    if "/" not in value:
        return [value]
    base = os.path.basename(value) or value
    if for_deny or os.path.dirname(os.path.normpath(value)) in SYSTEM_DIRS:
        return [value, base] if base != value else [value]
    return [value]


def subjects(cmd: Command, for_deny: bool) -> list[str]:
    if not cmd.words:
        return []
    rest = " ".join(w.value for w in cmd.words[1:])
    tail = (" " + rest if rest else "") + (" \x00" if cmd.more_args and not for_deny else "")
    return [form + tail for form in program_forms(cmd.words[0], for_deny)]


def static_prefix(cmd: Command) -> list[str] | None:
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
    return [" ".join([form, *rest]) for form in program_forms(Word(words[0]), True)]
