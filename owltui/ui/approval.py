"""What an approval shows, in the TUI and in plain mode: the call as it will run, nothing hidden.

- The command (a write's path and content summary, an edit's path and change, any other tool's
  arguments) is shown whole, wrapped, never cut. Characters a terminal would act on or not show are
  drawn as visible escapes: controls as ``\\r``, ``\\t``, ``\\x1b``...; bidi controls (U+202A–202E,
  U+2066–2069, U+200E/F, U+061C), zero-width characters (U+200B–200D, U+2060, U+FEFF) and other
  invisible or unusual ones as ``\\u202e``... Each kind found adds a warning line.
- A write through a symbolic link (the path, a redirection, ``tee``) shows where it lands,
  ``docs/notes.md → /home/u/.bashrc``, with a warning (``write_targets``).
- Why it asks: the permission review's notes. What "always" does: exactly the rules it would save,
  or that it allows this call once and saves nothing.
- A re-run outside the sandbox (a ``bash`` request whose arguments carry ``sandbox: "off"``) is its
  own, louder question with the reason it was blocked, answered once or not at all (no "always").

Answering is never a letter typed into the input: the TUI takes Ctrl+G (focus the approval), then
y / a / n; plain mode and the TUI take ``/allow``, ``/always``, ``/deny`` (optionally followed by the
call id). ``ApprovalView`` is the content; ``rich_text`` and ``plain_lines`` draw it.
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from owltui.session.approvals import is_rerun
from owltui.ui.write_targets import patch_files, write_targets

if TYPE_CHECKING:
    from owltui.policy.permissions.model import Review
    from owltui.session.commands.layer import Commands
    from owltui.session.commands.spec import Reply

BIDI = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C))
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e")
_NAMED = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
RULES_FILE = ".owltui/permissions.toml"

Piece = tuple[str, bool]  # (text, is an escape)

ANSWER_COMMANDS = {"allow": "allow", "always": "always", "deny": "deny"}
TUI_KEYS = "Ctrl+G"  # focuses the oldest waiting approval; then y / a / n


def escape_of(ch: str) -> str | None:
    """The visible escape of a character a terminal would act on or not show as itself; None when
    the character is drawn as itself."""
    named = _NAMED.get(ch)
    if named is not None:
        return named
    o = ord(ch)
    if 0x20 <= o < 0x7F:
        return None
    if o < 0x20 or 0x7F <= o <= 0x9F:
        return f"\\x{o:02x}"
    if ch in BIDI or ch in ZERO_WIDTH or unicodedata.category(ch) in _HIDDEN_CATEGORIES:
        return f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"
    return None


def pieces(text: str, keep: str = "\n") -> list[Piece]:
    """``text`` as runs of plain text and escapes; the characters in ``keep`` stay as they are."""
    out: list[Piece] = []
    run: list[str] = []
    for ch in text:
        esc = None if ch in keep else escape_of(ch)
        if esc is None:
            run.append(ch)
            continue
        if run:
            out.append(("".join(run), False))
            run = []
        out.append((esc, True))
    if run:
        out.append(("".join(run), False))
    return out


def visible(text: str, keep: str = "\n") -> str:
    """``text`` with every hidden or acting character written as its escape (no styling)."""
    return "".join(p for p, _ in pieces(text, keep))


def _char_name(ch: str) -> str:
    named = {
        "\r": "carriage return",
        "\x1b": "escape",
        "\x7f": "delete",
        "\x08": "backspace",
        "\x00": "NUL",
        "\t": "tab",
    }.get(ch)
    return named or unicodedata.name(ch, "").lower() or "unnamed character"


def _listing(found: Counter[str]) -> str:
    parts = []
    for ch, n in found.most_common():
        o = ord(ch)
        code = escape_of(ch) if o < 0xA0 else f"U+{o:04X}"
        parts.append(f"{code} ({_char_name(ch)})" + (f" ×{n}" if n > 1 else ""))
    return ", ".join(parts)


def hidden_warnings(text: str, what: str, keep: str = "\n\t") -> list[str]:
    """One warning line per kind of hidden character in ``text`` (``what``: "the command")."""
    controls: Counter[str] = Counter()
    steering: Counter[str] = Counter()
    unusual: Counter[str] = Counter()
    for ch in text:
        if ch in keep or escape_of(ch) is None:
            continue
        o = ord(ch)
        if o < 0x20 or 0x7F <= o <= 0x9F:
            controls[ch] += 1
        elif ch in BIDI or ch in ZERO_WIDTH:
            steering[ch] += 1
        else:
            unusual[ch] += 1
    out: list[str] = []
    if controls:
        out.append(
            f"⚠ {what} contains control characters a terminal would act on or hide: "
            f"{_listing(controls)} — shown as escapes"
        )
    if steering:
        out.append(
            f"⚠ {what} contains invisible or direction-changing characters: {_listing(steering)} "
            "— what you read may not be what runs; shown as \\u escapes"
        )
    if unusual:
        out.append(f"⚠ {what} contains unusual characters: {_listing(unusual)} — shown as escapes")
    return out


@dataclass
class ApprovalView:
    """An approval's content. ``fields``: (label, text) rows shown whole; ``warnings``: hidden
    characters found; ``why``: why it asks; ``always``: what "always" does (None when it is not
    offered); ``choices``: (key, label, decision); ``alerts``: what the user must not miss (a write
    outside the sandbox's writable roots), drawn in red."""

    call_id: str
    name: str
    rerun: bool
    title: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    always: str | None = None
    choices: list[tuple[str, str, str]] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)

    @property
    def decisions(self) -> list[str]:
        return [d for _k, _l, d in self.choices]


def _count_lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def build_view(
    call_id: str,
    name: str,
    arguments: dict[str, Any],
    review: Review | None = None,
    reason: str = "",
    workspace: Path | None = None,
) -> ApprovalView:
    """What the approval of ``name(arguments)`` shows. ``review``: the permission policy's ``Review``
    (``notes``, ``rules``, ``forced``), when known; ``reason``: the policy's one-line reason;
    ``workspace``: what relative paths are taken from, to show where a write through a symbolic
    link lands (``docs/notes.md → /home/u/.bashrc``)."""
    rerun = is_rerun(name, arguments)
    shown_name = visible(name)
    view = ApprovalView(
        call_id,
        name,
        rerun,
        "Run this command once WITHOUT the sandbox?" if rerun else f"Allow {shown_name}?",
    )
    texts: list[tuple[str, str]] = []  # (what, text) scanned for hidden characters

    def add(label: str, text: str, what: str) -> None:
        view.fields.append((label, text))
        texts.append((what, text))

    command = arguments.get("command")
    path = arguments.get("path")
    if name == "bash" and isinstance(command, str):
        add("command", command, "the command")
        if rerun:
            blocked = arguments.get("reason")
            add(
                "blocked",
                blocked if isinstance(blocked, str) and blocked else "the sandbox stopped it",
                "the reason",
            )
            view.fields.append(("runs", "WITHOUT the sandbox: it may write anywhere you can"))
        elif arguments.get("timeout") is not None:
            view.fields.append(("timeout", f"{_value(arguments['timeout'])} s"))
        extra = {k: v for k, v in arguments.items() if k not in ("command", "timeout", "sandbox", "reason")}
    elif name == "write" and isinstance(path, str):
        add("path", path, "the path")
        content = arguments.get("content")
        if isinstance(content, str):
            size = len(content.encode("utf-8", "surrogatepass"))
            view.fields.append(
                (
                    "content",
                    f"{_plural(_count_lines(content), 'line')}, "
                    f"{_plural(size, 'byte')} (the start is shown above)",
                )
            )
            texts.append(("the content", content))
        extra = {k: v for k, v in arguments.items() if k not in ("path", "content")}
    elif name == "edit" and isinstance(path, str):
        add("path", path, "the path")
        old, new = arguments.get("old_text"), arguments.get("new_text")
        if isinstance(old, str) and isinstance(new, str):
            every = " at every occurrence" if arguments.get("replace_all") else ""
            view.fields.append(
                (
                    "change",
                    f"replaces {_plural(_count_lines(old), 'line')} with "
                    f"{_plural(_count_lines(new), 'line')}{every} (the diff is above)",
                )
            )
            texts += [("the old text", old), ("the new text", new)]
        extra = {
            k: v for k, v in arguments.items() if k not in ("path", "old_text", "new_text", "replace_all")
        }
    elif name == "apply_patch" and isinstance(arguments.get("input"), str):
        add("files", patch_files(arguments["input"]), "the paths")  # the patch itself is shown above
        texts.append(("the patch", arguments["input"]))
        extra = {k: v for k, v in arguments.items() if k != "input"}
    else:
        extra = dict(arguments)
    for key, value in extra.items():
        add(visible(str(key)), _value(value), f"`{visible(str(key))}`")
    for link in write_targets(name, arguments, workspace):  # a write a symbolic link sends elsewhere
        row = next((i for i, (label, _t) in enumerate(view.fields) if label == "path"), None)
        if row is not None and name in ("write", "edit"):
            view.fields[row] = ("path", link.arrow)
        else:
            view.fields.append(("writes", link.arrow))  # a redirection's or tee's target
        texts.append(("the link target", link.lands))
        view.warnings.append(link.warning(lambda text: visible(text, keep="")))
    for what, text in texts:
        view.warnings += hidden_warnings(text, what)

    if rerun:
        view.choices = [("y", "run once without the sandbox", "allow"), ("n", "keep it blocked", "deny")]
        return view
    view.choices = [("y", "allow once", "allow"), ("a", "always", "always"), ("n", "deny", "deny")]
    if review is not None:
        notes = [visible(str(n), keep="") for n in review.notes]
        view.why = notes or [f"no allow rule covers this {shown_name} call in this permission mode"]
        if review.forced:
            view.why.append("this asks in every permission mode, --yes included")
        if review.outside_roots is not None:
            view.alerts.append(f"lands outside the sandbox's writable roots: {visible(review.outside_roots)}")
        rules = [str(r) for r in review.rules]
        if rules:
            listed = ", ".join(visible(json.dumps(r, ensure_ascii=False), keep="") for r in rules)
            view.always = f"saves {shown_name} = [{listed}] in {RULES_FILE}"
        else:
            view.always = "allows this once; saves no rule"
    elif reason:
        view.why = [visible(reason, keep="")]
    return view


def keys_hint(view: ApprovalView, focused: bool) -> list[Piece]:
    """The answer keys, as the TUI shows them (the approval focused or not)."""
    out: list[Piece] = [] if focused else [(f"{TUI_KEYS}, then ", False)]
    for i, (key, label, _d) in enumerate(view.choices):
        out += [("  " if i else "", False), (key, True), (f" {label}", False)]
    out.append(
        (
            "   Esc back to the input"
            if focused
            else "   (or /" + " /".join(c for c, d in ANSWER_COMMANDS.items() if d in view.decisions) + ")",
            False,
        )
    )
    return out


def _styled(text: str, base: str = "", escape_style: str = "bold reverse") -> Text:
    out = Text(style=base, overflow="fold")
    for part, esc in pieces(text):
        out.append(part, style=escape_style if esc else "")
    return out


def rich_view(view: ApprovalView, focused: bool = False) -> Table:
    """The approval as a two-column grid (label, text); the text column wraps and folds, so every
    character is drawn at any width."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(ratio=1, overflow="fold")
    mark = "⚠ " if view.rerun else "? "
    grid.add_row(Text(mark.strip(), style="bold"), Text(view.title, style="bold", overflow="fold"))
    for label, text in view.fields:
        style = "bold" if label in ("command", "path") else ""
        if label == "runs":
            grid.add_row(Text(label), Text(text, style="bold", overflow="fold"))
            continue
        grid.add_row(Text(label), _styled(text, style))
    for warning in view.warnings:
        grid.add_row(Text("warning"), Text(warning, style="bold", overflow="fold"))
    for alert in view.alerts:
        grid.add_row(Text("outside", style="bold red"), Text(alert, style="bold red", overflow="fold"))
    for line in view.why:
        grid.add_row(Text("why"), Text(line, overflow="fold"))
    if view.always is not None:
        grid.add_row(Text("always"), Text(view.always, overflow="fold"))
    hint = Text(overflow="fold")
    for part, key in keys_hint(view, focused):
        hint.append(part, style="bold reverse" if key else "")
    grid.add_row(Text("answer"), hint)
    return grid


def plain_lines(view: ApprovalView) -> list[str]:
    """The approval as lines for plain mode (every line whole; the terminal wraps them)."""
    head = "!" if view.rerun else "?"
    lines = [f"{head} {view.title}  [call {visible(view.call_id)}]"]
    for label, text in view.fields:
        body = visible(text)
        first, *rest = body.split("\n")
        lines.append(f"  {label}: {first}")
        lines += [f"  {' ' * len(label)}  {r}" for r in rest]
    lines += [f"  {w}" for w in view.warnings]
    lines += [f"  ✖ {a}" for a in view.alerts]
    lines += [f"  why: {w}" for w in view.why]
    if view.always is not None:
        lines.append(f"  /always {view.always}")
    answers = [
        f"/{c} ({label})" for c, d in ANSWER_COMMANDS.items() for _k, label, dd in view.choices if d == dd
    ]
    lines.append("  answer with " + ", ".join(answers) + " — a typed line is never an answer")
    return lines


def parse_answer(text: str) -> tuple[str, str | None] | None:
    """``/allow``, ``/always``, ``/deny``, each optionally followed by a call id: (decision, call id);
    None for any other text."""
    words = text.strip().split()
    if not words or not words[0].startswith("/") or len(words) > 2:
        return None
    decision = ANSWER_COMMANDS.get(words[0][1:].lower())
    if decision is None:
        return None
    return decision, (words[1] if len(words) == 2 else None)


def choose(pending: Iterable[Any], call_id: str | None) -> Any | None:
    """The request an answer is for: the one named, else the oldest waiting."""
    waiting = list(pending)
    if call_id is None:
        return waiting[0] if waiting else None
    return next((p for p in waiting if p.call_id == call_id), None)


def answer_approval(
    commands: Commands, pending: Iterable[Any], decision: str, call_id: str | None = None
) -> Reply:
    """``/allow``, ``/always``, ``/deny`` [CALL_ID] in the TUI and plain mode: the oldest waiting
    approval (or ``call_id``'s) answered through the command layer; a re-run outside the sandbox is
    never answered "always"."""
    from owltui.session.commands.spec import Reply

    chosen = choose(pending, call_id)
    if chosen is None:
        which = f" {call_id!r}" if call_id else ""
        return Reply(f"no approval{which} is waiting", "warning", ok=False)
    if chosen.rerun and decision == "always":
        return Reply(
            "a re-run outside the sandbox is allowed once or not at all: /allow or /deny", "warning", ok=False
        )
    return commands.call("approve", call_id=chosen.call_id, decision=decision)
