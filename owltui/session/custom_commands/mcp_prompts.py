"""MCP prompts as slash commands, ``/mcp__SERVER__PROMPT args`` (``owltui.tools.mcp.catalog``), and
messages whose ``@server:uri`` mentions wait for a resource read.

A prompt command is offered once its server connected and listed its prompts (``mcp_commands``:
``/help``, completion, RPC's ``get_commands``, ACP's command list). Its arguments are bound to the
prompt's declared ones (``catalog.prompts.bind``: key=value or in order; a required one missing is
a usage error at once); ``prompts/get`` runs in the background and its messages go as the user's
turn - a run when idle, else steering - with images for a vision model and embedded resources
inlined. In RPC it is a ``prompt`` whose text is ``/mcp__SERVER__PROMPT args``.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from owltui.agent.cancel import CancelToken
from owltui.agent.inbox import QueueLane
from owltui.agent.messages import ImageRef
from owltui.agent.tool import ToolError
from owltui.session.commands.background import background
from owltui.session.commands.host import Host
from owltui.session.commands.spec import Arg, Args, Command, CommandError, Context, Reply

if TYPE_CHECKING:
    from owltui.tools.mcp.catalog.contents import Rendered
    from owltui.tools.mcp.source import McpSource

_SEQ = itertools.count(1)


def deliver(
    ctx: Context,
    text: str,
    images: tuple[ImageRef, ...],
    lane: QueueLane | None,
    line: str,
    failed: bool = False,
) -> Reply:
    """Send a message made in the background: a run when idle, else queued in ``lane`` (steering
    when none was named: the user sent it while idle)."""
    from owltui.session.input.mention_resources import message

    agent = ctx.host.agent
    if not agent.running and agent.prompt(message(text, images)):
        return Reply(line, "warning" if failed else "info")
    queue: QueueLane = lane or "steer"
    item = ctx.host.inbox.push(queue, message(text, images, queue))
    return Reply(line, "warning" if failed else "info", data={"queued": queue, "queue_id": item.id})


def in_background(ctx: Context, what: str, work: Callable[[], Awaitable[Reply]]) -> Reply:
    """``work`` run off the handler (the host's task group, else the reply's ``then``). What went
    wrong reaches the user as an MCP warning too (a detached reply is seen by no one)."""
    key = f"{what}#{next(_SEQ)}"
    source = ctx.host.mcp

    async def run(_token: CancelToken) -> Reply:
        reply = await work()
        if source is not None and reply.text and (not reply.ok or reply.kind != "info"):
            source.warn(reply.text)
        return reply

    then = background(ctx.host).start(key, run)
    return Reply(data={"pending": what}, then=then)


@dataclass(frozen=True)
class McpPromptCommand(Command):
    """One prompt of one server as ``/mcp__SERVER__PROMPT``."""

    server_name: str = ""
    prompt: Any = None  # mcp_types.Prompt

    @property
    def usage(self) -> str:
        return self.args[0].metavar if self.args else ""

    def listing(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.help, "source": "mcp"}
        if self.usage:
            out["argument_hint"] = self.usage
        return out


async def prompt_turn(host: Host, cmd: McpPromptCommand, typed: str) -> Rendered:
    """The user turn ``/cmd typed`` makes: ``prompts/get`` with the bound arguments, its messages
    rendered (images when the model takes them). CommandError says what went wrong."""
    from owltui.tools.mcp.catalog.contents import render_prompt
    from owltui.tools.mcp.catalog.index import catalog_of
    from owltui.tools.mcp.catalog.live import live
    from owltui.tools.mcp.catalog.prompts import PromptArgsError, bind
    from owltui.tools.mcp.catalog.tools import mcp_call

    try:
        arguments = bind(cmd.prompt, typed)
    except PromptArgsError as exc:
        raise CommandError(f"/{cmd.name}: {exc} (usage: /{cmd.name} {cmd.usage})".rstrip()) from None
    source = host.mcp
    server = catalog_of(source).server(cmd.server_name) if source is not None else None
    if server is None or not server.is_connected():
        raise CommandError(f"/{cmd.name}: the MCP server '{cmd.server_name}' is not connected")
    name = str(cmd.prompt.name)
    try:
        result = await mcp_call(server, f"prompts/get {name}", live(server).get_prompt(name, arguments))
    except ToolError as exc:
        raise CommandError(f"/{cmd.name}: {exc}") from None
    images = host.agent.config.services.images
    rendered = render_prompt(result, images is not None and images.image_refusal() is None, server.name)
    if not rendered.text.strip():
        raise CommandError(f"/{cmd.name}: the prompt has no messages")
    return rendered


def _run_prompt(ctx: Context, cmd: McpPromptCommand, typed: str, lane: QueueLane | None) -> Reply:
    from owltui.tools.mcp.catalog.prompts import PromptArgsError, bind

    try:
        bind(cmd.prompt, typed)  # a usage error now, not in the background
    except PromptArgsError as exc:
        raise CommandError(f"/{cmd.name}: {exc} (usage: /{cmd.name} {cmd.usage})".rstrip()) from None
    from owltui.tools.mcp.catalog.index import catalog_of

    source = ctx.host.mcp
    server = catalog_of(source).server(cmd.server_name) if source is not None else None
    if server is None or not server.is_connected():
        raise CommandError(f"/{cmd.name}: the MCP server '{cmd.server_name}' is not connected")

    async def work() -> Reply:
        try:
            rendered = await prompt_turn(ctx.host, cmd, typed)
        except CommandError as exc:
            return Reply.failed(exc)
        return deliver(ctx, rendered.text, tuple(rendered.images), lane, "")

    return in_background(ctx, f"/{cmd.name}", work)


def _command(server: Any, prompt: Any) -> McpPromptCommand:
    from owltui.tools.mcp.catalog.prompts import command_name, declared, usage

    about = (prompt.description or prompt.title or prompt.name).strip()
    required = any(a.required for a in declared(prompt))

    def run(ctx: Context, a: Args) -> Reply:
        return _run_prompt(ctx, made, a.get("arguments") or "", a.get("as"))

    made = McpPromptCommand(
        f"{about} (MCP server {server.name})",
        run,
        slash=command_name(server.spec.key, prompt.name),
        args=(Arg("arguments", "str", required=required, metavar=usage(prompt)),),
        server_name=server.name,
        prompt=prompt,
    )
    return made


def prompts_help(offered: Sequence[Command]) -> str:
    """``/help``'s section of MCP prompts ("" without any), after a blank line."""
    from owltui.session.commands.spec import help_lines

    prompts: list[Command] = [c for c in offered if isinstance(c, McpPromptCommand)]
    return "\n\n" + help_lines(prompts, "MCP prompts (their messages are sent as yours):") if prompts else ""


def mcp_commands(source: McpSource | None) -> list[Command]:
    """The prompt commands of the connected servers, in the servers' order, each server's by name."""
    if source is None:
        return []
    from owltui.tools.mcp.catalog.index import catalog_of

    catalog = catalog_of(source)
    out: list[Command] = []
    for server in catalog.servers("prompts"):
        listed = catalog.listing(server)
        if listed is not None:
            out += [_command(server, p) for p in sorted(listed.prompts, key=lambda p: str(p.name))]
    return out


async def mcp_turn(host: Host, find: Callable[[str], Command | None], text: str) -> tuple[Any, str] | None:
    """For print mode, which sends one message and waits for its run: once the servers listed what
    they offer, the message an MCP prompt command (``/mcp__SERVER__PROMPT args``) or a text with
    ``@server:uri`` mentions makes, and the line for the user; None for any other text. ``find``:
    the command layer's ``custom_named``. CommandError for a prompt command that cannot run."""
    source = host.mcp
    if source is None or not (text.lstrip().startswith("/mcp__") or "@" in text):
        return None
    from owltui.session.input.mention_resources import message, resource_mentions, with_resources
    from owltui.session.input.mentions import attach_mentions
    from owltui.tools.mcp.catalog.index import catalog_of

    await source.wait_ready()
    await catalog_of(source).gathered.wait()
    cmd = find(text)
    if isinstance(cmd, McpPromptCommand):
        rendered = await prompt_turn(host, cmd, text.lstrip().partition(" ")[2])
        return message(rendered.text, tuple(rendered.images)), ""
    found = resource_mentions(source, text)
    if found is None:
        return None
    sent = attach_mentions(host.agent, text)
    full, images, line, _failed = await with_resources(host.agent, sent, *found)
    return message(full, images), line
