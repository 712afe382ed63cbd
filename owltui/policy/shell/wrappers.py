"""Wrappers: programs that run another command given as their arguments (``env``, ``command``,
``sudo``, ``xargs``, ``find -exec``, ``timeout``, ``busybox``...).

Each handler records the wrapper's own layer (deny rules can name it; ``needs_allow`` says whether
allow rules must match it), then hands the command it runs back to the walk (``Walker.simple``)
or says why that cannot be known (``Walker.hide``). ``first_operand`` finds where a wrapper's
options end. ``handlers.HANDLERS`` maps a program name to its handler.
"""

from __future__ import annotations

from owltui.policy.shell.model import Walker, Word


def first_operand(args: list[Word], with_arg: str = "", long_with_arg: tuple[str, ...] = ()) -> int | None:
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


def handle_plain(
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
    spec = SIMPLE_WRAPPERS[name]
    start = first_operand(args, spec[0], spec[1])
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


def handle_command(
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
    start = first_operand(args)
    if start is None:
        w.unwrap(name, words, None, needs, via, transparent=True)
        return
    flags = "".join(a.value[1:] for a in args[:start] if a.value.startswith("-"))
    if name == "command" and ("v" in flags or "V" in flags):
        w.record(words, False, via)  # a lookup: runs nothing
        return
    w.unwrap(name, words, args[start:], needs, via, transparent=True, more=more)


def handle_env(
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


def handle_sudo(
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
    start = first_operand(
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


def handle_xargs(
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


def handle_find(
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


def handle_busybox(
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
SIMPLE_WRAPPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "nice": ("n", ("--adjustment",)),
    "nohup": ("", ()),
    "time": ("fo", ("--format", "--output")),
    "timeout": ("sk", ("--signal", "--kill-after")),
    "stdbuf": ("ioe", ("--input", "--output", "--error")),
    "setsid": ("", ()),
    "ionice": ("cnpPu", ("--class", "--classdata", "--pid", "--pgid", "--uid")),
    "exec": ("a", ()),
}
