"""Redirections: the files a command writes (``>``, ``>>``, ``&>``...) and the input it is given.

``read_redirect`` records a redirection's written file in the walk's ``Analysis.writes`` and tells
the walk what the command reads: a literal here-string or here-document (which a shell given it as
input runs), input from a file, and the statements tree-sitter hangs inside a here-document's
redirection (which the walk visits after the command).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from owltui.policy.shell.model import Word
from owltui.policy.shell.words import WordReader

if TYPE_CHECKING:
    from tree_sitter import Node

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})


def read_redirect(reader: WordReader, node: Node) -> tuple[Word | None, bool, list[Node]]:
    """Record a redirection; returns (literal stdin, stdin from a file, statements inside)."""
    t = node.type
    after: list[Node] = []
    if t == "file_redirect":
        op = next((c.type for c in node.children if not c.is_named), "")
        dest = node.child_by_field_name("destination")
        if dest is None:
            return None, False, after
        target = reader.word(dest)
        if op in _WRITE_OPS:
            if op == ">&" and (target.value.isdigit() or target.value == "-"):
                return None, False, after
            reader.out.writes.append(target)
        return None, op == "<", after
    if t == "herestring_redirect":
        parts = [c for c in node.named_children]
        word = reader.word(parts[-1]) if parts else Word("", True)
        return word, False, after
    if t == "heredoc_redirect":
        start = node.child_by_field_name("heredoc_start") or next(
            (c for c in node.children if c.type == "heredoc_start"), None
        )
        quoted = start is not None and any(q in reader.text(start) for q in "'\"\\")
        literal: Word | None = None
        for child in node.children:
            if child.type == "heredoc_body":
                body = reader.text(child)
                if quoted:
                    literal = Word(body, True)
                    continue
                dynamic = [c for c in child.named_children if c.type != "heredoc_content"]
                for c in dynamic:
                    reader.word(c)
                raw = "".join(reader.text(c) for c in child.named_children if c.type == "heredoc_content")
                if not child.named_children:
                    raw = body
                if "`" in raw or "$(" in raw:
                    reader.hide("a command substitution in a here-document", opaque=True)
                    dynamic.append(child)
                literal = Word(body, not dynamic)
            elif child.type.endswith("redirect"):
                read_redirect(reader, child)
            elif child.is_named and child.type not in ("heredoc_start", "heredoc_end"):
                after.append(child)
        return literal, False, after
    reader.hide(f"unsupported redirection ({t})", opaque=True)
    return None, False, after
