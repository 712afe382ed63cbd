"""Plain mode (``owltui --plain``): a prompt-toolkit REPL for terminals where a full-screen app is
unwelcome. Same agent and commands: Enter sends a prompt when idle and steering while the answer
streams (output is printed above the prompt through ``patch_stdout``); Alt+Enter (Esc then Enter)
or ``/followup TEXT`` queues a follow-up; Ctrl+C aborts a run; Ctrl+D quits (and prints how to resume
the session); every slash command but /theme. An approval is printed whole (``approval.plain_lines``)
after what it is about (an edit's diff, a write's first lines: the ``call_preview`` lines the TUI's
tool block shows; each once), and answered only by ``/allow``, ``/always`` or ``/deny`` (optionally
followed by the call id): a typed line such as ``y`` or ``actually, no`` is a message, never an answer.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from owltui.agent import events as ev
from owltui.agent.todo import item_line, saved_list
from owltui.session.approvals import attach_reviewer
from owltui.session.commands.host import Host, LineFront
from owltui.session.commands.layer import Commands
from owltui.session.commands.spec import Reply, literal
from owltui.session.describe import Notice, describe
from owltui.session.stats import RunStats
from owltui.ui.approval import answer_approval, build_view, parse_answer, plain_lines
from owltui.ui.call_preview import preview_lines
from owltui.ui.text import StreamCleaner, clean, summarize_args

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession

    from owltui.session.runtime.options import Options

Write = Callable[[str], None]


class PlainPrinter:
    """Turns events into lines. Assistant text is printed a line at a time (a partial line printed
    above a live prompt would be broken by the prompt's redraw). Notices are worded by ``describe``."""

    def __init__(
        self,
        write: Write,
        stats: RunStats | None = None,
        pending: Callable[[str], Any] | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.write = write
        self.stats = stats
        self.pending = pending or (lambda _call_id: None)  # call id -> the broker's Pending
        self.workspace = workspace  # what an approval's relative paths are taken from
        self._line = ""
        self._cleaner = StreamCleaner()
        self._tool_lines: dict[str, str] = {}
        self._previewed: set[str] = set()  # calls whose diff (or write start) was printed
        self._todo_shown: list[ev.TodoItem] = []  # the todo list last printed
        self._steps: dict[type[ev.Event], Callable[[Any], None]] = {
            ev.MessageDelta: self._delta,
            ev.MessageEnd: self._message_end,
            ev.InputEvent: self._input,
            ev.ToolStart: self._tool_start,
            ev.ToolUpdate: self._tool_update,
            ev.ToolEnd: self._tool_end,
            ev.ApprovalRequest: self._approval_request,
            ev.PlanProposed: self._plan,
            ev.AgentEnd: self._agent_end,
            ev.HookEnd: self._describe,
            ev.TodoEvent: self._todo,
            **dict.fromkeys((ev.CompactionStart, ev.Compaction, ev.CompactionFailed), self._describe),
            **dict.fromkeys(
                (ev.RequirementEvent, ev.Retry, ev.JobStarted, ev.JobFinished, ev.Paused, ev.Resumed),
                self._describe,
            ),
        }

    def _text(self, fragment: str) -> None:
        self._line += self._cleaner.feed(fragment)
        while "\n" in self._line:
            line, self._line = self._line.split("\n", 1)
            self.write(line)
        if len(self._line) > 160:  # a very long line without breaks: print up to the last space
            cut = self._line.rfind(" ", 0, 160)
            cut = cut if cut > 0 else 160
            self.write(self._line[:cut])
            self._line = self._line[cut:].lstrip(" ")

    def flush(self) -> None:
        self._line += self._cleaner.close()
        if self._line:
            self.write(self._line)
            self._line = ""

    def notice(self, notice: Notice | None) -> None:
        """One line after ``·`` (``!`` for an error); a text of several lines is printed as it is."""
        if notice is None:
            return
        text = clean(notice.text)
        self.write(text if "\n" in text else f"{'!' if notice.kind == 'error' else '·'} {text}")

    def __call__(self, e: ev.Event) -> None:
        if e.agent is not None:
            return
        step = self._steps.get(type(e))
        if step is not None:
            step(e)

    def _delta(self, e: ev.MessageDelta) -> None:
        if e.text:
            self._text(e.text)

    def _message_end(self, e: ev.MessageEnd) -> None:
        self.flush()
        self.notice(describe(e))

    def _input(self, e: ev.InputEvent) -> None:
        if e.lane != "user":
            self.write(f"[{e.lane.replace('_', '-')}] {clean(e.text)}")

    def _todo(self, e: ev.TodoEvent) -> None:
        """The whole list, each time it changes: a heading, then one line per item."""
        if e.items == self._todo_shown:
            return
        self._todo_shown = list(e.items)
        self.flush()
        done = sum(1 for item in e.items if item.status == "done")
        self.write(f"· todo {done}/{len(e.items)}")
        for item in e.items:
            self.write(f"  {clean(item_line(item))}")

    def _tool_start(self, e: ev.ToolStart) -> None:
        self.flush()
        self.write(f"⏺ {e.name} {summarize_args(e.name, e.arguments)}")

    def _tool_update(self, e: ev.ToolUpdate) -> None:
        buf = self._tool_lines.get(e.call_id, "") + clean(e.text)
        *lines, rest = buf.split("\n")
        for line in lines:
            self.write(f"  │ {line}")
        self._tool_lines[e.call_id] = rest

    def _tool_end(self, e: ev.ToolEnd) -> None:
        rest = self._tool_lines.pop(e.call_id, "")
        if rest:
            self.write(f"  │ {rest}")
        out = clean(e.output).strip().splitlines()
        tail = f" ({len(out)} lines)" if out else ""
        self.write(f"  {'✓' if e.status == 'ok' else '✗'} {e.name}: {e.status}{tail}")
        if e.status != "ok" and out:
            self.write(f"    {out[0][:200]}")

    def _plan(self, e: ev.PlanProposed) -> None:
        self.flush()
        self.write("  the model's plan:")
        for line in clean(e.plan).splitlines():
            self.write(f"  │ {line}")
        self.write("  /plan-answer accept [MODE] · /plan-answer refine TEXT · /plan-answer reject")

    def _approval_request(self, e: ev.ApprovalRequest) -> None:
        p = self.pending(e.call_id)
        if p is None:
            return  # answered or withdrawn already
        self.flush()
        if e.call_id not in self._previewed:
            self._previewed.add(e.call_id)
            for line in preview_lines(e.name, e.arguments):
                self.write(f"    {line}")
        view = build_view(e.call_id, e.name, e.arguments, p.review, p.reason, workspace=self.workspace)
        for line in plain_lines(view):
            self.write(line)

    def _describe(self, e: ev.Event) -> None:
        self.notice(describe(e))

    def _agent_end(self, e: ev.AgentEnd) -> None:
        self.flush()
        self.notice(describe(e, queued=self.stats.waiting if self.stats is not None else 0))


class PlainFront(LineFront):
    """Plain mode as the command layer sees it (``Frontend``): no themes, no pickers."""

    label = "plain mode"
    abort_key = "Ctrl+C"
    keys_help = (
        "Enter: prompt (steering while a run goes) · Alt+Enter (or Esc, Enter) or /followup TEXT: "
        "a follow-up · Ctrl+C: abort the run · Ctrl+D: quit\n"
        "/allow, /always, /deny [CALL_ID]: answer the oldest waiting approval (or that one); "
        "a typed line is never an answer"
    )


class PlainRepl:
    def __init__(
        self, runtime: Host, *, write: Write | None = None, history_file: Path | None = None
    ) -> None:
        self.runtime = runtime
        self.agent = runtime.agent
        self.front = PlainFront()
        self.write: Write = write or (lambda line: print(line, flush=True))
        self.commands = Commands.with_custom(runtime, self.front, lambda line: self.write(f"! {line}"))
        attach_reviewer(runtime)  # approvals carry the policy's notes and the rules "always" saves
        self.printer = PlainPrinter(
            lambda line: self.write(line), runtime.stats, runtime.approvals.get, runtime.workspace
        )
        self.history_file = history_file
        self._quit_pressed = 0.0
        self._later: list[Awaitable[Reply]] = []
        self._lane = "prompt"  # set to "follow_up" by Alt+Enter for the line being submitted

    @property
    def done(self) -> bool:
        return self.front.done

    def handle(self, text: str, lane: str = "prompt") -> None:
        """One submitted line (``lane``: ``"follow_up"`` when sent with Alt+Enter)."""
        stripped = text.strip()
        answer = parse_answer(stripped)
        if answer is not None:
            self.answer(*answer)
            return
        if not stripped:
            return
        reply = self.commands.slash(stripped)
        if reply is None:
            follow_up = lane == "follow_up"
            reply = self.commands.send(literal(text), "follow_up" if follow_up else "prompt")
            if "queued" in reply.data:
                self.write("· queued as steering")
            elif follow_up and reply.ok and self.agent.running:
                self.write("· queued as a follow-up")
            if self.runtime.approvals.pending():
                self.write(
                    "· that was a message, not an answer: /allow, /always or /deny answers the approval"
                )
        self.show(reply)

    def answer(self, decision: str, call_id: str | None = None) -> None:
        """``/allow``, ``/always``, ``/deny`` [CALL_ID]."""
        self.show(answer_approval(self.commands, self.runtime.approvals.pending(), decision, call_id))

    def show(self, reply: Reply) -> None:
        pick = reply.pick
        if pick is not None and not reply.text:  # (a text that comes with a pick lists the same)
            labels = [label for label, _option in pick.shown()]
            if labels != list(pick.options):
                self.write(f"{pick.title} (/{pick.command} followed by the first word):")
                for label in labels:
                    self.write(f"  {label}")
            else:
                self.write(
                    f"{pick.title}: {', '.join(pick.options)}  (/{pick.command} followed by one of them)"
                )
        self.printer.notice(reply.notice)
        if reply.then is not None:
            self._later.append(reply.then)

    async def finish_commands(self) -> None:
        """Wait for the rest of slow commands (``/compact``) and show their replies."""
        while self._later:
            self.show(await self._later.pop(0))

    def key_bindings(self) -> Any:
        """Alt+Enter (ESC CR: every terminal that sends Alt as Esc, or Esc then Enter) submits the
        line as a follow-up."""
        from prompt_toolkit.key_binding import KeyBindings

        kb = KeyBindings()

        @kb.add("escape", "enter")
        def _follow_up(event: Any) -> None:
            self._lane = "follow_up"
            event.current_buffer.validate_and_handle()

        return kb

    def _prompt_text(self) -> str:
        if self.runtime.gate.paused:
            return "paused> "
        return "steer> " if self.agent.running else "> "

    async def run(self, prompt: str | None = None, *, session: PromptSession[str] | None = None) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        if session is None:
            history: Any = InMemoryHistory()
            if self.history_file is not None:
                self.history_file.parent.mkdir(parents=True, exist_ok=True)
                history = FileHistory(str(self.history_file))
            session = PromptSession(history=history)
        if session.key_bindings is None:
            session.key_bindings = self.key_bindings()
        unsubscribe = self.runtime.emitter.subscribe(self.printer)
        try:
            async with self.runtime:
                with patch_stdout(raw=True):
                    self.write(f"OwlTUI plain mode · {self.runtime.model_label} · /help for commands")
                    if saved := saved_list(self.agent.history.items()):  # a resumed session's list
                        self.printer(ev.TodoEvent(items=saved))
                    if prompt:
                        self.handle(prompt)
                    await self.finish_commands()
                    while not self.done:
                        try:
                            line = await session.prompt_async(self._prompt_text)
                        except KeyboardInterrupt:
                            if self.agent.running:
                                self.agent.abort()
                                continue
                            now = time.monotonic()
                            if now - self._quit_pressed < 2.0:
                                break
                            self._quit_pressed = now
                            self.write("· Ctrl+C again (or Ctrl+D) to quit")
                            continue
                        except EOFError:
                            break
                        lane, self._lane = self._lane, "prompt"
                        self.handle(line, lane)
                        await self.finish_commands()
        finally:
            unsubscribe()
        return 0


def run_plain(options: Options, prompt: str | None = None) -> int:
    """The line-mode REPL (CLI entry). Returns the exit code."""
    from owltui.session.runtime.build import build_runtime

    try:
        runtime = build_runtime(options)
    except Exception as exc:  # one clear sentence, scrubbed of secrets
        from owltui.session.redact import Redactor

        print(f"owltui: {Redactor.from_env(os.environ, [options.base_url]).scrub(str(exc))}", file=sys.stderr)
        return 1
    if runtime.mcp is not None:  # line mode cannot show an MCP server's question: declined
        runtime.mcp.requests.asker = None
    from owltui.session.paths import data_dir

    repl = PlainRepl(runtime, history_file=data_dir(runtime.env) / "plain_history")
    code = anyio.run(repl.run, prompt)
    resume = resume_line(runtime)
    if resume:
        print(resume)
    return code


def resume_line(runtime: Host) -> str | None:
    """What to type to come back to this session (None when nothing was saved)."""
    sid, store = runtime.session_id, runtime.store
    if not sid or store is None or not store.path.exists():
        return None
    return f"Resume this session with: owltui --resume {sid}"
