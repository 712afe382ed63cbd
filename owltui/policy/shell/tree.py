"""The tree-sitter-bash parser and what the walk asks of a raw syntax tree.

``bash_parser()`` loads the grammar on the first call (tree-sitter is C: about 10 ms to import, so
only a walk pays it); ``first_error`` names where a text stops parsing; ``join_continuations``
gives the text as bash reads it when a backslash-newline splits a word, which tree-sitter does not
join.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

_parser_instance: Parser | None = None


def bash_parser() -> Parser:
    """The process's one tree-sitter-bash parser, made on the first call."""
    global _parser_instance
    if _parser_instance is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _parser_instance = Parser(Language(tree_sitter_bash.language()))
    return _parser_instance


_CONTINUATION = re.compile(rb"(?<=[^\s\\])\\\n(?=\S)")


def join_continuations(text: str, root: Node) -> str | None:
    """``text`` with the backslash-newlines inside words removed (as bash does), or None when there
    are none (those in comments, quotes and here-documents stay)."""
    data = text.encode("utf-8")
    cuts = []
    for m in _CONTINUATION.finditer(data):
        node = root.descendant_for_byte_range(m.start(), m.start() + 1)
        inside = node
        while inside is not None and inside.type not in (
            "comment",
            "raw_string",
            "heredoc_body",
            "string",
            "ansi_c_string",
        ):
            inside = inside.parent
        if inside is None:
            cuts.append(m.start())
    if not cuts:
        return None
    out = bytearray(data)
    for pos in reversed(cuts):
        del out[pos : pos + 2]
    return out.decode("utf-8", errors="replace")


def first_error(node: Node) -> str | None:
    """The text (at most 30 characters) of the first node that did not parse, or None."""
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.type == "ERROR" or n.is_missing:
            return (n.text or b"").decode("utf-8", errors="replace")[:30] or n.type
        if n.has_error:
            stack = list(n.children) + stack
    return None
