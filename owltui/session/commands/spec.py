"""How a command is declared and answered: ``Arg``, ``Command``, ``Reply``, ``CommandError``; binding a
slash line's words or an RPC object's fields to a command's arguments; usage, help and the RPC table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from owltui.session.commands.host import Frontend, Host
from owltui.session.describe import Kind, Notice

Args = Mapping[str, Any]


class CommandError(Exception):
    """A command that cannot be carried out: the reason, worded for people (RPC's ``error``)."""

    def __init__(self, text: str, kind: Kind = "error") -> None:
        super().__init__(text)
        self.text = text
        self.kind: Kind = kind


class Unavailable(CommandError):
    """The host or the front end does not offer this (a bare test host, plain mode's themes)."""

    def __init__(self, text: str) -> None:
        super().__init__(text, "warning")


@dataclass(frozen=True)
class Pick:
    """Ask the user to choose; the choice is run as ``command``'s first argument. ``labels``: what
    to show for each option (the option itself when empty); ``note``: a line under the list."""

    title: str
    options: list[str]
    command: str
    highlight: str | None = None
    labels: tuple[str, ...] = ()
    note: str = ""

    def shown(self) -> list[tuple[str, str]]:
        """``(label, option)`` pairs, in order."""
        labels = self.labels if len(self.labels) == len(self.options) else self.options
        return list(zip(labels, self.options, strict=True))


@dataclass
class Reply:
    """What a command says back. ``text`` and ``kind`` are for people (a notice; RPC leaves them out
    of a successful response), ``data`` the response's fields for programs. ``clear_view``: the front
    end empties its conversation before showing the text (``/new``). ``then``: the rest of a slow
    command, a reply to show when it is done (``/compact``)."""

    text: str = ""
    kind: Kind = "info"
    ok: bool = True
    data: dict[str, Any] = field(default_factory=dict)
    pick: Pick | None = None
    clear_view: bool = False
    then: Awaitable[Reply] | None = None

    @property
    def notice(self) -> Notice | None:
        return Notice(self.text, self.kind) if self.text else None

    @classmethod
    def failed(cls, error: CommandError) -> Reply:
        return cls(error.text, error.kind, ok=False)


@dataclass(frozen=True)
class Context:
    host: Host
    front: Frontend
    custom: tuple[Command, ...] = ()  # the workspace's custom commands, offered after the table's


Handler = Callable[[Context, Args], Reply]
PickFn = Callable[[Context], Reply]


UNSET: Any = object()  # an optional argument's default when none is declared
BOOL_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


@dataclass(frozen=True)
class Arg:
    """One argument. ``text``: a non-empty string; ``str``: any string; ``bool``: true or false
    (in a slash line also yes/no, on/off). In a slash line the arguments are words in order, the
    last one taking the rest of the line. ``default``: an optional argument's value when left out
    (else false, "" or None)."""

    name: str
    type: Literal["text", "str", "bool", "object"] = "text"  # object: a JSON object (RPC only)
    required: bool = True
    choices: tuple[str, ...] = ()
    metavar: str = ""
    default: Any = UNSET

    def check(self, value: Any) -> Any:
        if value is None:
            if self.required:
                raise CommandError(self._expected())
            if self.default is not UNSET:
                return self.default
            return False if self.type == "bool" else ("" if not self.choices else None)
        if self.choices:
            if value not in self.choices:
                raise CommandError(self._expected())
        elif self.type == "bool":
            if not isinstance(value, bool):
                raise CommandError(self._expected())
        elif self.type == "object":
            if not isinstance(value, dict):
                raise CommandError(f"'{self.name}' must be an object")
        elif not isinstance(value, str) or (self.type == "text" and not value.strip()):
            raise CommandError(self._expected())
        return value

    def _expected(self) -> str:
        if self.choices:
            quoted = [f'"{c}"' for c in self.choices]
            return f"'{self.name}' must be {', '.join(quoted[:-1])} or {quoted[-1]}"
        if self.type == "bool":
            return f"'{self.name}' must be true or false"
        return f"'{self.name}' must be a {'non-empty ' if self.type == 'text' else ''}string"

    @property
    def shown(self) -> str:
        return self.metavar or self.name.upper()

    def field_doc(self) -> str:
        """How docs/rpc.md lists it: `name` or `name?`, its choices, (bool)."""
        doc = f"`{self.name}{'' if self.required else '?'}`"
        if self.choices:
            doc += ": " + "\\|".join(f"`{c}`" for c in self.choices)
        elif self.type == "bool":
            doc += " (bool)"
        return doc


@dataclass(frozen=True)
class Command:
    """One command, declared once. ``slash``: its name after ``/`` in the TUI and plain mode;
    ``rpc``: its name in RPC mode (either may be None). ``run`` does it. ``pick``: what a slash
    command offers when its first argument is left out (a picker). ``needs``: a front-end
    capability without which it is not offered. ``doc``: the RPC table's "effect and response"."""

    help: str
    run: Handler
    slash: str | None = None
    rpc: str | None = None
    args: tuple[Arg, ...] = ()
    pick: PickFn | None = None
    needs: str | None = None
    doc: str = ""

    @property
    def name(self) -> str:
        name = self.slash or self.rpc
        assert name is not None
        return name

    @property
    def usage(self) -> str:
        """``[TOOL [reason]]``: every argument optional after a slash (a missing one is picked)."""
        out = ""
        for arg in reversed(self.args):
            out = f"[{arg.shown}{' ' + out if out else ''}]"
        return out

    def listing(self) -> dict[str, Any]:
        """How RPC's ``get_commands`` lists a slash command (a custom one says where it comes from)."""
        out: dict[str, Any] = {"name": self.name, "description": self.help, "source": "builtin"}
        if self.usage:
            out["argument_hint"] = self.usage
        return out

    def offered_by(self, front: Frontend) -> bool:
        return self.needs is None or self.needs in front.capabilities

    def bind(self, fields: Args) -> dict[str, Any]:
        """Check RPC fields (or bound slash words) against the arguments, in order."""
        return {arg.name: arg.check(fields.get(arg.name)) for arg in self.args}

    def words(self, rest: str) -> dict[str, Any]:
        """A slash line's text after the name, as arguments: one word each, the last takes the rest
        (a bool argument's yes/no word becomes true/false)."""
        values: dict[str, Any] = {}
        rest = rest.strip()
        for i, arg in enumerate(self.args):
            if not rest:
                break
            if i == len(self.args) - 1:
                word, rest = rest, ""
            else:
                word, _, rest = rest.partition(" ")
                rest = rest.strip()
            values[arg.name] = BOOL_WORDS.get(word.lower(), word) if arg.type == "bool" else word
        return values


def split_slash(text: str) -> tuple[str, str] | None:
    """``"/require bash  why"`` -> ``("require", "bash  why")``; None when it is not a command
    (``//`` starts a literal ``/``)."""
    text = text.strip()
    if not text.startswith("/") or text.startswith("//"):
        return None
    name, _, rest = text[1:].partition(" ")
    return name.lower(), rest.strip()


def literal(text: str) -> str:
    """Text sent as a message: a leading ``//`` stands for ``/``."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


def help_lines(commands: list[Command], title: str = "Commands:") -> str:
    lines = [title]
    lines += [f"  /{c.slash} {c.usage}".rstrip().ljust(34) + c.help for c in commands]
    return "\n".join(lines)


def rpc_table(commands: list[Command]) -> str:
    """docs/rpc.md's command table."""
    rows = ["| command | fields | effect and response |", "| --- | --- | --- |"]
    for c in commands:
        fields_doc = ", ".join(a.field_doc() for a in c.args)
        rows.append(f"| `{c.rpc}` | {fields_doc}{' ' if fields_doc else ''}| {c.doc or c.help} |")
    return "\n".join(rows)
