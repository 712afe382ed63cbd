"""The TUI's key bindings by id, for config ``[keys]`` (``id = "keys"``): what each id does, its
default keys, the keys that are not free (the input's editing keys, Textual's own), and
``check_keys``, which turns a ``[keys]`` table into one-line errors or the keymap the TUI applies.

The TUI declares its bindings with these ids (``tests/ui`` checks that they agree). A user binding
wins over a default: the one exception to "a key taken twice is an error" is the command palette,
which moves from Ctrl+P to ``PALETTE_FALLBACK`` when ``[keys]`` gives Ctrl+P to something else
(``pause = "ctrl+p"`` is the README's example).

No imports beyond the standard library: ``owltui.session.config`` calls this while it validates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# id -> (default keys, what it does)
BINDINGS: dict[str, tuple[str, str]] = {
    "send": ("enter", "send (steering while the agent works)"),
    "follow_up": ("alt+enter,ctrl+j", "send as a follow-up"),
    "newline": ("shift+enter,ctrl+n", "new line"),
    "pop_queue": ("alt+up", "take back the last queued message"),
    "abort": ("escape", "abort the run"),
    "clear": ("ctrl+c", "abort the run / clear the input / quit (twice)"),
    "eof": ("ctrl+d", "quit on an empty input"),
    "pause": ("f2", "pause / resume"),
    "require": ("ctrl+t", "require a tool for the next turn"),
    "approve": ("ctrl+g", "go to the waiting approval"),
    "follow": ("ctrl+end,f4", "follow the output again"),
    "scroll_up": ("pageup", "scroll up"),
    "scroll_down": ("pagedown", "scroll down"),
    "history_search": ("ctrl+r", "search the input history"),
    "toggle_tool": ("ctrl+o", "expand / collapse the last tool block"),
    "queue": ("f3", "select queued messages (edit, delete, move)"),
    "steer_now": ("ctrl+s", "steer now (skip the batch's calls not yet started)"),
    "palette": ("ctrl+p", "the command palette"),
    "mode": ("alt+m,f6", "the next permission mode: ask, edits, plan"),
    "todo": ("f8", "collapse / expand the todo list"),
}
PALETTE_FALLBACK = "f1"

# keys that are not free: the input's editing keys and Textual's quit (what they do, for the error)
RESERVED: dict[str, str] = {
    "ctrl+q": "Textual's quit key",
    "tab": "the completion and focus key",
    "shift+tab": "the focus key",
    "up": "the history key",
    "down": "the history key",
    "left": "a cursor key",
    "right": "a cursor key",
    "home": "a cursor key",
    "end": "a cursor key",
    "backspace": "an editing key",
    "delete": "an editing key",
    "ctrl+a": "the input's line-start key",
    "ctrl+e": "the input's line-end key",
    "ctrl+k": "the input's delete-to-end key",
    "ctrl+u": "the input's delete-to-start key",
    "ctrl+w": "the input's delete-word key",
    "ctrl+backspace": "the input's delete-word key",
    "alt+backspace": "the input's delete-word key",
    "alt+delete": "the input's delete-word key",
    "ctrl+x": "the input's cut key",
    "ctrl+v": "the input's paste key",
    "ctrl+z": "the input's undo key",
    "ctrl+y": "the input's redo key",
    "ctrl+left": "the input's word-left key",
    "ctrl+right": "the input's word-right key",
    "f6": "the input's select-line key",
    "f7": "the input's select-all key",
}

MODIFIERS = ("alt", "ctrl", "hyper", "meta", "shift", "super")
NAMED = {
    "enter",
    "escape",
    "tab",
    "space",
    "backspace",
    "delete",
    "insert",
    "home",
    "end",
    "pageup",
    "pagedown",
    "up",
    "down",
    "left",
    "right",
    # characters Textual names by word
    "exclamation_mark",
    "quotation_mark",
    "number_sign",
    "dollar_sign",
    "percent_sign",
    "ampersand",
    "apostrophe",
    "left_parenthesis",
    "right_parenthesis",
    "asterisk",
    "plus",
    "comma",
    "minus",
    "full_stop",
    "slash",
    "colon",
    "semicolon",
    "less_than_sign",
    "equals_sign",
    "greater_than_sign",
    "question_mark",
    "commercial_at",
    "left_square_bracket",
    "backslash",
    "right_square_bracket",
    "circumflex_accent",
    "underscore",
    "grave_accent",
    "left_curly_bracket",
    "vertical_line",
    "right_curly_bracket",
    "tilde",
}
_FKEY = re.compile(r"f([1-9]|1[0-9]|2[0-4])")
_ALIASES = {
    "esc": "escape",
    "return": "enter",
    "pgup": "pageup",
    "pgdn": "pagedown",
    "del": "delete",
    "ins": "insert",
    "bs": "backspace",
}


class KeysError(ValueError):
    """A ``[keys]`` entry that cannot be used: one line naming it."""


def normalize(key: str) -> str:
    """``"Shift+Ctrl+X"`` -> ``"ctrl+shift+x"`` (modifiers sorted, lower case); KeysError naming
    what is wrong with it."""
    parts = [p.strip().lower() for p in key.strip().split("+")]
    if key.strip().endswith("++"):  # "ctrl++": the plus key
        parts = [*parts[:-2], "plus"]
    *mods, name = parts
    if not name:
        raise KeysError(f"'{key}' names no key")
    bad = [m for m in mods if m not in MODIFIERS]
    if bad:
        raise KeysError(f"'{bad[0]}' in '{key}' is not a modifier (use {', '.join(MODIFIERS)})")
    if len(set(mods)) != len(mods):
        raise KeysError(f"'{key}' repeats a modifier")
    if name in _ALIASES:
        raise KeysError(f"unknown key '{name}' in '{key}' (Textual calls it '{_ALIASES[name]}')")
    if not (len(name) == 1 or name in NAMED or _FKEY.fullmatch(name)):
        raise KeysError(f"unknown key '{name}' in '{key}' (keys look like ctrl+p, alt+enter, f5, escape)")
    return "+".join([*sorted(mods), name])


def split_keys(keys: str) -> list[str]:
    """``"ctrl+end,f4"`` -> ``["ctrl+end", "f4"]`` (normalized)."""
    return [normalize(k) for k in keys.split(",") if k.strip()]


def _types_text(key: str) -> bool:
    """A key without ctrl/alt/super/meta/hyper that types a character into the input."""
    *mods, name = key.split("+")
    if any(m != "shift" for m in mods):
        return False
    return (
        len(name) == 1
        or name in ("space",)
        or (
            name in NAMED
            and name
            not in {
                "enter",
                "escape",
                "tab",
                "backspace",
                "delete",
                "insert",
                "home",
                "end",
                "pageup",
                "pagedown",
                "up",
                "down",
                "left",
                "right",
            }
        )
    )


def check_keys(user: Mapping[str, object]) -> dict[str, str]:
    """The keymap the TUI applies for a ``[keys]`` table: the user's bindings (normalized), plus the
    palette moved to ``PALETTE_FALLBACK`` when a user binding took its key. KeysError (one line) for
    an unknown id, a key that is not a key, a key that types text or belongs to the input, and a key
    given to two ids."""
    chosen: dict[str, list[str]] = {}
    for bid, value in user.items():
        if bid not in BINDINGS:
            raise KeysError(f"[keys] {bid}: unknown binding id (ids: {', '.join(BINDINGS)})")
        if not isinstance(value, str) or not value.strip():
            raise KeysError(f'[keys] {bid}: expected keys as a string, e.g. {bid} = "ctrl+p"')
        try:
            keys = split_keys(value)
        except KeysError as exc:
            raise KeysError(f'[keys] {bid} = "{value}": {exc}') from None
        for key in keys:
            if key in RESERVED:
                raise KeysError(f'[keys] {bid} = "{value}": {key} is {RESERVED[key]}, which cannot be moved')
            if _types_text(key):
                raise KeysError(
                    f'[keys] {bid} = "{value}": {key} types text into the input; '
                    "use a key with ctrl or alt, or an F key"
                )
        chosen[bid] = keys
    final = {bid: chosen.get(bid, split_keys(default)) for bid, (default, _) in BINDINGS.items()}
    moved = "palette" not in chosen and any(final["palette"][0] in keys for keys in chosen.values())
    if moved:
        taken = [bid for bid, keys in chosen.items() if PALETTE_FALLBACK in keys]
        if taken:
            raise KeysError(
                f"[keys] the palette's {final['palette'][0]} is taken, so it would move to "
                f"{PALETTE_FALLBACK}, which {taken[0]} has: give palette a key too"
            )
        final["palette"] = chosen["palette"] = [PALETTE_FALLBACK]
    owner: dict[str, str] = {}
    for bid, keys in final.items():
        for key in keys:
            other = owner.get(key)
            if other is not None:
                mine, theirs = (bid, other) if bid in user else (other, bid)
                said = (
                    f"also given to {theirs}"
                    if theirs in user
                    else f"already {theirs}'s key (move {theirs} too, or pick another key)"
                )
                raise KeysError(f'[keys] {mine} = "{user[mine]}": {key} is {said}')
            owner[key] = bid
    return {bid: ",".join(keys) for bid, keys in chosen.items()}


def default_keys(bid: str) -> list[str]:
    return split_keys(BINDINGS[bid][0])
