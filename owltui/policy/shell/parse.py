"""What a bash command runs, read statically with tree-sitter-bash, for the permission rules.

``analyze(command)`` parses the text once and returns an ``Analysis``:

- ``commands``: every simple command the text runs, in pipelines, lists, subshells, groups,
  ``if``/``for``/``while``/``case`` bodies, functions and command substitutions, with wrappers
  unwrapped (``env``, ``command``, ``builtin``, ``exec``, ``nice``, ``nohup``, ``time``, ``timeout``,
  ``stdbuf``, ``setsid``, ``ionice``, ``busybox``, ``xargs``, ``find -exec``, ``sudo``/``doas``,
  ``bash -c``/``sh -c`` with a literal string, ``eval``/``trap`` with literal strings) and
  ``NAME=value`` prefixes removed. A wrapper is listed too (deny rules can name it); whether allow
  rules must match it is ``Command.needs_allow``.
- ``possible``: commands that *may* run because a program that runs its arguments got them
  (``strace -f touch x``, ``watch 'touch x'``): deny rules matching them make the call ask.
- ``unsafe``: why allow rules cannot vouch for the text: code that runs without being visible in it
  (command or process substitution, ``eval``, ``source``, a shell reading a here-string or a pipe,
  a function shadowing a command, an assignment to ``PATH`` and friends, ...).
- ``opaque``: the subset of those after which the set of programs that run is unknown (an
  expansion as the command word, ``source``, a shell reading its input, arithmetic on variables);
  with deny rules present such a command asks, ``--yes`` or not.
- ``writes`` / ``cwds``: files written by redirections and the directories ``cd`` moves to.
- ``error``: the text does not parse (tree-sitter recovers; the tree is still walked for deny rules).

Words are normalised as bash would after quote removal (``\\touch``, ``"touch"``, ``'to'uch``,
``$'\\x74ouch'`` are all ``touch``); a word the shell would change (an expansion, an unquoted
glob or brace expansion) is marked ``static=False``.

Why tree-sitter-bash rather than bashlex: it parses everything bash has (``case``, ``[[ ]]``,
arithmetic, arrays, ``select``, ``coproc``, here-strings) where bashlex raises NotImplementedError,
it never throws (errors become ERROR nodes, so deny rules still see the rest of a broken command),
and it is C: ~10 ms to import and ~12 us to parse a typical command, against ~100 ms and ~600 us.
The import happens on the first analysis.

This module owns ``analyze`` (the entry point and the final checks: NUL bytes, functions that
shadow a command). The work is done by ``model`` (``Word``, ``Command``, ``Analysis``, the program
tables), ``tree`` (the parser), ``walk`` (the tree walk: statements, simple commands),
``redirects``, ``words`` (quote removal, expansions, arithmetic), ``wrappers`` (``env``, ``sudo``,
``xargs``, ``find -exec``...), ``code_strings`` (``bash -c``, ``eval``, ``trap``...) and
``handlers`` (which program goes to which of those).
"""

from __future__ import annotations

import shutil

from owltui.policy.shell.handlers import KNOWN_NAMES
from owltui.policy.shell.model import (
    Analysis,
)
from owltui.policy.shell.walk import TreeWalker

__all__ = ["analyze"]


def analyze(command: str) -> Analysis:
    """Everything the permission rules need to know about ``command`` (see the module docstring)."""
    out = Analysis(command)
    if "\x00" in command:
        out.error = "the command contains a NUL character"
        out.unsafe.append(out.error)
        out.opaque.append(out.error)
        return out
    TreeWalker(out).parse(command)
    programs = {c.program for c in out.commands}
    for fn in dict.fromkeys(out.functions):
        if fn in programs or fn in KNOWN_NAMES or shutil.which(fn):
            out.unsafe.append(f"the function {fn} shadows a command")
    return out
