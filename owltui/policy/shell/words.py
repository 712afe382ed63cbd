"""Words as bash has them after quote removal, and the expansions and arithmetic inside them.

``WordReader`` is the word-level half of the tree walk: it turns a tree-sitter word node into a
``Word`` (``\\touch``, ``"touch"``, ``'to'uch`` and ``$'\\x74ouch'`` are all ``touch``; an
expansion or an unquoted glob or brace expansion makes it ``static=False``) and records what the
word hides (command substitutions, ``${!x}``, arithmetic on variables, computed declarations).
``shell_walk.TreeWalker`` adds the statements on top.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from owltui.policy.shell.model import Analysis, Command, Word, is_dangerous_var

if TYPE_CHECKING:
    from tree_sitter import Node

_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"})
WORDISH = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "ansi_c_string",
        "string",
        "translated_string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "brace_expression",
        "extglob_pattern",
        "regex",
    }
)
_BRACE = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
_ANSI = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


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
            m = re.match(r"[0-7]{1,3}", body[i + 1 :])
            assert m is not None
            out.append(chr(int(m.group(), 8) & 0xFF))
            i += 1 + len(m.group())
        elif nxt in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[nxt]
            m = re.match(rf"[0-9a-fA-F]{{1,{size}}}", body[i + 2 :])
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
        if ch in "*?" or (ch == "[" and "]" in text[i + 1 :]):
            static = False
        value.append(ch)
        mask.append(ch)
        i += 1
    return "".join(value), static, "".join(mask)


def _dq_unescape(text: str) -> str:
    """Backslashes inside double quotes: only before ``$ ` " \\`` and newline."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def numeric_special(node: Node, text: str) -> bool:
    """``$#``, ``$?``, ``$$``, ``$!``: always numbers, so safe in arithmetic."""
    return (
        node.type in ("simple_expansion", "special_variable_name")
        and text.lstrip("$") in "#?$!"
        and len(text.lstrip("$")) == 1
    )


class WordReader:
    """Words, expansions, arithmetic, assignments and tests; ``stmt`` is the walk's (a subclass)."""

    def __init__(self, out: Analysis, depth: int = 0, collect: list[Command] | None = None) -> None:
        self.out = out
        self.depth = depth
        self.collect = out.commands if collect is None else collect

    # ---- findings ------------------------------------------------------------------------
    def hide(self, why: str, opaque: bool = False) -> None:
        if why not in self.out.unsafe:
            self.out.unsafe.append(why)
        if opaque and why not in self.out.opaque:
            self.out.opaque.append(why)

    def text(self, node: Node) -> str:
        return (node.text or b"").decode("utf-8", errors="replace")

    def stmt(self, node: Node, stdin: Word | None = None, stdin_file: bool = False) -> None:
        """A statement inside a word (a command substitution); the tree walk overrides this."""
        raise NotImplementedError

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
            if child.type in WORDISH:
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
                self.hide(
                    "a substring offset is arithmetic on variables, which can run hidden code", opaque=True
                )
            elif child.type in WORDISH:
                self.word(child)
            after_colon = False

    def subscript(self, node: Node) -> None:
        index = node.child_by_field_name("index")
        if index is None:
            return
        if index.type == "number" or self.text(index) in ("@", "*"):
            return
        self.hide("an array subscript is arithmetic, which can run hidden code", opaque=True)
        if index.type in WORDISH:
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
            elif numeric_special(n, self.text(n)):
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
            if n.type in WORDISH:
                self.word(n)
            elif n.type == "test_operator":
                op = self.text(n)
                if (double or op == "-v") and op in _ARITH_TEST_OPS:
                    operands = [
                        c for c in (n.parent.named_children if n.parent else []) if c.type != "test_operator"
                    ]
                    risky = (
                        ["[" in self.text(c) for c in operands]
                        if op == "-v"
                        else [c.type != "number" and not numeric_special(c, self.text(c)) for c in operands]
                    )
                    if any(risky):
                        self.hide(
                            f"{op} in a test evaluates arithmetic on variables, which can run hidden code",
                            opaque=True,
                        )
            else:
                stack.extend(n.named_children)
