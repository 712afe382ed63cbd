"""Tool names ``mcp__SERVER__TOOL`` within the providers' charset ``^[a-zA-Z0-9_-]{1,64}$``, and the
permission rules that name them (``[allow] mcp = ["SERVER/*", "SERVER/TOOL"]``).

Any other character becomes ``_``; a server's part never contains ``__`` (so the first ``__`` after
the prefix always ends it); a name longer than 64 characters keeps its start and gets a short hash
of the whole, so two long names stay apart.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Iterable
from typing import Literal

PREFIX = "mcp__"
MAX_NAME = 64
MAX_SERVER = 24
_BAD = re.compile(r"[^A-Za-z0-9_-]")
VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _hash(text: str, n: int = 6) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def sanitize(text: str) -> str:
    return _BAD.sub("_", text)


def server_key(name: str) -> str:
    """A server's name as it appears in tool names: the charset, no ``__``, at most 24 characters."""
    key = re.sub(r"_{2,}", "_", sanitize(name)).strip("_") or "server"
    if len(key) > MAX_SERVER:
        key = f"{key[: MAX_SERVER - 7].rstrip('_')}-{_hash(name)}"
    return key


def tool_name(key: str, tool: str) -> str:
    """``mcp__KEY__TOOL`` fitted to 64 characters."""
    name = f"{PREFIX}{key}__{sanitize(tool) or '_'}"
    if len(name) > MAX_NAME:
        name = f"{name[: MAX_NAME - 7]}-{_hash(tool)}"
    return name


def split_tool_name(name: str) -> tuple[str, str] | None:
    """``(server key, tool part)`` of an MCP tool name; None for other tools."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX) :].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


def rule_subject(name: str) -> str | None:
    """What permission rules match for an MCP tool: ``SERVER/TOOL`` (as in its name); else None."""
    parts = split_tool_name(name)
    return None if parts is None else f"{parts[0]}/{parts[1]}"


def rule_matches(patterns: Iterable[str], name: str) -> bool:
    """Does one of the ``mcp`` rule patterns (``"*"``, ``"SERVER/*"``, ``"SERVER/TOOL"``, shell globs)
    match the MCP tool ``name``? False for tools that are not MCP tools."""
    subject = rule_subject(name)
    if subject is None:
        return False
    return any(p == "*" or fnmatch.fnmatchcase(subject, p) for p in patterns)


def proposed_rule(name: str) -> str | None:
    """The rule an "always" answer saves for this call: ``SERVER/TOOL`` (globs escaped)."""
    subject = rule_subject(name)
    return None if subject is None else re.sub(r"([*?\[])", r"[\1]", subject)


def rule_verdict(name: str, allow: Iterable[str], deny: Iterable[str]) -> Literal["allow", "deny"] | None:
    """``[allow] mcp`` / ``[deny] mcp`` rules for the MCP tool ``name`` (deny wins); None: no rule
    matches (the call asks, unless the mode or a trusted read-only hint lets it run)."""
    if rule_matches(deny, name):
        return "deny"
    if rule_matches(allow, name):
        return "allow"
    return None
