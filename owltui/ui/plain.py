"""Plain mode (``owltui --plain``): a prompt-toolkit REPL for terminals where a full-screen app is
unwelcome. Same agent and verbs: Enter sends a prompt when idle and steering while the answer streams
(output is printed above the prompt through ``patch_stdout``); Ctrl+C aborts a run; Ctrl+D quits;
/pause, /resume, /require, /model, /sessions, /help, /quit; y / a / n answer an approval.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from owltui.agent import events as ev

from . import commands
from .text import StreamCleaner, clean, format_duration, summarize_args

Write = Callable[[str], None]
PLAIN_COMMANDS = ("pause", "resume", "require", "model", "sessions", "help", "quit")


class PlainPrinter:
    """Turns events into lines. Assistant text is printed a line at a time (a partial line printed
    above a live prompt would be broken by the prompt's redraw)."""

    def __init__(self, write: Write) -> None:
        self.write = write
        self._line = ""
        self._cleaner = StreamCleaner()
        self._tool_lines: dict[str, str] = {}

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

    def __call__(self, e: ev.Event) -> None:
        if e.agent is not None:
            return
        if isinstance(e, ev.MessageDelta):
            if e.text:
                self._text(e.text)
        elif isinstance(e, ev.MessageEnd):
            self.flush()
            if e.error:
                self.write(f"! model error: {clean(e.error)}")
        elif isinstance(e, ev.InputEvent):
            if e.lane != "user":
                self.write(f"[{e.lane.replace('_', '-')}] {clean(e.text)}")
        elif isinstance(e, ev.ToolStart):
            self.flush()
            self.write(f"⏺ {e.name} {summarize_args(e.name, e.arguments)}")
        elif isinstance(e, ev.ToolUpdate):
            buf = self._tool_lines.get(e.call_id, "") + clean(e.text)
            *lines, rest = buf.split("\n")
            for line in lines:
                self.write(f"  │ {line}")
            self._tool_lines[e.call_id] = rest
        elif isinstance(e, ev.ToolEnd):
            rest = self._tool_lines.pop(e.call_id, "")
            if rest:
                self.write(f"  │ {rest}")
            out = clean(e.output).strip().splitlines()
            tail = f" ({len(out)} lines)" if out else ""
            self.write(f"  {'✓' if e.status == 'ok' else '✗'} {e.name}: {e.status}{tail}")
            if e.status != "ok" and out:
                self.write(f"    {out[0][:200]}")
        elif isinstance(e, ev.ApprovalRequest):
            self.flush()
            self.write(f"? allow {e.name} {summarize_args(e.name, e.arguments)} — "
                       "type y (allow once), a (always) or n (deny), then Enter")
        elif isinstance(e, ev.RequirementEvent):
            what = "reminded" if e.escalation == 0 else f"escalation {e.escalation}/3, forcing"
            self.write(f"· requirement: {what} `{e.tool}`")
        elif isinstance(e, ev.Retry):
            self.write(f"· retrying in {e.delay_s:.1f} s (attempt {e.attempt}): {e.reason}")
        elif isinstance(e, ev.JobStarted):
            self.write(f"· job {e.job_id} started: {e.command}")
        elif isinstance(e, ev.JobFinished):
            self.write(f"· job {e.job_id} finished (exit {e.exit_code})")
        elif isinstance(e, ev.AgentEnd):
            self.flush()
            if e.reason == "aborted":
                self.write("· aborted")
            elif e.reason == "error":
                self.write(f"! error: {clean(e.error or 'the run failed')}")
            elif e.reason != "done":
                self.write(f"· stopped: {e.reason.replace('_', ' ')}")


class PlainRepl:
    def __init__(self, runtime: Any, *, write: Write | None = None, history_file: Path | None = None) -> None:
        self.runtime = runtime
        self.agent = runtime.agent
        self.write: Write = write or (lambda line: print(line, flush=True))
        self.printer = PlainPrinter(lambda line: self.write(line))
        self.history_file = history_file
        self.done = False
        self._quit_pressed = 0.0

    def _on_gate(self, paused: bool, seconds: float | None) -> None:
        if paused:
            self.write("· paused: agents park before their next model call or tool start")
        else:
            self.write(f"· resumed after {format_duration(seconds or 0.0)}")

    def _approvals(self) -> list[Any]:
        broker = getattr(self.runtime, "approvals", None)
        return list(broker.pending()) if broker is not None else []

    def handle(self, text: str) -> None:
        """One submitted line."""
        stripped = text.strip()
        pending = self._approvals()
        if pending and stripped.lower() in ("y", "a", "n", "yes", "always", "no"):
            decision = {"y": "allow", "a": "always", "n": "deny"}[stripped.lower()[0]]
            self.runtime.approvals.answer(pending[0].call_id, decision)
            if decision == "always":
                self.write(f"· always allowed: {pending[0].name} saved as a permission rule")
            return
        if not stripped:
            return
        parsed = commands.parse(stripped)
        if parsed is not None:
            self.command(*parsed)
            return
        if stripped.startswith("//"):
            text = text.lstrip()[1:]
        if self.agent.running or not self.agent.prompt(text):
            self.agent.steer(text)
            self.write("· queued as steering")

    def command(self, name: str, arg: str) -> None:
        rt = self.runtime
        if name == "pause":
            if not rt.gate.pause():
                self.write("· already paused")
        elif name == "resume":
            if rt.gate.resume() is None:
                self.write("· not paused")
        elif name == "require":
            names = rt.tool_names()
            tool, _, reason = arg.partition(" ")
            if not tool:
                self.write("tools: " + ", ".join(names) + "  (/require TOOL [reason])")
            elif tool not in names:
                self.write(f"! unknown tool `{tool}`; tools: {', '.join(names)}")
            else:
                rt.requirement.set(tool, reason.strip())
                self.write(f"· the next turn must call `{tool}`")
        elif name == "model":
            if arg and hasattr(rt, "set_model"):
                try:
                    rt.set_model(arg)
                except Exception as exc:
                    self.write(f"! cannot switch model: {exc}")
                    return
            self.write(f"· model: {rt.model_label}")
        elif name == "sessions":
            self.write(f"· current session: {getattr(rt, 'session_id', None) or '(not saved)'}")
        elif name == "help":
            self.write("\n".join(line for line in commands.help_text().splitlines()
                                 if not line.startswith("  /") or line.split()[0][1:] in PLAIN_COMMANDS))
            self.write("Enter: prompt (steering while a run goes) · Ctrl+C: abort the run · Ctrl+D: quit")
        elif name == "quit":
            self.done = True
        else:
            self.write(f"! /{name} is not available in plain mode (/help)")

    def _prompt_text(self) -> str:
        if self.runtime.gate.paused:
            return "paused> "
        return "steer> " if self.agent.running else "> "

    async def run(self, prompt: str | None = None, *, session: Any = None) -> int:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        if session is None:
            history: Any = InMemoryHistory()
            if self.history_file is not None:
                self.history_file.parent.mkdir(parents=True, exist_ok=True)
                history = FileHistory(str(self.history_file))
            session = PromptSession(history=history)
        unsubscribe = self.runtime.emitter.subscribe(self.printer)
        unsubscribe_gate = self.runtime.gate.subscribe(self._on_gate)
        try:
            async with self.runtime:
                with patch_stdout(raw=True):
                    self.write(f"OwlTUI plain mode · {self.runtime.model_label} · /help for commands")
                    if prompt:
                        self.handle(prompt)
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
                        self.handle(line)
        finally:
            unsubscribe()
            unsubscribe_gate()
        return 0


def run_plain(options: Any, prompt: str | None = None) -> int:
    """The line-mode REPL (CLI entry). Returns the exit code."""
    from owltui.session.runtime import build_runtime

    try:
        runtime = build_runtime(options)
    except Exception as exc:
        print(f"owltui: {exc}", file=sys.stderr)
        return 1
    history = None
    try:
        from owltui.session.paths import data_dir

        history = Path(data_dir(getattr(runtime, "env", None))) / "plain_history"
    except Exception:  # no data dir helper: keep history in memory
        history = None
    repl = PlainRepl(runtime, history_file=history)
    return anyio.run(repl.run, prompt)
