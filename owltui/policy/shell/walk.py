"""The tree walk: every simple command a bash text runs, with its redirections and ``cd`` moves.

``TreeWalker.parse(text)`` parses with tree-sitter-bash (``tree``) and walks statements (pipelines,
lists, subshells, groups, ``if``/``for``/``while``/``case`` bodies, functions), redirections
(``redirects``) and simple commands into an ``Analysis``; words come from ``words.WordReader``;
wrappers are handed to ``wrappers`` and code given as a string to ``code_strings``, which call back
through ``record``/``simple``/``unwrap``/``nested``.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from owltui.policy.shell.code_strings import shell_command
from owltui.policy.shell.handlers import HANDLERS
from owltui.policy.shell.model import (
    GIT_SAFE,
    MAX_DEPTH,
    NAME_VALUE,
    SAFE_ARGS,
    SHELLS,
    Analysis,
    Command,
    Word,
    is_dangerous_var,
)
from owltui.policy.shell.redirects import read_redirect
from owltui.policy.shell.tree import bash_parser, first_error, join_continuations
from owltui.policy.shell.words import WORDISH, WordReader

if TYPE_CHECKING:
    from tree_sitter import Node

_SUBSCRIPT_BUILTINS = frozenset(
    {"read", "mapfile", "readarray", "getopts", "unset", "declare", "typeset", "local", "export", "readonly"}
)
_CONTAINERS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "subshell",
        "do_group",
        "else_clause",
        "elif_clause",
        "negated_command",
        "if_statement",
        "while_statement",
    }
)
# Pieces tree-sitter leaves loose inside an ERROR node; walked for what they contain.
_FRAGMENTS = frozenset(
    {
        "string_content",
        "heredoc_content",
        "command_name",
        "case_item",
        "array",
        "binary_expression",
        "unary_expression",
        "parenthesized_expression",
        "postfix_expression",
        "ternary_expression",
        "variable_name",
        "subscript",
        "file_descriptor",
        "test_operator",
        "special_variable_name",
    }
)
_MOVES = frozenset({"cd", "pushd", "popd"})


class TreeWalker(WordReader):
    """Walks one text (and, one level deeper each, the strings it hands to a shell) into ``out``."""

    # ---- entry -----------------------------------------------------------------------------
    def parse(self, text: str, what: str | None = None) -> None:
        """Walk ``text``; ``what`` names a nested string (``bash -c``) for messages."""
        if self.depth > MAX_DEPTH:
            self.hide("commands nested too deeply to check", opaque=True)
            return
        tree = bash_parser().parse(text.encode("utf-8"))
        root = tree.root_node
        if root.has_error:
            near = first_error(root)
            why = f"could not parse {what or 'the command'}" + (f" (near {near!r})" if near else "")
            if what is None and self.depth == 0:
                self.out.error = why
            self.hide(why, opaque=True)
        self.stmt(root)
        joined = join_continuations(text, root)
        if joined is not None:
            # tree-sitter splits a word at a backslash-newline; bash joins the two halves
            self.hide("a line continuation inside a word", opaque=True)
            TreeWalker(self.out, self.depth + 1, self.collect).parse(joined, "the joined lines")

    def nested(self, text: str, what: str, transparent: bool = True) -> None:
        """Commands inside a literal string that a shell will run (``bash -c``, ``eval``)."""
        sub = TreeWalker(self.out, self.depth + 1, self.collect)
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
            if NAME_VALUE.fullmatch(w.value) or re.fullmatch(r"[\w.-]+=.*", w.value, re.S):
                values.append(w.value.split("=", 1)[1])  # key=value: the value may be a command
            for value in values:
                if value is not w.value:
                    self.out.possible.append(Command((Word(value),), needs_allow=False, via="argument"))
                if any(c in value for c in " \t\n;|&()<>$`"):
                    scratch = Analysis(value)
                    TreeWalker(scratch, self.depth + 1, self.out.possible).parse(value, "an argument")
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
                        if child.field_name_for_child(i) == "value" or part.type in WORDISH:
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
                if child.type in WORDISH:
                    self.word(child)
                else:
                    self.stmt(child)
        elif t in WORDISH:
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
                got, is_file, after = read_redirect(self, child)
                later += after
                if got is not None or is_file:
                    stdin, stdin_file = got, is_file
            elif node.field_name_for_child(i) != "body":
                later.append(child)
        if body is not None:
            self.stmt(body, stdin, stdin_file)
        for child in later:
            self.stmt(child)

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
                got, is_file, after = read_redirect(self, child)
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

    def simple(
        self,
        words: list[Word],
        stdin: Word | None = None,
        stdin_file: bool = False,
        needs_allow: bool = True,
        via: str | None = None,
        more: bool = False,
    ) -> None:
        if not words:
            return
        prog = words[0]
        if not prog.static or prog.value.startswith("="):
            self.record(words, needs_allow, via, more)
            self.hide(f"the program is not known before it runs ({prog.value[:40]})", opaque=True)
            return
        name = os.path.basename(prog.value) or prog.value
        args = words[1:]
        handler = HANDLERS.get(name)
        if handler is not None:
            handler(self, name, words, args, stdin, stdin_file, needs_allow, via, more)
            return
        if name in SHELLS:
            shell_command(self, name, words, args, stdin, stdin_file, needs_allow, via)
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
        elif name in ("printf", "test", "["):
            what = "printf -v into a subscript" if name == "printf" else "test -v on a subscript"
            for i, w in enumerate(args[:-1]):
                if w.value == "-v" and ("[" in args[i + 1].value or not args[i + 1].static):
                    self.hide(f"{what} can run hidden code", opaque=True)
        if name == "git":
            sub = next((w for w in args), None)
            if sub is None or (sub.static and sub.value in GIT_SAFE):
                return
        elif name in SAFE_ARGS:
            return
        self.maybe(list(args))

    # ---- a wrapper's layer -----------------------------------------------------------------
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
    ) -> None:
        """Record the wrapper layer, then the command it runs (``inner``; None = unknown)."""
        self.record(words, needs_allow and not transparent, via, more)
        if inner is None:
            self.hide(f"cannot tell which command {name} runs", opaque=True)
            return
        if check_vars:
            while inner and inner[0].static and (m := NAME_VALUE.fullmatch(inner[0].value)):
                if is_dangerous_var(m.group(1)):
                    self.hide(f"sets {m.group(1)} for the command, which changes what it runs", opaque=True)
                inner = inner[1:]
        if inner:
            self.simple(inner, None, False, True, name, more)
