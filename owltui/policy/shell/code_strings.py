"""Code given as a string or kept out of sight: shells (``bash -c``, a script, commands on their
input), ``eval``/``source``/``.``, ``trap`` handlers, and builtins whose effect the command line
does not show (``alias``, ``coproc``, ``let``, ``enable``, ``hash -p``).

A literal string is walked one level deeper (``Walker.nested``); a string or script that is not
known before it runs makes the command opaque (``Walker.hide``). The handlers have the signature of
those in ``wrappers`` and are listed in ``handlers.HANDLERS``; ``shell_command`` is called by the
walk for every name in ``model.SHELLS``.
"""

from __future__ import annotations

from owltui.policy.shell.model import Walker, Word
from owltui.policy.shell.wrappers import first_operand


def shell_command(
    w: Walker,
    name: str,
    words: list[Word],
    args: list[Word],
    stdin: Word | None,
    stdin_file: bool,
    needs_allow: bool,
    via: str | None,
) -> None:
    """A shell (``bash``, ``sh``...): ``-c`` runs its string, else a script or its input."""
    cmode = False
    i = 0
    while i < len(args):
        a = args[i]
        v = a.value
        if not a.static:
            break
        if v in ("--", "-"):
            i += 1
            break
        if v.startswith("--"):
            if v in ("--rcfile", "--init-file"):
                w.hide(f"{name} {v} runs code from a file", opaque=True)
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
    w.record(words, needs_allow and not cmode, via)
    if cmode:
        if not rest:
            return
        script = rest[0]
        if not script.static:
            w.hide(f"{name} -c runs a string that is not known before it runs", opaque=True)
            return
        w.nested(script.value, f"the string given to {name} -c")
        return
    if rest:
        w.hide(f"{name} runs the script {rest[0].value[:60]}, which this command does not show", opaque=True)
        return
    if stdin is not None and stdin.static:
        w.hide(f"{name} reads commands from a here-string or here-document")
        w.nested(stdin.value, f"the input of {name}")
        return
    w.hide(f"{name} reads commands from its input (a pipe or a file)", opaque=True)


def handle_eval(
    w: Walker,
    name: str,
    words: list[Word],
    args: list[Word],
    stdin: Word | None,
    stdin_file: bool,
    needs: bool,
    via: str | None,
    more: bool,
) -> None:
    w.record(words, needs, via)
    if name in ("source", "."):
        target = args[0].value if args else ""
        w.hide(
            f"{name} runs the code in {target[:60] or 'a file'}, which this command does not show",
            opaque=True,
        )
        return
    if not all(a.static for a in args):
        w.hide("eval runs a string that is not known before it runs", opaque=True)
        return
    w.hide("eval runs code from a string")
    w.nested(" ".join(a.value for a in args), "the string given to eval")


def handle_trap(
    w: Walker,
    name: str,
    words: list[Word],
    args: list[Word],
    stdin: Word | None,
    stdin_file: bool,
    needs: bool,
    via: str | None,
    more: bool,
) -> None:
    w.record(words, False, via)
    start = first_operand(args)
    if start is None:
        w.hide("trap with a computed handler", opaque=True)
        return
    handler = args[start : start + 1]
    if not handler or handler[0].value in ("", "-") or len(args[start:]) == 1:
        return
    if not handler[0].static:
        w.hide("trap with a computed handler", opaque=True)
        return
    w.nested(handler[0].value, "the trap handler")


def handle_hidden(
    w: Walker,
    name: str,
    words: list[Word],
    args: list[Word],
    stdin: Word | None,
    stdin_file: bool,
    needs: bool,
    via: str | None,
    more: bool,
) -> None:
    w.record(words, needs, via)
    if name == "hash" and not any(a.value.startswith("-p") for a in args):
        return
    reasons = {
        "alias": "alias defines commands",
        "coproc": "coproc starts a hidden command",
        "let": "let is arithmetic on variables, which can run hidden code",
        "enable": "enable can load builtins from a file",
        "hash": "hash -p changes what a name runs",
    }
    w.hide(reasons.get(name, name), opaque=True)
