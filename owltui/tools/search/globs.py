"""Globs for ``grep`` and ``find``: ``glob_regex`` (a glob as a regex over relative paths),
``plan_glob`` (how rg runs a glob: a directory to search, rg arguments, a regex still checked here)
and ``relative_to`` (a path rg printed, relative to the search root)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_META = re.compile(r"[*?\[\]{}]")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over ``/``-separated relative paths: ``*`` and ``?`` stay within one
    segment, ``**`` crosses segments, ``{a,b}`` is either; a pattern without ``/`` matches the name at
    any depth, one with ``/`` (or a leading ``/``) is anchored at the search root."""
    pattern = pattern.strip().removeprefix("./")
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    out = [] if anchored else ["(?:.*/)?"]
    i = 0
    depth = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
        elif pattern[i] == "{":
            out.append("(?:")
            depth += 1
            i += 1
        elif pattern[i] == "}" and depth:
            out.append(")")
            depth -= 1
            i += 1
        elif pattern[i] == "," and depth:
            out.append("|")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    out.append(")" * depth)
    return re.compile("".join(out) + "$")


@dataclass
class GlobPlan:
    """How a glob runs in rg: the directory its literal leading part names (searched like ``path``),
    a file-name glob rg applies (as a file type, which unlike ``-g`` never overrides ignore rules),
    an exclusion ``-g`` for ``!`` globs, and a regex checked here when rg cannot say it all."""

    subdir: str = ""
    args: list[str] = field(default_factory=list)
    check: re.Pattern[str] | None = None


def _name_type(name: str) -> list[str]:
    """rg arguments that keep files whose name matches ``name`` (none when every name does)."""
    return [] if name in ("**", "*") else ["--type-add", f"owlglob:{name}", "--type", "owlglob"]


def plan_glob(glob: str | None) -> GlobPlan:
    if not glob or not glob.strip():
        return GlobPlan()
    g = glob.strip()
    if g.startswith("!"):
        return GlobPlan(args=["--glob", g])
    g = g.removeprefix("./")
    anchored = g.startswith("/")
    g = g.lstrip("/")
    anywhere = False  # a leading '**/': the rest may start at any depth
    while g.startswith("**/"):
        g = g[3:]
        anywhere = True
    if not g:
        return GlobPlan()
    if g.endswith("/"):  # a directory: everything under it
        return GlobPlan(check=glob_regex(("/" if anchored else "") + g + "**"))
    segments = g.split("/")
    if anywhere and len(segments) > 1:
        return GlobPlan(args=_name_type(segments[-1]), check=glob_regex("/**/" + g))
    prefix: list[str] = []
    while len(segments) > 1 and not _META.search(segments[0]) and segments[0] not in ("..", "."):
        prefix.append(segments.pop(0))
    name = segments[-1]
    args = _name_type(name)
    rest = segments[:-1]
    check = None
    if not rest and (prefix or anchored):  # 'src/*.py', '/setup.py': directly in that directory
        args += ["--max-depth", "1"]
    elif (rest and rest != ["**"]) or "**" in name:
        check = glob_regex("/" + g)  # anchored at the search root
    return GlobPlan("/".join(prefix), args, check)


def relative_to(name: str, base: str) -> str:
    """``name`` (as rg printed it) relative to the search root ``base`` (as rg was given it)."""
    base = base.removeprefix("./").rstrip("/")
    if not base:
        return name
    return name[len(base) + 1 :] if name.startswith(base + "/") else name
