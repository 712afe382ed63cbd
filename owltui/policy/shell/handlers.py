"""Which handler a program name goes to: ``HANDLERS`` (the wrappers and the programs that run code
from a string), and ``KNOWN_NAMES``, every name the analysis treats specially (a function of that
name shadows a command the rules rely on).
"""

from __future__ import annotations

from owltui.policy.shell.code_strings import handle_eval, handle_hidden, handle_trap
from owltui.policy.shell.model import SAFE_ARGS, SHELLS
from owltui.policy.shell.wrappers import (
    SIMPLE_WRAPPERS,
    handle_busybox,
    handle_command,
    handle_env,
    handle_find,
    handle_plain,
    handle_sudo,
    handle_xargs,
)

HANDLERS = {
    **{n: handle_plain for n in SIMPLE_WRAPPERS},
    "command": handle_command,
    "builtin": handle_command,
    "env": handle_env,
    "sudo": handle_sudo,
    "doas": handle_sudo,
    "xargs": handle_xargs,
    "find": handle_find,
    "eval": handle_eval,
    "source": handle_eval,
    ".": handle_eval,
    "trap": handle_trap,
    "alias": handle_hidden,
    "coproc": handle_hidden,
    "let": handle_hidden,
    "enable": handle_hidden,
    "hash": handle_hidden,
    "busybox": handle_busybox,
}
KNOWN_NAMES = frozenset(HANDLERS) | SHELLS | SAFE_ARGS
