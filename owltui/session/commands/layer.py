"""The command layer: every slash command and every RPC command, declared once (``table.COMMANDS``)
and run against a typed ``Host`` for a ``Frontend``.

A front end builds one ``Commands(host, front)`` and hands it what the user typed: ``slash(text)``
for a line (None when it is not a command), then ``send(text)`` for a message (``!command`` runs a
shell command, ``@path`` attaches a file), ``rpc(name, fields)`` for an RPC object, ``call(name,
...)`` for a key (Esc is ``abort``, y is ``approve``). Each returns a ``Reply``, errors included;
the front end shows it (a notice, a picker, a response line) and that is all it does.

``Commands(host, front, custom)`` also carries the workspace's custom commands
(``owltui.session.custom_commands``): offered after the table's, typed as ``/NAME args`` like
them, and in RPC as a ``prompt`` whose text is ``/NAME args``.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from owltui.session.commands.host import Frontend, Host
from owltui.session.commands.spec import (
    Command,
    CommandError,
    Context,
    Reply,
    split_slash,
)
from owltui.session.commands.table import COMMANDS, help_text, slash_commands
from owltui.session.input.shell import shell_command, unescape

if TYPE_CHECKING:
    from owltui.session.custom_commands.offer import CustomCommands

__all__ = ["Commands"]

log = logging.getLogger(__name__)

BY_SLASH: dict[str, Command] = {c.slash: c for c in COMMANDS if c.slash is not None}
BY_RPC: dict[str, Command] = {c.rpc: c for c in COMMANDS if c.rpc is not None}
COMMAND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")  # what a command's name looks like


class Commands:
    """One front end's way into the command table."""

    def __init__(self, host: Host, front: Frontend, custom: CustomCommands | None = None) -> None:
        mine = custom.commands if custom is not None else ()
        self.ctx = Context(host, front, mine)
        self.custom: dict[str, Command] = {c.name: c for c in mine}

    @classmethod
    def with_custom(
        cls, host: Host, front: Frontend, say: Callable[[str], None], env: Mapping[str, str] | None = None
    ) -> Commands:
        """For an interactive front end: the workspace's custom commands loaded now, each problem a
        ``say`` line - a file left out, and a file named like a built-in command (the built-in
        stays; the mode goes on, unlike print and RPC mode, which stop)."""
        from owltui.session.custom_commands.offer import load_custom_commands

        found = load_custom_commands(host.workspace, env)
        for line in [*found.errors, *found.warnings]:
            say(line)
        return cls(host, front, found)

    @property
    def slash_list(self) -> list[Command]:
        """The slash commands offered here, in order (completion, the palette, ``/help``)."""
        return slash_commands(self.ctx)

    def help_text(self) -> str:
        return help_text(self.ctx)

    def complete(self, text: str) -> list[Command]:
        """Commands matching a partly typed ``/na`` (nothing once an argument has started)."""
        if not text.startswith("/") or " " in text or "\n" in text:
            return []
        stem = text[1:].lower()
        return [c for c in self.slash_list if c.name.startswith(stem)]

    # ---- running -------------------------------------------------------------------------
    def slash(self, text: str) -> Reply | None:
        """Run a typed ``/command args`` line; None when ``text`` is not a command: it does not start
        with ``/``, or its first word names no command (``/srv/app/notes.txt what is this`` is a
        prompt). A lone ``/word``, or a near miss of a command's name, is an error instead (a typo is
        not sent to the model); ``//`` sends any of them as a prompt."""
        parsed = split_slash(text)
        if parsed is None:
            return None
        name, rest = parsed
        cmd = BY_SLASH.get(name) or self._custom(name)
        if cmd is None:
            return self._unknown(name, rest)
        if not cmd.offered_by(self.ctx.front):
            return Reply(f"/{name} is not available in {self.ctx.front.label} (/help)", "error", ok=False)
        words = cmd.words(rest)
        missing = [a for a in cmd.args if a.required and a.name not in words]
        if missing and cmd.pick is not None and missing[0] is cmd.args[0]:
            return self._guard(cmd, partial(cmd.pick, self.ctx))
        if missing:
            return Reply(f"usage: /{name} {cmd.usage}", "error", ok=False)
        return self._run(cmd, words)

    def _unknown(self, name: str, rest: str) -> Reply | None:
        """An unknown ``/name``: a prompt, unless it looks like a mistyped command."""
        names = [c.name for c in self.slash_list]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.75) if "/" not in name else []
        lone = not rest and COMMAND_WORD.fullmatch(name) is not None
        if not close and not lone:
            return None
        hint = f"did you mean /{close[0]}? " if close else "/help lists them; "
        return Reply(f"unknown command /{name} ({hint}//{name} sends it as a message)", "error", ok=False)

    def rpc(self, name: str, fields: Mapping[str, Any]) -> Reply:
        """Run an RPC command with the fields of its JSON object."""
        cmd = BY_RPC.get(name)
        if cmd is None:
            return Reply(f"unknown command {name!r}; known: {', '.join(BY_RPC)}", "error", ok=False)
        custom = self._custom_prompt(fields) if name == "prompt" else None
        if custom is not None:
            return custom
        return self._run(cmd, fields)

    def custom_named(self, text: object) -> Command | None:
        """The custom command ``text`` (``/NAME args``) names, if any."""
        parsed = split_slash(text) if isinstance(text, str) else None
        return self._custom(parsed[0]) if parsed is not None else None

    def _custom(self, name: str) -> Command | None:
        """A custom command, else an MCP prompt's (``mcp_prompts``: offered once listed)."""
        from owltui.session.custom_commands.mcp_prompts import mcp_commands

        found = self.custom.get(name)
        if found is None and name.startswith("mcp__"):
            found = next((c for c in mcp_commands(self.ctx.host.mcp) if c.slash == name), None)
        return found

    def _custom_prompt(self, fields: Mapping[str, Any]) -> Reply | None:
        """A ``prompt`` whose text is ``/NAME args`` for a custom command runs that command."""
        text = fields.get("text")
        cmd = self.custom_named(text)
        parsed = split_slash(text) if isinstance(text, str) else None
        if cmd is None or parsed is None:
            return None

        def run() -> Reply:
            lane = BY_RPC["prompt"].bind(fields)["as"]
            return cmd.run(self.ctx, {"arguments": parsed[1], "as": lane})

        return self._guard(cmd, run)

    def send(self, text: str, lane: Literal["prompt", "follow_up", "immediate"] = "prompt") -> Reply:
        """A typed message (after ``literal``): a prompt when idle, steering while a run goes; the
        follow-up lane when asked; ``immediate``: steering that skips the running batch's calls not
        yet started (this message only: the steer-now key). ``!command`` runs a shell command
        instead (``shell``; ``!!`` sends a literal ``!``). ``@path`` mentions are attached. The
        reply's ``data`` has ``queued`` and ``queue_id`` unless it started a run (or ran a command:
        ``call_id``)."""
        command = shell_command(text)
        if command is not None:
            if not command:
                return Reply(
                    "usage: !COMMAND runs a shell command (!!text sends text starting with !)",
                    "error",
                    ok=False,
                )
            return self.call("shell", command=command)
        text = unescape(text)
        if lane == "follow_up":
            return self.call("follow_up", text=text)
        return self._run(BY_RPC["prompt"], {"text": text, "as": "steer", "immediate": lane == "immediate"})

    def call(self, name: str, **fields: Any) -> Reply:
        """Run a command by its slash or RPC name (a key, a picker's choice)."""
        cmd = BY_SLASH.get(name) or BY_RPC.get(name) or self._custom(name)
        if cmd is None:
            raise KeyError(f"no command {name!r}")
        return self._run(cmd, fields)

    def _run(self, cmd: Command, fields: Mapping[str, Any]) -> Reply:
        return self._guard(cmd, lambda: cmd.run(self.ctx, cmd.bind(fields)))

    def _guard(self, cmd: Command, fn: Callable[[], Reply]) -> Reply:
        try:
            reply = fn()
        except CommandError as exc:
            return Reply.failed(exc)
        except Exception as exc:  # a bug or an unexpected failure: one sentence, the front end lives on
            log.exception("command %s failed", cmd.name)
            return Reply(f"{cmd.name} failed: {exc}", "error", ok=False)
        return reply
