"""One ACP session: its runtime (built for the session's cwd, the command line's options as
defaults), its ``Commands`` with the workspace's custom commands, the event subscription feeding
``Updates``, and the one ordered sender that writes what the session says to the client.

Every event goes through ``Updates`` synchronously, as it is emitted, and what comes out is put on
the session's queue in order; one task drains the queue (``session/update`` notifications and
``_owltui/*`` extension notifications), so updates keep their order and a prompt is answered only
after its last update: the answer travels on the same queue (``Answer``). The queue opens when the
``session/new`` response has been written (``open``), so ``available_commands_update`` follows it.

Prompting (``prompt``), cancelling (``cancel``) and the queue of outstanding prompts are here;
what a prompt's blocks say is ``prompting``. A prompt sent while a plan waits for its answer (and
not as a follow-up) is that plan's ``refine``: its text goes back to the model, which stays in plan
mode, and the prompt is answered when the run ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import anyio
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    TextContentBlock,
    UnstructuredCommandInput,
)
from anyio.abc import TaskGroup

from owltui.agent.events import Event
from owltui.agent.inbox import NotQueued, Queued
from owltui.agent.messages import UserMessage
from owltui.modes.acp.config_options import config_options
from owltui.modes.acp.permissions import Permissions
from owltui.modes.acp.plans import PlanQuestions
from owltui.modes.acp.prompting import Prompts, Waiting, lane_of, prompt_text
from owltui.modes.acp.updates import Notice, Updates
from owltui.modes.event_text import wire_event
from owltui.session.commands.host import LineFront
from owltui.session.commands.layer import Commands
from owltui.session.commands.spec import Reply
from owltui.session.runtime.runtime import Runtime

ABORTED_REASONS = {"cancelled"}


class AcpFront(LineFront):
    """ACP as the command layer sees it (``Frontend``)."""

    label = "ACP"
    abort_key = "the client's stop button (session/cancel)"


@dataclass
class Answer:
    """Answer these prompts with ``reason`` once everything queued before has been sent."""

    prompts: list[Waiting]
    reason: str
    after: anyio.Event | None = None  # answer only once this is set (the run has stopped)


Item = Any  # an acp.schema session update, a Notice or an Answer


def _text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


class AcpSession:
    """One session of the connection; ``run`` holds the runtime open until ``close``."""

    def __init__(
        self,
        conn: Client,
        runtime: Runtime,
        commands: Commands,
        *,
        terminal_output: bool = False,
        boolean_options: bool = False,
    ) -> None:
        self.conn = conn
        self.boolean_options = boolean_options
        self.runtime = runtime
        self.commands = commands
        assert runtime.session_id is not None
        self.session_id: str = runtime.session_id
        self.updates = Updates(
            runtime.workspace,
            terminal_output=terminal_output,
            context_window=lambda: runtime.agent.config.context_window,
            options=lambda: config_options(runtime, boolean=boolean_options),
        )
        self.prompts = Prompts()
        self.cancelling = False
        self.cancels = 0  # session/cancel notifications seen
        self.shells: dict[str, anyio.Event] = {}  # `!command`s typed as prompts, until their tool_end
        self.settled = anyio.Event()
        self.settled.set()
        self.ready = anyio.Event()  # the runtime is started
        self.usable = anyio.Event()  # the start-up questions are answered: prompts may run
        self.opened = anyio.Event()
        self.closed = anyio.Event()
        self._prompts_awaited = False  # a second commands update waits for the MCP prompt lists
        self.finished = anyio.Event()
        self.stopped = anyio.Event()  # the current run has stopped (set again for each run)
        self.stopped.set()
        self._send, self._receive = anyio.create_memory_object_stream[Item](math.inf)
        self._tg: TaskGroup | None = None
        self.permissions: Permissions | None = None
        self._unsubscribe: list[Callable[[], None]] = []

    # ---- the lifetime ----------------------------------------------------------------------------
    async def run(self, *, startup: Callable[[], Coroutine[Any, Any, None]] | None = None) -> None:
        """Start the runtime, serve until ``close``, then close the runtime."""
        try:
            async with self.runtime, anyio.create_task_group() as tg:
                self._tg = tg
                self.permissions = Permissions(
                    self.conn, self.session_id, self.commands, self.runtime.approvals, self.spawn, self.drain
                )
                self._unsubscribe += [
                    self.runtime.emitter.subscribe(self._on_event),
                    self.runtime.inbox.subscribe(self._on_inbox),
                    self.permissions.close,
                ]
                if self.runtime.plans is not None:
                    plans = PlanQuestions(
                        self.conn, self.session_id, self.commands, self.runtime.plans, self.spawn, self.drain
                    )
                    self._unsubscribe.append(plans.close)
                self.runtime.agent.on_running(self._on_running)
                tg.start_soon(self._sender)
                self.ready.set()
                if startup is not None:
                    await self.opened.wait()
                    await startup()
                self.usable.set()
                await self.closed.wait()
                self.runtime.agent.abort()
                await self.runtime.agent.wait_idle()
                self._answer_all("cancelled")
                with anyio.move_on_after(5):  # a client that stopped reading cannot hold the exit
                    await self.drain()
                tg.cancel_scope.cancel()
        finally:
            for fn in self._unsubscribe:
                fn()
            self.ready.set()
            self.usable.set()
            self.finished.set()

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, Any]]) -> None:
        if self._tg is not None:
            self._tg.start_soon(fn)

    def open(self) -> None:
        """The ``session/new`` (or ``session/load``) response is out: send what waited for it."""
        if not self.opened.is_set():
            self.opened.set()

    def close(self) -> None:
        self.closed.set()

    # ---- sending, in order -----------------------------------------------------------------------
    def put(self, item: Item) -> None:
        try:
            self._send.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            if isinstance(item, Answer):
                for w in item.prompts:
                    w.answer(item.reason)

    async def _sender(self) -> None:
        await self.opened.wait()
        async with self._receive:
            async for item in self._receive:
                if isinstance(item, Answer):
                    if item.after is not None:
                        await item.after.wait()
                    for w in item.prompts:
                        w.answer(item.reason)
                    continue
                try:
                    if isinstance(item, Notice):
                        params = {"sessionId": self.session_id, **item.params}
                        await self.conn.ext_notification(item.method.removeprefix("_"), params)
                    else:
                        await self.conn.session_update(session_id=self.session_id, update=item)
                except Exception:  # the client is gone; the answers still settle
                    continue

    async def drain(self) -> None:
        """Wait until everything put so far has been sent."""
        marker = Waiting()
        self.put(Answer([marker], "end_turn"))
        await marker.done.wait()

    def send_commands(self) -> None:
        listed: list[AvailableCommand] = []
        for c in self.commands.slash_list:
            hint = AvailableCommandInput(UnstructuredCommandInput(hint=c.usage)) if c.usage else None
            listed.append(AvailableCommand(name=c.name, description=c.help, input=hint))
        self.put(
            AvailableCommandsUpdate(session_update="available_commands_update", available_commands=listed)
        )
        mcp = self.runtime.mcp
        if mcp is not None and not self._prompts_awaited:  # MCP prompts join once their servers list them
            self._prompts_awaited = True
            from owltui.tools.mcp.catalog.index import catalog_of

            gathered = catalog_of(mcp).gathered

            async def again() -> None:
                await gathered.wait()
                self.send_commands()

            self.spawn(again)

    def config_options(self) -> list[Any]:
        """The options, as a response gives them (later changes are told against these)."""
        options = config_options(self.runtime, boolean=self.boolean_options)
        self.updates.options_shown(options)
        return options

    def options_changed(self) -> None:
        """Send ``config_option_update`` when an option changed other than by ``set_config_option``."""
        for item in self.updates.options_changed():
            self.put(item)

    # ---- what the runtime says -------------------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        data = wire_event(event)
        for item in self.updates.event(data):
            self.put(item)
        if data.get("type") == "tool_end" and data.get("call_id") in self.shells:
            self.shells.pop(data["call_id"]).set()
        if data.get("type") == "agent_end" and data.get("agent") is None:
            self._run_ended(data.get("reason") == "done")

    def _run_ended(self, done_normally: bool) -> None:
        """The run ended: its prompts are answered; prompts still queued wait for the next run,
        which starts only after a normal end (else they are answered too)."""
        reason = "cancelled" if self.cancelling else (self.updates.stop_reason() or "end_turn")
        if done_normally and not self.cancelling:
            done = self.prompts.ending(self._is_queued)
        else:
            done = self.prompts.ending(lambda _qid: False)
        self.put(Answer(done, reason, after=self.stopped))  # answered once the agent is idle
        self.cancelling = False
        self.settled.set()

    def _on_running(self, running: bool) -> None:
        if running and self.stopped.is_set():
            self.stopped = anyio.Event()
        elif not running:
            self.stopped.set()

    def _is_queued(self, qid: str) -> bool:
        try:
            self.runtime.inbox.get(qid)
        except NotQueued:
            return False
        return True

    def _on_inbox(self, action: str, lane: str, item: Queued | None) -> None:
        if action == "take":
            done = self.prompts.delivered(self._is_queued)
            if done:
                self.put(Answer(done, "end_turn"))
        elif action in ("remove", "pop", "clear") and not self.cancelling:
            for qid in self.prompts.queued_ids():
                if not self._is_queued(qid):
                    w = self.prompts.withdrawn(qid)
                    if w is not None:
                        self.put(Answer([w], "cancelled"))
        for out in self.updates.queue(cast(Mapping[str, Any], self.runtime.inbox.snapshot())):
            self.put(out)

    def _answer_all(self, reason: str) -> None:
        done = self.prompts.ending(lambda _qid: False)
        if done:
            self.put(Answer(done, reason))

    # ---- prompting -------------------------------------------------------------------------------
    async def prompt(self, blocks: Sequence[Any], meta: dict[str, Any] | None) -> str:
        """Run one ``session/prompt``; its stop reason."""
        self.open()  # the client knows the session: the session/new answer is out
        await self.usable.wait()
        if self.closed.is_set() or self.finished.is_set():
            return "cancelled"
        agent = self.runtime.agent
        while self.cancelling:  # a cancel is settling: this prompt is a new one, after it
            await self.settled.wait()
            await agent.wait_idle()
        read_filter = agent.config.services.read_filter
        said = prompt_text(blocks, self.runtime.workspace, read_filter)
        typed = said.typed.strip()
        if typed.startswith("//"):  # a message starting with "/"
            said.typed = said.typed.lstrip()[1:]
        if not said.blocks and typed.startswith(("/", "!")) and not typed.startswith("//"):
            was_running = agent.running
            reply = self.commands.slash(typed) if typed.startswith("/") else self.commands.send(typed)
            if reply is not None:
                return await self._command(reply, started=agent.running and not was_running)
        message, text, notes = said.message(self.runtime.workspace, read_filter, agent.config.services.images)
        for note in notes:
            self.put(_text(f"({note})\n"))
        if not text.strip():
            return "end_turn"
        plan = self.runtime.plans.oldest() if self.runtime.plans is not None else None
        if plan is not None and agent.running and lane_of(meta) != "follow_up":
            waiting = self.prompts.add()
            if self.commands.call("plan_answer", call_id=plan.call_id, decision="refine", text=text).ok:
                await waiting.done.wait()
                return waiting.reason or "end_turn"
            self.prompts.drop(waiting)
        if not agent.running:
            waiting = self.prompts.add()
            if agent.prompt(message):
                await waiting.done.wait()
                return waiting.reason or "end_turn"
            self.prompts.drop(waiting)
        lane = lane_of(meta)
        queue_lane = "steer" if lane == "immediate" else lane
        if isinstance(message, UserMessage):  # the images go with it, in the lane it is queued in
            message = message.model_copy(update={"lane": queue_lane})
        item = self.runtime.inbox.push(
            queue_lane,  # type: ignore[arg-type]
            message,
            immediate=lane == "immediate",
        )
        waiting = self.prompts.add(item.id)
        await waiting.done.wait()
        return waiting.reason or "end_turn"

    async def _command(self, reply: Reply, *, started: bool) -> str:
        """A slash command (or ``!command``) typed as a prompt: its reply as the agent's message; a
        command that started a run (a custom command, ``/skill``) is answered when the run ends."""
        waiting = self.prompts.add() if started else None
        cancels = self.cancels
        call_id = reply.data.get("call_id")
        shell = self.shells.setdefault(call_id, anyio.Event()) if isinstance(call_id, str) else None
        if reply.then is not None:
            first = reply.text
            reply = await reply.then
            if first and not reply.text:
                reply.text = first
        text = reply.text
        if reply.pick is not None:
            lines = [f"{reply.pick.title}:"]
            lines += [f"  /{reply.pick.command} {option}   {label}" for label, option in reply.pick.shown()]
            text = "\n".join([t for t in (text, *lines) if t])
        if text:
            self.put(_text(text if reply.ok else f"error: {text}"))
        self.options_changed()
        if shell is not None and reply.then is None:  # it runs in the background: wait for its end
            await shell.wait()
        if waiting is not None:
            await waiting.done.wait()
            return waiting.reason or "end_turn"
        await self.drain()
        return "cancelled" if self.cancels != cancels else "end_turn"

    # ---- cancelling ------------------------------------------------------------------------------
    def cancel(self) -> None:
        """``session/cancel``: the run aborted as Esc aborts it (processes killed, approvals
        withdrawn); every outstanding prompt is answered ``cancelled`` after the run's last update."""
        self.cancels += 1
        queued = self.prompts.queued_ids()
        agent = self.runtime.agent
        if agent.running or self.prompts.waiting:
            self.cancelling = True
            self.settled = anyio.Event()
        for w in self.prompts.waiting:
            w.queue_id = None  # answered with the run's end, not as withdrawn
        for qid in queued:
            try:
                self.runtime.inbox.remove(qid)
            except NotQueued:
                pass
        reply = self.commands.call("abort")
        if not reply.data.get("aborted") or not agent.running:
            if self.cancelling and not agent.running:
                self._answer_all("cancelled")
                self.cancelling = False
                self.settled.set()
