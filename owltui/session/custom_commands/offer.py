"""Custom commands as the command layer's ``Command`` objects, and the set a front end loads at start
(``load_custom_commands``): the workspace's and the user's command files, the warnings about files
left out, and the errors - a file named like a built-in command.

A custom command runs as a prompt: its template with the arguments in it (``template``) goes the
way a typed message goes (``@path`` mentions attached), so it starts a run when idle and is queued
as steering while one goes. One with ``allowed-tools`` or ``model`` changes its own run only, so it
starts no run while another goes (it says so). A template that uses ``$ARGUMENTS`` or ``$1``...
needs arguments when typed (``/NAME`` alone is a usage error; the palette fills the input instead
of running it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from owltui.session.commands.messages import prompt
from owltui.session.commands.spec import Arg, Args, Command, CommandError, Context, Reply
from owltui.session.custom_commands.files import CommandFile, Source, command_dirs, discover, shown_path
from owltui.session.custom_commands.scope import BadRule, ToolRule, for_agent, parse_rules, refusal
from owltui.session.custom_commands.template import expand, takes_arguments


@dataclass(frozen=True)
class CustomCommand(Command):
    """A command file offered as ``/NAME``; ``rules``: its allowed tools (None: every tool)."""

    file: CommandFile | None = None
    rules: tuple[ToolRule, ...] | None = None

    @property
    def usage(self) -> str:
        return self.args[0].metavar if self.args else ""

    @property
    def source(self) -> str:
        return self.file.source if self.file is not None else "project"

    def listing(self) -> dict[str, Any]:
        """How RPC's ``get_commands`` lists it: ``argument_hint`` only when its file gives one."""
        out: dict[str, Any] = {"name": self.name, "description": self.help, "source": self.source}
        if self.file is not None and self.file.fields.argument_hint:
            out["argument_hint"] = self.file.fields.argument_hint
        return out


@dataclass
class CustomCommands:
    """The custom commands of one workspace, with what was wrong with the files left out."""

    commands: tuple[CustomCommand, ...] = ()
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def by_name(self) -> dict[str, CustomCommand]:
        return {c.name: c for c in self.commands}

    def error_line(self) -> str:
        return "; ".join(self.errors)


def _help(file: CommandFile) -> str:
    first = next((ln.strip() for ln in file.template.splitlines() if ln.strip()), "")
    text = file.fields.description.strip() or first[:60]
    where = file.source + ("; over the user's" if file.shadows is not None else "")
    return f"{text} ({where})"


def build(file: CommandFile) -> CustomCommand:
    """The ``Command`` for ``file``; BadRule when its ``allowed-tools`` cannot be read."""
    rules = parse_rules(file.fields.allowed_tools) if file.fields.allowed_tools is not None else None
    hint = file.fields.argument_hint or ("ARGS" if takes_arguments(file.template) else "")

    def run(ctx: Context, a: Args) -> Reply:
        return start(ctx, made, a.get("arguments") or "", a.get("as", "steer"))

    made = CustomCommand(
        _help(file),
        run,
        slash=file.name,
        args=(Arg("arguments", "str", required=takes_arguments(file.template), metavar=hint),),
        file=file,
        rules=rules,
    )
    return made


def start(ctx: Context, cmd: CustomCommand, arguments: str, lane: str | None) -> Reply:
    """Send ``cmd``'s expanded template as a message; its tools and model hold for the run it starts."""
    assert cmd.file is not None
    text = expand(cmd.file.template, arguments)
    fields = {"text": text, "as": lane, "immediate": False}
    agent = ctx.host.agent
    limits = [
        w for w, on in (("allowed-tools", cmd.rules is not None), ("a model", cmd.file.fields.model)) if on
    ]
    if not limits:
        return prompt(ctx, fields)
    if agent.running:
        raise CommandError(
            f"/{cmd.name} sets {' and '.join(limits)} for a run of its own: send it when this run "
            "is over, or abort it first"
        )
    scope = for_agent(agent)
    notes: list[str] = []
    if cmd.rules is not None:
        scope.restrict(refusal(cmd.name, cmd.rules))
        notes.append("tools: " + (", ".join(r.shown for r in cmd.rules) or "none"))
    if cmd.file.fields.model:
        before, cfg = ctx.host.model_label, agent.config
        saved = (cfg.model, cfg.context_window)
        try:
            ctx.host.set_model(cmd.file.fields.model)
        except Exception as exc:
            scope.release()
            raise CommandError(f"/{cmd.name}: model {cmd.file.fields.model!r}: {exc}") from None

        def restore() -> None:
            try:
                ctx.host.set_model(before)  # the label and the session's record follow
            except Exception:  # a model no spec names again (a test double): its object comes back
                pass
            cfg.model, cfg.context_window = saved  # the very model of before

        scope.on_release(restore)
        notes.append(f"model: {ctx.host.model_label}")
    try:
        reply = prompt(ctx, fields)
    except BaseException:
        scope.release()
        raise
    if "queued" in reply.data:  # cannot happen while idle; never leave the settings behind
        scope.release()
    note = f"/{cmd.name} for this run: " + "; ".join(notes)
    reply.text = f"{reply.text}\n{note}" if reply.text else note
    return reply


def load(
    dirs: list[tuple[Path, Source]], builtins: Iterable[str], shown: Path | None = None
) -> CustomCommands:
    found = discover(dirs, shown)
    out = CustomCommands(warnings=list(found.warnings))
    taken = set(builtins)
    made: list[CustomCommand] = []
    for name, file in sorted(found.commands.items()):
        where = shown_path(file.path, shown)
        if name in taken:
            out.errors.append(
                f"the custom command file {where} is named like the built-in command /{name}; rename the file"
            )
            continue
        try:
            made.append(build(file))
        except BadRule as exc:
            out.warnings.append(f"custom command {where} left out: allowed-tools: {exc}")
    out.commands = tuple(made)
    return out


def load_custom_commands(
    workspace: Path, env: Mapping[str, str] | None = None, from_claude: bool | None = None
) -> CustomCommands:
    """The workspace's custom commands; ``from_claude`` None: as config ``hooks_from_claude`` says."""
    from owltui.session.commands.table import COMMANDS
    from owltui.session.paths import config_dir

    env = os.environ if env is None else env
    if from_claude is None:
        from_claude = _from_claude(env)
    dirs = command_dirs(workspace, config_dir(env), env, from_claude)
    return load(list(dirs), (c.slash for c in COMMANDS if c.slash is not None), workspace)


def _from_claude(env: Mapping[str, str]) -> bool:
    from owltui.session.config import ConfigError, load_config

    try:
        config = load_config(env)
    except ConfigError:  # already said by the runtime that read it
        return False
    return config.hooks_from_claude


def load_at_start(
    workspace: Path, env: Mapping[str, str] | None, warn: Callable[[str], None]
) -> CustomCommands:
    """For print and RPC mode: each file left out is a ``warn`` line; a file named like a built-in
    command is a ``ConfigError`` (one line; the mode does not start)."""
    from owltui.session.config import ConfigError

    found = load_custom_commands(workspace, env)
    if found.errors:
        raise ConfigError(found.error_line())
    for line in found.warnings:
        warn(line)
    return found
