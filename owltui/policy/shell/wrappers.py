"""Wrappers: programs that run another command (``env``, ``command``, ``sudo``, ``xargs``,
``find -exec``, ``timeout``...), shells given a string (``bash -c``), ``eval``/``source``/``trap``.

Each handler records the wrapper's own layer (deny rules can name it; ``needs_allow`` says whether
allow rules must match it), then hands the command it runs back to the walk (``Walker.simple``)
or says why that cannot be known (``Walker.hide``). ``HANDLERS`` maps a program name to its
handler; ``KNOWN_NAMES`` is every name the analysis treats specially.
"""

from __future__ import annotations

from owltui.policy.shell.model import SAFE_ARGS, SHELLS, Walker, Word


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


def _h_plain(
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


def _h_command(
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
    start = _opts(args)
    if start is None:
        w.unwrap(name, words, None, needs, via, transparent=True)
        return
    flags = "".join(a.value[1:] for a in args[:start] if a.value.startswith("-"))
    if name == "command" and ("v" in flags or "V" in flags):
        w.record(words, False, via)  # a lookup: runs nothing
        return
    w.unwrap(name, words, args[start:], needs, via, transparent=True, more=more)


def _h_env(
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
        if v.startswith("-"):  # an option, or "-" (an empty environment)
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


def _h_sudo(
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
    with_arg = "uC" if name == "doas" else "ugpChrtTDRU"
    start = _opts(
        args,
        with_arg,
        (
            "--user",
            "--group",
            "--prompt",
            "--close-from",
            "--host",
            "--role",
            "--type",
            "--command-timeout",
            "--chdir",
            "--chroot",
            "--other-user",
        ),
    )
    if start is None:
        w.unwrap(name, words, None, needs, via, transparent=False)
        return
    flags = "".join(
        a.value[1:] for a in args[:start] if a.value.startswith("-") and not a.value.startswith("--")
    )
    longs = {a.value for a in args[:start] if a.value.startswith("--")}
    inner = args[start:]
    if "e" in flags or "--edit" in longs:
        w.record(words, needs, via)
        w.hide(f"{name} -e edits files as another user")
        return
    if "s" in flags or "i" in flags or {"--shell", "--login"} & longs:
        if not inner:
            w.record(words, needs, via)
            w.hide(f"{name} starts an interactive shell", opaque=True)
            return
        w.hide(f"{name} -s/-i runs the command through a shell")
    if not inner:
        w.record(words, needs, via)
        return
    w.unwrap(name, words, inner, needs, via, transparent=False, more=more, check_vars=True)


def _h_xargs(
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
        if v in (
            "-a",
            "-d",
            "-E",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ):
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


def _h_find(
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
    w.record(words, needs, via, more)
    i = 0
    while i < len(args):
        v = args[i].value
        if v in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and not (args[j].static and args[j].value in (";", "+")):
                j += 1
            inner = [
                a if a.value == "{}" or "{}" not in a.value else Word(a.value, False) for a in args[i + 1 : j]
            ]
            if inner:
                w.simple(inner, None, False, True, f"find {v}")
            i = j + 1
            continue
        if v in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            w.out.writes.append(args[i + 1])
        i += 1


def _h_eval(
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


def _h_trap(
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
    start = _opts(args)
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


def _h_hidden(
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


def _h_busybox(
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

HANDLERS = {
    **{n: _h_plain for n in _SIMPLE_WRAPPERS},
    "command": _h_command,
    "builtin": _h_command,
    "env": _h_env,
    "sudo": _h_sudo,
    "doas": _h_sudo,
    "xargs": _h_xargs,
    "find": _h_find,
    "eval": _h_eval,
    "source": _h_eval,
    ".": _h_eval,
    "trap": _h_trap,
    "alias": _h_hidden,
    "coproc": _h_hidden,
    "let": _h_hidden,
    "enable": _h_hidden,
    "hash": _h_hidden,
    "busybox": _h_busybox,
}
KNOWN_NAMES = frozenset(HANDLERS) | SHELLS | SAFE_ARGS
