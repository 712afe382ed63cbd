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
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_DEPTH = 8  # nested bash -c / eval strings
_parser_instance: Parser | None = None


def _parser() -> Parser:
    global _parser_instance
    if _parser_instance is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _parser_instance = Parser(Language(tree_sitter_bash.language()))
    return _parser_instance


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


# ---- tables -----------------------------------------------------------------------------------

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash", "yash", "posh",
                    "fish", "csh", "tcsh"})
# Setting these changes what later commands run (PATH, preloads, startup files, configuration).
_DANGEROUS_VARS = re.compile(
    r"PATH|LD_\w*|DYLD_\w*|BASH_ENV|ENV|BASH_FUNC_\w*|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|"
    r"GLOBIGNORE|CDPATH|HOME|XDG_CONFIG_HOME|XDG_CONFIG_DIRS|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|"
    r"PYTHONUSERBASE|PYTHONEXECUTABLE|NODE_OPTIONS|NODE_PATH|PERL5LIB|PERL5OPT|PERLLIB|RUBYOPT|"
    r"RUBYLIB|GIT_\w*|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|SSH_ASKPASS|SUDO_ASKPASS|"
    r"BROWSER|npm_config_\w*|NPM_CONFIG_\w*|PIP_\w*|CARGO_\w*|RUSTC_WRAPPER|RUSTC|CC|CXX|MAKEFLAGS|"
    r"MAKE|SHELL|TMPDIR|ZDOTDIR|INPUTRC|TERMINFO"
)
_NAME_VALUE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=(.*)", re.S)
# Programs that never run their arguments as commands: no "possible" commands from their words.
SAFE_ARGS = frozenset({
    "echo", "printf", "cat", "tac", "head", "tail", "less", "more", "wc", "sort", "uniq", "cut", "paste",
    "tr", "nl", "fold", "fmt", "column", "grep", "egrep", "fgrep", "rg", "ag", "ack", "ls", "tree", "du",
    "df", "stat", "file", "which", "whereis", "type", "pwd", "basename", "dirname", "readlink",
    "realpath", "mkdir", "rmdir", "rm", "cp", "mv", "ln", "chmod", "chown", "chgrp", "touch",
    "truncate", "diff", "cmp", "comm", "md5sum", "sha1sum", "sha256sum", "sha512sum", "base64", "jq",
    "yq", "date", "id", "whoami", "uname", "hostname", "printenv", "true", "false", "test", "[", ":",
    "cd", "pushd", "popd", "export", "unset", "read", "wait", "kill", "tee", "sleep", "seq", "yes",
    "man", "help", "history", "shift", "exit", "return", "break", "continue", "set", "shopt", "umask",
    "ulimit", "jobs", "fg", "bg", "disown",
})
# git subcommands that take no command to run (the others, e.g. bisect run, rebase -x, submodule
# foreach, or a global -c, may).
GIT_SAFE = frozenset({
    "status", "log", "diff", "show", "add", "commit", "branch", "checkout", "switch", "restore",
    "fetch", "pull", "push", "merge", "tag", "stash", "reset", "remote", "init", "clone", "blame",
    "grep", "ls-files", "ls-tree", "rev-parse", "rev-list", "describe", "shortlog", "cherry-pick",
    "revert", "mv", "rm", "clean", "reflog", "apply", "am", "format-patch", "archive", "cat-file",
    "show-ref", "for-each-ref", "name-rev", "range-diff", "notes", "fsck", "gc", "count-objects",
    "version", "help", "worktree", "sparse-checkout", "whatchanged",
})
_SUBSCRIPT_BUILTINS = frozenset({"read", "mapfile", "readarray", "getopts", "unset", "declare", "typeset",
                                 "local", "export", "readonly"})
_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
_WORDISH = frozenset({"word", "number", "raw_string", "ansi_c_string", "string", "translated_string",
                      "concatenation", "simple_expansion", "expansion", "command_substitution",
                      "process_substitution", "arithmetic_expansion", "brace_expression",
                      "extglob_pattern", "regex"})
_CONTAINERS = frozenset({"program", "list", "pipeline", "subshell", "do_group", "else_clause",
                         "elif_clause", "negated_command", "if_statement", "while_statement"})
# Pieces tree-sitter leaves loose inside an ERROR node; walked for what they contain.
_FRAGMENTS = frozenset({"string_content", "heredoc_content", "command_name", "case_item", "array",
                        "binary_expression", "unary_expression", "parenthesized_expression",
                        "postfix_expression", "ternary_expression", "variable_name", "subscript",
                        "file_descriptor", "test_operator", "special_variable_name"})
_MOVES = frozenset({"cd", "pushd", "popd"})
_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_ANSI = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
         "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


def is_dangerous_var(name: str) -> bool:
    return _DANGEROUS_VARS.fullmatch(name) is not None


def _ansi_c(body: str) -> str | None:
    """Decode the inside of ``$'...'``; None when it uses an escape this does not know."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 >= len(body):
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _ANSI:
            out.append(_ANSI[nxt])
            i += 2
        elif nxt in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif nxt in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[nxt]
            m = re.match(rf"[0-9a-fA-F]{{1,{size}}}", body[i + 2:])
            if m is None:
                return None
            try:
                out.append(chr(int(m.group(), 16)))
            except (ValueError, OverflowError):
                return None
            i += 2 + len(m.group())
        elif nxt == "c" and i + 2 < len(body):
            out.append(chr(ord(body[i + 2]) & 0x1F))
            i += 3
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out)


def _unquoted(text: str) -> tuple[str, bool, str]:
    """An unquoted word: (value, static, mask) where mask marks escaped characters as ``_``."""
    value: list[str] = []
    mask: list[str] = []
    static = True
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                value.append(text[i + 1])
                mask.append("_")
            i += 2
            continue
        if ch in "*?" or (ch == "[" and "]" in text[i + 1:]):
            static = False
        value.append(ch)
        mask.append(ch)
        i += 1
    return "".join(value), static, "".join(mask)


def _dq_unescape(text: str) -> str:
    """Backslashes inside double quotes: only before ``$ ` " \\`` and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


class _Walker:
    def __init__(self, out: Analysis, depth: int = 0, collect: list[Command] | None = None) -> None:
        self.out = out
        self.depth = depth
        self.collect = out.commands if collect is None else collect
        self.src = b""

    # ---- findings ------------------------------------------------------------------------
    def hide(self, why: str, opaque: bool = False) -> None:
        if why not in self.out.unsafe:
            self.out.unsafe.append(why)
        if opaque and why not in self.out.opaque:
            self.out.opaque.append(why)

    def text(self, node: Node) -> str:
        return (node.text or b"").decode("utf-8", errors="replace")

    # ---- entry -----------------------------------------------------------------------------
    def parse(self, text: str, what: str | None = None) -> None:
        """Walk ``text``; ``what`` names a nested string (``bash -c``) for messages."""
        if self.depth > MAX_DEPTH:
            self.hide("commands nested too deeply to check", opaque=True)
            return
        tree = _parser().parse(text.encode("utf-8"))
        root = tree.root_node
        if root.has_error:
            near = _first_error(root)
            why = f"could not parse {what or 'the command'}" + (f" (near {near!r})" if near else "")
            if what is None and self.depth == 0:
                self.out.error = why
            self.hide(why, opaque=True)
        self.stmt(root)
        joined = _join_continuations(text, root)
        if joined is not None:
            # tree-sitter splits a word at a backslash-newline; bash joins the two halves
            self.hide("a line continuation inside a word", opaque=True)
            _Walker(self.out, self.depth + 1, self.collect).parse(joined, "the joined lines")

    def nested(self, text: str, what: str, transparent: bool = True) -> None:
        """Commands inside a literal string that a shell will run (``bash -c``, ``eval``)."""
        sub = _Walker(self.out, self.depth + 1, self.collect)
        sub.parse(text, what)
        if not transparent:
            self.hide(f"{what} runs code from a string", opaque=False)

    def maybe(self, words: list[Word]) -> None:
        """Arguments of a program that may run them: record what they would run."""
        if self.depth > MAX_DEPTH:
            return
        for i, w in enumerate(words):
            if not w.static or not w.value or w.value.startswith("-"):
                continue
            self.out.possible.append(Command(tuple(words[i:]), needs_allow=False, via="argument"))
            values = [w.value]
            if _NAME_VALUE.fullmatch(w.value) or re.fullmatch(r"[\w.-]+=.*", w.value, re.S):
                values.append(w.value.split("=", 1)[1])  # key=value: the value may be a command
            for value in values:
                if value is not w.value:
                    self.out.possible.append(Command((Word(value),), needs_allow=False, via="argument"))
                if any(c in value for c in " \t\n;|&()<>$`"):
                    scratch = Analysis(value)
                    _Walker(scratch, self.depth + 1, self.out.possible).parse(value, "an argument")
                    self.out.possible.extend(scratch.possible)

    # ---- statements ------------------------------------------------------------------------
    def stmt(self, node: Node, stdin: Word | None = None, stdin_file: bool = False) -> None:
        t = node.type
        if not node.is_named or t in ("comment", "heredoc_body", "heredoc_end", "heredoc_start"):
            return
        if t in _CONTAINERS:
            for child in node.named_children:
                self.stmt(child)
        elif t == "compound_statement":
            if node.children and node.children[0].type == "((":
                self.arith(node)
            else:
                for child in node.named_children:
                    self.stmt(child)
        elif t == "command":
            self.command(node, stdin, stdin_file)
        elif t == "redirected_statement":
            self.redirected(node)
        elif t == "for_statement":
            for child in node.named_children:
                if child.type == "do_group":
                    self.stmt(child)
                elif child.type != "variable_name":
                    self.word(child)
        elif t == "c_style_for_statement":
            for child in node.named_children:
                if child.type == "do_group":
                    self.stmt(child)
                else:
                    self.arith(child)
        elif t == "case_statement":
            for child in node.named_children:
                if child.type == "case_item":
                    for i, part in enumerate(child.children):
                        if not part.is_named:
                            continue
                        if child.field_name_for_child(i) == "value" or part.type in _WORDISH:
                            self.word(part)
                        else:
                            self.stmt(part)
                else:
                    self.word(child)
        elif t == "function_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                self.out.functions.append(self.text(name))
            body = node.child_by_field_name("body")
            if body is not None:
                self.stmt(body)
        elif t == "declaration_command":
            self.declaration(node)
        elif t in ("variable_assignment", "variable_assignments"):
            for a in [node] if t == "variable_assignment" else node.named_children:
                var = self.assignment(a)
                if var and is_dangerous_var(var):
                    self.hide(f"sets {var}, which changes what later commands run", opaque=True)
        elif t == "unset_command":
            for child in node.named_children:
                if child.type != "variable_name":
                    w = self.word(child)
                    if not w.static or "[" in w.value:
                        self.hide("unset with a computed name can run code", opaque=True)
        elif t == "test_command":
            self.test(node)
        elif t == "ERROR" or t in _FRAGMENTS:  # recovered pieces of a broken command
            for child in node.named_children:
                if child.type in _WORDISH:
                    self.word(child)
                else:
                    self.stmt(child)
        elif t in _WORDISH:
            self.word(node)
        else:
            self.hide(f"unsupported shell construct ({t})", opaque=True)
            for child in node.named_children:
                self.stmt(child)

    def redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        stdin: Word | None = None
        stdin_file = False
        later: list[Node] = []
        for i, child in enumerate(node.children):
            if child == body or not child.is_named:
                continue
            if child.type.endswith("redirect"):
                got, is_file, after = self.redirect(child)
                later += after
                if got is not None or is_file:
                    stdin, stdin_file = got, is_file
            elif node.field_name_for_child(i) != "body":
                later.append(child)
        if body is not None:
            self.stmt(body, stdin, stdin_file)
        for child in later:
            self.stmt(child)

    def redirect(self, node: Node) -> tuple[Word | None, bool, list[Node]]:
        """Record a redirection; returns (literal stdin, stdin from a file, statements inside)."""
        t = node.type
        after: list[Node] = []
        if t == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), "")
            dest = node.child_by_field_name("destination")
            if dest is None:
                return None, False, after
            target = self.word(dest)
            if op in _WRITE_OPS:
                if op == ">&" and (target.value.isdigit() or target.value == "-"):
                    return None, False, after
                self.out.writes.append(target)
            return None, op == "<", after
        if t == "herestring_redirect":
            parts = [c for c in node.named_children]
            word = self.word(parts[-1]) if parts else Word("", True)
            return word, False, after
        if t == "heredoc_redirect":
            start = node.child_by_field_name("heredoc_start") or next(
                (c for c in node.children if c.type == "heredoc_start"), None)
            quoted = start is not None and any(q in self.text(start) for q in "'\"\\")
            literal: Word | None = None
            for child in node.children:
                if child.type == "heredoc_body":
                    body = self.text(child)
                    if quoted:
                        literal = Word(body, True)
                        continue
                    dynamic = [c for c in child.named_children if c.type != "heredoc_content"]
                    for c in dynamic:
                        self.word(c)
                    raw = "".join(self.text(c) for c in child.named_children if c.type == "heredoc_content")
                    if not child.named_children:
                        raw = body
                    if "`" in raw or "$(" in raw:
                        self.hide("a command substitution in a here-document", opaque=True)
                        dynamic.append(child)
                    literal = Word(body, not dynamic)
                elif child.type.endswith("redirect"):
                    self.redirect(child)
                elif child.is_named and child.type not in ("heredoc_start", "heredoc_end"):
                    after.append(child)
            return literal, False, after
        self.hide(f"unsupported redirection ({t})", opaque=True)
        return None, False, after

    # ---- words -----------------------------------------------------------------------------
    def word(self, node: Node) -> Word:
        value, static, _mask = self._word(node)
        return Word(value, static)

    def _word(self, node: Node) -> tuple[str, bool, str]:
        t = node.type
        text = self.text(node)
        if t == "word":
            return _unquoted(text)
        if t == "number":
            return text, True, text
        if t == "raw_string":
            body = text[1:-1]
            return body, True, "_" * len(body)
        if t == "ansi_c_string":
            decoded = _ansi_c(text[2:-1])
            return (text, False, text) if decoded is None else (decoded, True, "_" * len(decoded))
        if t in ("string", "translated_string"):
            parts: list[str] = []
            static = True
            for child in node.named_children:
                if child.type == "string_content":
                    parts.append(_dq_unescape(self.text(child)))
                elif child.type == "string":
                    v, s, _ = self._word(child)
                    parts.append(v)
                    static = static and s
                else:
                    v, _s, _ = self._word(child)
                    parts.append(v)
                    static = False
            value = "".join(parts)
            return value, static, "_" * len(value)
        if t == "concatenation":
            values, masks = [], []
            static = True
            for child in node.children:
                if child.is_named:
                    v, s, m = self._word(child)
                else:  # a bare token such as ``$`` or ``{``
                    v, s, m = self.text(child), child.type not in ("$",), self.text(child)
                values.append(v)
                masks.append(m)
                static = static and s
            mask = "".join(masks)
            if _BRACE.search(mask):
                static = False
            return "".join(values), static, mask
        if t in ("simple_expansion", "expansion"):
            self.expansion(node)
            return text, False, text
        if t in ("command_substitution", "process_substitution"):
            kind = "process substitution" if t == "process_substitution" else "command substitution"
            self.hide(f"{kind} {text[:40]}")
            for child in node.named_children:
                self.stmt(child)
            return text, False, text
        if t == "arithmetic_expansion":
            self.arith(node)
            return text, False, text
        for child in node.named_children:  # brace_expression, extglob_pattern, regex, ...
            if child.type in _WORDISH:
                self.word(child)
        return text, False, text

    def expansion(self, node: Node) -> None:
        """``${...}``: indirection, subscripts and substring offsets evaluate code from variables."""
        after_colon = False
        for i, child in enumerate(node.children):
            if not child.is_named:
                if child.type == "!" and i == 1:
                    self.hide("indirect expansion ${!...} can run hidden code", opaque=True)
                after_colon = child.type == ":"
                continue
            if child.type == "subscript":
                self.subscript(child)
            elif after_colon and child.type != "number":
                self.hide("a substring offset is arithmetic on variables, which can run hidden code",
                          opaque=True)
            elif child.type in _WORDISH:
                self.word(child)
            after_colon = False

    def subscript(self, node: Node) -> None:
        index = node.child_by_field_name("index")
        if index is None:
            return
        if index.type == "number" or self.text(index) in ("@", "*"):
            return
        self.hide("an array subscript is arithmetic, which can run hidden code", opaque=True)
        if index.type in _WORDISH:
            self.word(index)

    def arith(self, node: Node) -> None:
        """Arithmetic: variables in it are evaluated as expressions, ``a[$(cmd)]`` included."""
        variables = False
        stack = list(node.named_children)
        while stack:
            n = stack.pop()
            if n.type in ("command_substitution", "process_substitution", "expansion"):
                self.word(n)
                variables = True
            elif _numeric_special(n, self.text(n)):
                continue
            elif n.type in ("variable_name", "simple_expansion", "subscript", "special_variable_name"):
                variables = True
            elif n.type == "word" and not self.text(n).lstrip("+-").isdigit():
                variables = True
            else:
                stack.extend(n.named_children)
        if variables:
            self.hide("arithmetic on variables can run hidden code", opaque=True)

    def assignment(self, node: Node) -> str | None:
        name = node.child_by_field_name("name")
        if name is not None and name.type == "subscript":
            self.subscript(name)
            inner = name.child_by_field_name("name")
            name = inner
        value = node.child_by_field_name("value")
        if value is not None:
            if value.type == "array":
                for child in value.named_children:
                    self.word(child)
            else:
                self.word(value)
        return self.text(name) if name is not None else None

    def declaration(self, node: Node) -> None:
        keyword = self.text(node.children[0]) if node.children else "declare"
        words = [Word(keyword)]
        for child in node.named_children:
            if child.type == "variable_assignment":
                name = self.assignment(child)
                if name and is_dangerous_var(name):
                    self.hide(f"sets {name}, which changes what later commands run", opaque=True)
                words.append(Word(self.text(child), True))
                continue
            if child.type == "variable_name":
                words.append(Word(self.text(child)))
                continue
            w = self.word(child)
            words.append(w)
            if not w.static:
                self.hide(f"{keyword} with a computed argument can run hidden code", opaque=True)
            elif w.value.startswith("-") and ("i" in w.value or "n" in w.value):
                self.hide(f"{keyword} {w.value} evaluates assigned values as code", opaque=True)
            elif "[" in w.value:
                self.hide("an array subscript is arithmetic, which can run hidden code", opaque=True)
        self.collect.append(Command(tuple(words), needs_allow=False))

    def test(self, node: Node) -> None:
        double = bool(node.children) and node.children[0].type == "[["
        stack = list(node.named_children)
        while stack:
            n = stack.pop()
            if n.type in _WORDISH:
                self.word(n)
            elif n.type == "test_operator":
                op = self.text(n)
                if (double or op == "-v") and op in _ARITH_TEST_OPS:
                    operands = [c for c in (n.parent.named_children if n.parent else [])
                                if c.type != "test_operator"]
                    risky = ["[" in self.text(c) for c in operands] if op == "-v" else [
                        c.type != "number" and not _numeric_special(c, self.text(c)) for c in operands]
                    if any(risky):
                        self.hide(f"{op} in a test evaluates arithmetic on variables, which can run hidden "
                                  "code", opaque=True)
            else:
                stack.extend(n.named_children)

    # ---- simple commands -------------------------------------------------------------------
    def command(self, node: Node, stdin: Word | None, stdin_file: bool) -> None:
        words: list[Word] = []
        for i, child in enumerate(node.children):
            field = node.field_name_for_child(i)
            if child.type == "variable_assignment":
                name = self.assignment(child)
                if name and is_dangerous_var(name):
                    self.hide(f"sets {name} for the command, which changes what it runs", opaque=True)
            elif child.type == "command_name":
                inner = child.named_children
                words.append(self.word(inner[0]) if inner else Word(self.text(child), False))
            elif child.type.endswith("redirect"):
                got, is_file, after = self.redirect(child)
                if got is not None or is_file:
                    stdin, stdin_file = got, is_file
                for a in after:
                    self.stmt(a)
            elif field == "argument" or child.is_named:
                if child.is_named:
                    words.append(self.word(child))
                else:  # a bare token, e.g. ``$`` of ``$"..."``
                    words.append(Word(self.text(child), False))
        self.simple(words, stdin, stdin_file)

    def record(self, words: list[Word], needs_allow: bool, via: str | None, more: bool = False) -> None:
        self.collect.append(Command(tuple(words), needs_allow, more, via))

    def simple(self, words: list[Word], stdin: Word | None = None, stdin_file: bool = False,
               needs_allow: bool = True, via: str | None = None, more: bool = False) -> None:
        if not words:
            return
        prog = words[0]
        if not prog.static or prog.value.startswith("="):
            self.record(words, needs_allow, via, more)
            self.hide(f"the program is not known before it runs ({prog.value[:40]})", opaque=True)
            return
        name = os.path.basename(prog.value) or prog.value
        args = words[1:]
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, name, words, args, stdin, stdin_file, needs_allow, via, more)
            return
        if name in SHELLS:
            self.shell(name, words, args, stdin, stdin_file, needs_allow, via)
            return
        # cd only moves the shell: the redirections and paths after it are checked from there
        self.record(words, needs_allow and name not in _MOVES, via, more)
        if name in ("cd", "pushd"):
            target = next((w for w in args if not (w.static and w.value.startswith("-"))), None)
            self.out.cwds.append(target if target is not None and target.static else None)
        elif name == "popd":
            self.out.cwds.append(None)
        elif name in _SUBSCRIPT_BUILTINS:
            if any("[" in w.value or not w.static for w in args if not w.value.startswith("-")):
                self.hide(f"{name} with a computed or subscripted name can run hidden code", opaque=True)
        elif name == "printf":
            for i, w in enumerate(args[:-1]):
                if w.value == "-v" and ("[" in args[i + 1].value or not args[i + 1].static):
                    self.hide("printf -v into a subscript can run hidden code", opaque=True)
        elif name in ("test", "["):
            for i, w in enumerate(args[:-1]):
                if w.value == "-v" and ("[" in args[i + 1].value or not args[i + 1].static):
                    self.hide("test -v on a subscript can run hidden code", opaque=True)
        if name == "git":
            sub = next((w for w in args), None)
            if sub is None or (sub.static and sub.value in GIT_SAFE):
                return
        elif name in SAFE_ARGS:
            return
        self.maybe(list(args))

    # ---- wrappers --------------------------------------------------------------------------
    def unwrap(self, name: str, words: list[Word], inner: list[Word] | None, needs_allow: bool,
               via: str | None, transparent: bool, more: bool = False, check_vars: bool = False) -> None:
        """Record the wrapper layer, then the command it runs (``inner``; None = unknown)."""
        self.record(words, needs_allow and not transparent, via, more)
        if inner is None:
            self.hide(f"cannot tell which command {name} runs", opaque=True)
            return
        if check_vars:
            while inner and inner[0].static and (m := _NAME_VALUE.fullmatch(inner[0].value)):
                if is_dangerous_var(m.group(1)):
                    self.hide(f"sets {m.group(1)} for the command, which changes what it runs", opaque=True)
                inner = inner[1:]
        if inner:
            self.simple(inner, None, False, True, name, more)

    def shell(self, name: str, words: list[Word], args: list[Word], stdin: Word | None,
              stdin_file: bool, needs_allow: bool, via: str | None) -> None:
        cmode = False
        i = 0
        while i < len(args):
            w = args[i]
            v = w.value
            if not w.static:
                break
            if v in ("--", "-"):
                i += 1
                break
            if v.startswith("--"):
                if v in ("--rcfile", "--init-file"):
                    self.hide(f"{name} {v} runs code from a file", opaque=True)
                    i += 2
                    continue
                i += 1
                continue
            if len(v) > 1 and v[0] in "-+":
                if v[0] == "-" and "c" in v[1:]:
                    cmode = True
                if "o" in v[1:] or "O" in v[1:]:
                    i += 1
                i += 1
                continue
            break
        rest = args[i:]
        self.record(words, needs_allow and not cmode, via)
        if cmode:
            if not rest:
                return
            script = rest[0]
            if not script.static:
                self.hide(f"{name} -c runs a string that is not known before it runs", opaque=True)
                return
            self.nested(script.value, f"the string given to {name} -c")
            return
        if rest:
            self.hide(f"{name} runs the script {rest[0].value[:60]}, which this command does not show",
                      opaque=True)
            return
        if stdin is not None and stdin.static:
            self.hide(f"{name} reads commands from a here-string or here-document")
            self.nested(stdin.value, f"the input of {name}")
            return
        self.hide(f"{name} reads commands from its input (a pipe or a file)", opaque=True)


def _opts(args: list[Word], with_arg: str = "", long_with_arg: tuple[str, ...] = ()) -> int | None:
    """Index of the first operand after options (short ``with_arg`` letters take a value);
    None when an option is an expansion (what follows cannot be known)."""
    i = 0
    while i < len(args):
        w = args[i]
        if not w.static:
            return None
        v = w.value
        if v == "--":
            return i + 1
        if v.startswith("--"):
            i += 2 if v in long_with_arg else 1
            continue
        if v.startswith("-") and len(v) > 1:
            for j, ch in enumerate(v[1:], 1):
                if ch in with_arg:
                    if j == len(v) - 1:
                        i += 1
                    break
            i += 1
            continue
        return i
    return i


def _h_plain(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
             stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    spec = _SIMPLE_WRAPPERS[name]
    start = _opts(args, spec[0], spec[1])
    if start is not None and name == "timeout":
        start = start + 1 if start < len(args) else start  # the duration
    inner = None if start is None else args[start:]
    if name == "time" and inner is not None:
        for i, a in enumerate(args[: start or 0]):
            if a.value in ("-o", "--output") and i + 1 < len(args):
                w.out.writes.append(args[i + 1])
            elif a.value.startswith("--output="):
                w.out.writes.append(Word(a.value.split("=", 1)[1], a.static))
    w.unwrap(name, words, inner, needs, via, transparent=True, more=more, check_vars=name in ("time", "exec"))


def _h_command(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
               stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    start = _opts(args)
    if start is None:
        w.unwrap(name, words, None, needs, via, transparent=True)
        return
    flags = "".join(a.value[1:] for a in args[:start] if a.value.startswith("-"))
    if name == "command" and ("v" in flags or "V" in flags):
        w.record(words, False, via)  # a lookup: runs nothing
        return
    w.unwrap(name, words, args[start:], needs, via, transparent=True, more=more)


def _h_env(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
           stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    i = 0
    split: Word | None = None
    while i < len(args):
        a = args[i]
        if not a.static:
            w.unwrap(name, words, None, needs, via, transparent=True)
            return
        v = a.value
        if v == "--":
            i += 1
            break
        if v in ("-S", "--split-string") and i + 1 < len(args):
            split = args[i + 1]
            i += 2
            continue
        if v.startswith("--split-string="):
            split = Word(v.split("=", 1)[1], a.static)
            i += 1
            continue
        if v.startswith("-S") and len(v) > 2:
            split = Word(v[2:], a.static)
            i += 1
            continue
        if v in ("-C", "--chdir") or v.startswith(("--chdir=", "-C")):
            w.hide("env --chdir runs the command from another directory")
        if v in ("-u", "--unset", "-C", "--chdir"):
            i += 2
            continue
        if v.startswith("-") and v != "-":
            i += 1
            continue
        if v == "-":
            i += 1
            continue
        break
    if split is not None:
        w.record(words, False, via)
        if not split.static:
            w.hide("env -S splits a string that is not known before it runs", opaque=True)
            return
        w.hide("env -S runs a command from a string")
        w.nested(split.value, "the string given to env -S")
        return
    w.unwrap(name, words, args[i:], needs, via, transparent=True, more=more, check_vars=True)


def _h_sudo(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
            stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    with_arg = "uC" if name == "doas" else "ugpChrtTDRU"
    start = _opts(args, with_arg, ("--user", "--group", "--prompt", "--close-from", "--host", "--role",
                                   "--type", "--command-timeout", "--chdir", "--chroot", "--other-user"))
    if start is None:
        w.unwrap(name, words, None, needs, via, transparent=False)
        return
    flags = "".join(a.value[1:] for a in args[:start] if a.value.startswith("-") and
                    not a.value.startswith("--"))
    longs = {a.value for a in args[:start] if a.value.startswith("--")}
    inner = args[start:]
    if "e" in flags or "--edit" in longs:
        w.record(words, needs, via)
        w.hide(f"{name} -e edits files as another user")
        return
    if ("s" in flags or "i" in flags or {"--shell", "--login"} & longs):
        if not inner:
            w.record(words, needs, via)
            w.hide(f"{name} starts an interactive shell", opaque=True)
            return
        w.hide(f"{name} -s/-i runs the command through a shell")
    if not inner:
        w.record(words, needs, via)
        return
    w.unwrap(name, words, inner, needs, via, transparent=False, more=more, check_vars=True)


def _h_xargs(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
             stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    replace: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        if not a.static:
            w.unwrap(name, words, None, needs, via, transparent=True)
            return
        v = a.value
        if v == "--":
            i += 1
            break
        if v == "-I" and i + 1 < len(args):
            replace = args[i + 1].value
            i += 2
            continue
        if v.startswith("-I"):
            replace = v[2:]
        elif v.startswith("-i"):
            replace = v[2:] or "{}"
        elif v == "--replace" or v.startswith("--replace="):
            replace = v.split("=", 1)[1] if "=" in v else "{}"
        if v in ("-a", "-d", "-E", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                 "--max-procs", "--max-chars", "--process-slot-var"):
            i += 2
            continue
        if v.startswith("-") and len(v) > 1:
            i += 1
            continue
        break
    inner = args[i:] or [Word("echo")]
    if replace:
        inner = [a if replace not in a.value else Word(a.value, False) for a in inner]
    w.unwrap(name, words, inner, needs, via, transparent=True, more=not replace)


def _h_find(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
            stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    w.record(words, needs, via, more)
    i = 0
    while i < len(args):
        v = args[i].value
        if v in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and not (args[j].static and args[j].value in (";", "+")):
                j += 1
            inner = [a if a.value == "{}" or "{}" not in a.value else Word(a.value, False)
                     for a in args[i + 1:j]]
            if inner:
                w.simple(inner, None, False, True, f"find {v}")
            i = j + 1
            continue
        if v in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            w.out.writes.append(args[i + 1])
        i += 1


def _h_eval(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
            stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    w.record(words, needs, via)
    if name in ("source", "."):
        target = args[0].value if args else ""
        w.hide(f"{name} runs the code in {target[:60] or 'a file'}, which this command does not show",
               opaque=True)
        return
    if not all(a.static for a in args):
        w.hide("eval runs a string that is not known before it runs", opaque=True)
        return
    w.hide("eval runs code from a string")
    w.nested(" ".join(a.value for a in args), "the string given to eval")


def _h_trap(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
            stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    w.record(words, False, via)
    start = _opts(args)
    if start is None:
        w.hide("trap with a computed handler", opaque=True)
        return
    handler = args[start:start + 1]
    if not handler or handler[0].value in ("", "-") or len(args[start:]) == 1:
        return
    if not handler[0].static:
        w.hide("trap with a computed handler", opaque=True)
        return
    w.nested(handler[0].value, "the trap handler")


def _h_hidden(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
              stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    w.record(words, needs, via)
    if name == "hash" and not any(a.value.startswith("-p") for a in args):
        return
    reasons = {"alias": "alias defines commands", "coproc": "coproc starts a hidden command",
               "let": "let is arithmetic on variables, which can run hidden code",
               "enable": "enable can load builtins from a file", "hash": "hash -p changes what a name runs"}
    w.hide(reasons.get(name, name), opaque=True)


def _h_busybox(w: _Walker, name: str, words: list[Word], args: list[Word], stdin: Word | None,
               stdin_file: bool, needs: bool, via: str | None, more: bool) -> None:
    if not args:
        w.record(words, needs, via)
        return
    w.record(words, False, via)
    w.simple(args, stdin, stdin_file, True, name, more)


# name -> (short options taking a value, long options taking a value)
_SIMPLE_WRAPPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "nice": ("n", ("--adjustment",)),
    "nohup": ("", ()),
    "time": ("fo", ("--format", "--output")),
    "timeout": ("sk", ("--signal", "--kill-after")),
    "stdbuf": ("ioe", ("--input", "--output", "--error")),
    "setsid": ("", ()),
    "ionice": ("cnpPu", ("--class", "--classdata", "--pid", "--pgid", "--uid")),
    "exec": ("a", ()),
}

_HANDLERS = {
    **{n: _h_plain for n in _SIMPLE_WRAPPERS},
    "command": _h_command, "builtin": _h_command,
    "env": _h_env,
    "sudo": _h_sudo, "doas": _h_sudo,
    "xargs": _h_xargs,
    "find": _h_find,
    "eval": _h_eval, "source": _h_eval, ".": _h_eval,
    "trap": _h_trap,
    "alias": _h_hidden, "coproc": _h_hidden, "let": _h_hidden, "enable": _h_hidden, "hash": _h_hidden,
    "busybox": _h_busybox,
}
KNOWN_NAMES = frozenset(_HANDLERS) | SHELLS | SAFE_ARGS


def _numeric_special(node: Node, text: str) -> bool:
    """``$#``, ``$?``, ``$$``, ``$!``: always numbers, so safe in arithmetic."""
    return node.type in ("simple_expansion", "special_variable_name") and text.lstrip("$") in "#?$!" \
        and len(text.lstrip("$")) == 1


_CONTINUATION = re.compile(rb"(?<=[^\s\\])\\\n(?=\S)")


def _join_continuations(text: str, root: Node) -> str | None:
    """``text`` with the backslash-newlines inside words removed (as bash does), or None when there
    are none (those in comments, quotes and here-documents stay)."""
    data = text.encode("utf-8")
    cuts = []
    for m in _CONTINUATION.finditer(data):
        node = root.descendant_for_byte_range(m.start(), m.start() + 1)
        inside = node
        while inside is not None and inside.type not in ("comment", "raw_string", "heredoc_body", "string",
                                                         "ansi_c_string"):
            inside = inside.parent
        if inside is None:
            cuts.append(m.start())
    if not cuts:
        return None
    out = bytearray(data)
    for pos in reversed(cuts):
        del out[pos:pos + 2]
    return out.decode("utf-8", errors="replace")


def _first_error(node: Node) -> str | None:
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.type == "ERROR" or n.is_missing:
            return (n.text or b"").decode("utf-8", errors="replace")[:30] or n.type
        if n.has_error:
            stack = list(n.children) + stack
    return None


def analyze(command: str) -> Analysis:
    """Everything the permission rules need to know about ``command`` (see the module docstring)."""
    out = Analysis(command)
    if "\x00" in command:
        out.error = "the command contains a NUL character"
        out.unsafe.append(out.error)
        out.opaque.append(out.error)
        return out
    _Walker(out).parse(command)
    programs = {c.program for c in out.commands}
    for fn in dict.fromkeys(out.functions):
        if fn in programs or fn in KNOWN_NAMES or shutil.which(fn):
            out.unsafe.append(f"the function {fn} shadows a command")
    return out
